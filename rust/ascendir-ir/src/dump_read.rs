//! Reading back the text dump of [`Graph::dump`] (the compiler's per-stage `NN_<stage>.txt`
//! files): node names, types, ids and streams, ports with their descriptors (dtype, shape,
//! format, name), data and control links, graph inputs and outputs, and attributes.
//!
//! The dump is a view, not a serialization, so the graph read back is an approximation: INT,
//! FLOAT, BOOL, STRING, DATA_TYPE and LIST_INT / LIST_FLOAT / LIST_BOOL attributes come back
//! with their kind and value, every other
//! attribute as a STRING holding the dump's text of it (bytes and tensor data are not in the
//! dump); descriptor attributes and subgraphs are not read. A node name holding `", "` is
//! ambiguous in the dump's peer lists and is not read back.

use std::sync::Arc;

use thiserror::Error;

use crate::anchor::{InAnchor, OutAnchor};
use crate::attr::AttrValue;
use crate::attr_map::AttrMap;
use crate::dtype::DataType;
use crate::error::IrError;
use crate::graph::{Graph, NodeId};
use crate::op_desc::{OpDesc, Side, Sym};
use crate::tensor::TensorDesc;

/// A text dump that cannot be read: where (line, byte offset) and why.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DumpTextError {
    /// A line that does not have the dump's layout.
    #[error("line {line}: {message}")]
    Syntax {
        /// The 1-based line.
        line: usize,
        /// The byte offset of the line's start.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// The graph the lines describe cannot be built (a duplicate node, a bad link).
    #[error("line {line}: {source}")]
    Graph {
        /// The 1-based line.
        line: usize,
        /// The byte offset of the line's start.
        offset: usize,
        /// The IR's error.
        #[source]
        source: IrError,
    },
}

impl DumpTextError {
    /// The byte offset of the line at fault.
    pub fn offset(&self) -> usize {
        match self {
            DumpTextError::Syntax { offset, .. } | DumpTextError::Graph { offset, .. } => *offset,
        }
    }
}

/// Where a line is: 1-based number and byte offset.
#[derive(Clone, Copy, Debug)]
struct At {
    line: usize,
    offset: usize,
}

impl At {
    fn err(self, message: impl Into<String>) -> DumpTextError {
        DumpTextError::Syntax {
            line: self.line,
            offset: self.offset,
            message: message.into(),
        }
    }

    fn ir(self, source: IrError) -> DumpTextError {
        DumpTextError::Graph {
            line: self.line,
            offset: self.offset,
            source,
        }
    }
}

/// Whether `text` starts like a text dump (`graph <name> (<n> nodes)`).
pub fn looks_like_dump(text: &str) -> bool {
    let first = text.lines().next().unwrap_or("");
    first.starts_with("graph ") && first.ends_with(" nodes)")
}

/// Split `s` at `", "` outside brackets, braces, parentheses and quoted strings.
fn split_top(s: &str) -> Vec<&str> {
    let bytes = s.as_bytes();
    let (mut depth, mut quoted, mut escaped) = (0i32, false, false);
    let (mut start, mut out) = (0usize, Vec::new());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if quoted {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                quoted = false;
            }
        } else {
            match c {
                b'"' => quoted = true,
                b'[' | b'{' | b'(' => depth += 1,
                b']' | b'}' | b')' => depth -= 1,
                b',' if depth == 0 && bytes.get(i + 1) == Some(&b' ') => {
                    out.push(&s[start..i]);
                    start = i + 2;
                    i += 1;
                }
                _ => {}
            }
        }
        i += 1;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// The text of a Rust debug-quoted string.
fn unquote(s: &str) -> Option<String> {
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' => out.push('\0'),
            'u' => {
                let rest: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let code = u32::from_str_radix(rest.trim_start_matches('{'), 16).ok()?;
                out.push(char::from_u32(code)?);
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// `[a, b]` of parseable items.
fn list<T: std::str::FromStr>(text: &str) -> Option<Vec<T>> {
    let inner = text.strip_prefix('[')?.strip_suffix(']')?;
    inner
        .split(", ")
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().ok())
        .collect()
}

fn attr_value(kind: &str, text: &str) -> AttrValue {
    let parsed = match kind {
        "INT" => text.parse().ok().map(AttrValue::Int),
        "FLOAT" => text.parse().ok().map(AttrValue::Float),
        "BOOL" => text.parse().ok().map(AttrValue::Bool),
        "STRING" => unquote(text).map(AttrValue::String),
        "DATA_TYPE" => DataType::from_name(text).ok().map(AttrValue::DataType),
        "LIST_INT" => list(text).map(AttrValue::ListInt),
        "LIST_FLOAT" => list(text).map(AttrValue::ListFloat),
        "LIST_BOOL" => list(text).map(AttrValue::ListBool),
        _ => None,
    };
    parsed.unwrap_or_else(|| AttrValue::String(text.to_string()))
}

/// `{key:KIND=value, ...}` into `map`.
fn read_attrs(text: &str, map: &mut AttrMap, at: At) -> Result<(), DumpTextError> {
    let inner = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or_else(|| at.err("attributes are not in braces"))?;
    for item in split_top(inner) {
        let (key, rest) = item
            .split_once(':')
            .ok_or_else(|| at.err(format!("attribute '{item}' has no kind")))?;
        let (kind, value) = rest
            .split_once('=')
            .ok_or_else(|| at.err(format!("attribute '{key}' has no value")))?;
        map.insert(key, attr_value(kind, value));
    }
    Ok(())
}

/// `DTYPE[d, d] [FORMAT] [name=N] [{attrs}]`.
fn read_desc(text: &str, at: At) -> Result<TensorDesc, DumpTextError> {
    let (dtype, rest) = text
        .split_once('[')
        .ok_or_else(|| at.err(format!("descriptor '{text}' has no shape")))?;
    let (dims, mut rest) = rest
        .split_once(']')
        .ok_or_else(|| at.err(format!("descriptor '{text}' has an open shape")))?;
    let mut desc = TensorDesc {
        dtype: DataType::from_name(dtype).map_err(|e| at.ir(e))?,
        ..TensorDesc::default()
    };
    desc.shape = dims
        .split(", ")
        .filter(|d| !d.is_empty())
        .map(|d| {
            d.parse::<i64>()
                .map_err(|_| at.err(format!("dimension '{d}' is not an integer")))
        })
        .collect::<Result<_, _>>()?;
    rest = rest.trim_start();
    if !rest.is_empty() && !rest.starts_with("name=") && !rest.starts_with('{') {
        let (fmt, tail) = rest.split_once(' ').unwrap_or((rest, ""));
        desc.format = crate::format::bits::parse_serial_string(fmt);
        rest = tail;
    } else {
        desc.format = crate::format::Format::ND.value();
    }
    if let Some(named) = rest.strip_prefix("name=") {
        let (name, _) = named.split_once(" {").unwrap_or((named, ""));
        desc.name = Some(name.into());
    }
    Ok(desc)
}

/// `name:index` (index `None` for `name:ctrl`).
fn read_peer(text: &str, at: At) -> Result<(&str, Option<usize>), DumpTextError> {
    let (name, index) = text
        .rsplit_once(':')
        .ok_or_else(|| at.err(format!("peer '{text}' has no index")))?;
    if index == "ctrl" {
        return Ok((name, None));
    }
    let index = index
        .parse()
        .map_err(|_| at.err(format!("peer '{text}' has a bad index")))?;
    Ok((name, Some(index)))
}

fn read_list(text: &str, at: At) -> Result<Vec<&str>, DumpTextError> {
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| at.err("list is not in brackets"))?;
    Ok(split_top(inner))
}

/// A link to make once every node exists: `(at, src name, src index, dst, dst index)`.
type PendingLink<'t> = (At, &'t str, Option<usize>, NodeId, Option<usize>);

struct Reader<'t> {
    graph: Graph,
    current: Option<NodeId>,
    links: Vec<PendingLink<'t>>,
    inputs: Vec<(At, &'t str)>,
    outputs: Vec<(At, &'t str)>,
}

impl<'t> Reader<'t> {
    fn node_line(&mut self, rest: &str, at: At) -> Result<(), DumpTextError> {
        let (head, stream) = rest
            .rsplit_once(" stream=")
            .ok_or_else(|| at.err("node line has no stream"))?;
        let (head, id) = head
            .rsplit_once(" id=")
            .ok_or_else(|| at.err("node line has no id"))?;
        let (name, ty) = head
            .rsplit_once(" : ")
            .ok_or_else(|| at.err("node line has no type"))?;
        let mut op = OpDesc::new(name, ty);
        op.id = id
            .parse()
            .map_err(|_| at.err(format!("bad node id '{id}'")))?;
        op.stream_id = stream
            .parse()
            .map_err(|_| at.err(format!("bad stream id '{stream}'")))?;
        let id = self.graph.add_node(op).map_err(|e| at.ir(e))?;
        self.current = Some(id);
        Ok(())
    }

    fn port_line(&mut self, side: Side, rest: &'t str, at: At) -> Result<(), DumpTextError> {
        let node = self
            .current
            .ok_or_else(|| at.err("port line outside a node"))?;
        let rest = rest.trim_start();
        let (_, rest) = rest
            .split_once(' ')
            .ok_or_else(|| at.err("port line has no index"))?;
        let (port, rest) = rest
            .split_once(' ')
            .ok_or_else(|| at.err("port line has no name"))?;
        let sep = if side == Side::Input { " <- " } else { " -> [" };
        let (desc, peer) = rest
            .rsplit_once(sep)
            .ok_or_else(|| at.err("port line has no peer"))?;
        let desc = Arc::new(read_desc(desc, at)?);
        let index = self
            .graph
            .modify_op(node, |op| {
                if !port.is_empty() && op.port_index(side, port).is_some() {
                    return Err(at.err(format!("port '{port}' appears twice")));
                }
                op.push_port(side, Sym::new(port), desc);
                Ok(op.ports(side).len() - 1)
            })
            .map_err(|e| at.ir(e))??;
        if side == Side::Input && peer != "-" {
            let (src, src_index) = read_peer(peer, at)?;
            self.links.push((at, src, src_index, node, Some(index)));
        }
        Ok(())
    }

    fn line(&mut self, line: &'t str, at: At) -> Result<(), DumpTextError> {
        if let Some(rest) = line.strip_prefix("  node ") {
            return self.node_line(rest, at);
        }
        if let Some(rest) = line.strip_prefix("    in ") {
            return self.port_line(Side::Input, rest, at);
        }
        if let Some(rest) = line.strip_prefix("    out ") {
            return self.port_line(Side::Output, rest, at);
        }
        if let Some(rest) = line.strip_prefix("    ctrl in <- ") {
            let node = self
                .current
                .ok_or_else(|| at.err("control line outside a node"))?;
            for peer in read_list(rest, at)? {
                let (src, _) = read_peer(peer, at)?;
                self.links.push((at, src, None, node, None));
            }
            return Ok(());
        }
        if line.starts_with("    ctrl out -> ") || line.starts_with("    subgraphs ") {
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix("    attrs ") {
            let node = self
                .current
                .ok_or_else(|| at.err("attributes outside a node"))?;
            let mut map = AttrMap::default();
            read_attrs(rest, &mut map, at)?;
            return self
                .graph
                .modify_op(node, |op| op.attrs = map)
                .map_err(|e| at.ir(e));
        }
        if let Some(rest) = line.strip_prefix("  attrs ") {
            let mut map = AttrMap::default();
            read_attrs(rest, &mut map, at)?;
            self.graph.attrs = map;
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix("  inputs ") {
            self.inputs = read_list(rest, at)?.into_iter().map(|n| (at, n)).collect();
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix("  outputs ") {
            self.outputs = read_list(rest, at)?.into_iter().map(|n| (at, n)).collect();
            return Ok(());
        }
        Err(at.err(format!("unexpected line '{}'", line.trim())))
    }

    fn find(&self, name: &str, at: At) -> Result<NodeId, DumpTextError> {
        self.graph
            .find(name)
            .ok_or_else(|| at.err(format!("no node named '{name}'")))
    }

    fn finish(mut self) -> Result<Graph, DumpTextError> {
        for &(at, src, si, dst, di) in &self.links {
            let src = self.find(src, at)?;
            let (o, i) = match (si, di) {
                (Some(si), Some(di)) => (OutAnchor::data(src, si), InAnchor::data(dst, di)),
                _ => (OutAnchor::control(src), InAnchor::control(dst)),
            };
            self.graph.link(o, i).map_err(|e| at.ir(e))?;
        }
        let mut ids = Vec::with_capacity(self.inputs.len());
        for &(at, name) in &self.inputs {
            ids.push(self.find(name, at)?);
        }
        self.graph.set_input_nodes(ids).map_err(|e| {
            let at = self
                .inputs
                .first()
                .map_or(At { line: 0, offset: 0 }, |x| x.0);
            at.ir(e)
        })?;
        for &(at, out) in &self.outputs {
            let (name, index) = read_peer(out, at)?;
            let id = self.find(name, at)?;
            let index = index.ok_or_else(|| at.err(format!("output '{out}' is a control")))?;
            let index = i32::try_from(index).map_err(|_| at.err("output index too large"))?;
            self.graph
                .add_output_node(id, index)
                .map_err(|e| at.ir(e))?;
        }
        Ok(self.graph)
    }
}

/// The graph of a text dump (the root graph; see the module documentation for what is read).
pub fn read_dump_text(text: &str) -> Result<Graph, DumpTextError> {
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').enumerate().map(|(i, raw)| {
        let at = At {
            line: i + 1,
            offset,
        };
        offset += raw.len();
        (at, raw.trim_end_matches(['\n', '\r']))
    });
    let (at, first) = lines.next().unwrap_or((At { line: 1, offset: 0 }, ""));
    let head = first
        .strip_prefix("graph ")
        .filter(|_| first.ends_with(" nodes)"))
        .ok_or_else(|| at.err("not a graph text dump (no 'graph <name> (<n> nodes)' line)"))?;
    let (name, _) = head
        .rsplit_once(" (")
        .ok_or_else(|| at.err("graph line has no node count"))?;
    let mut reader = Reader {
        graph: Graph::new(name),
        current: None,
        links: Vec::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
    };
    for (at, line) in lines {
        if line.starts_with("subgraph of ") {
            break;
        }
        if line.trim().is_empty() {
            continue;
        }
        reader.line(line, at)?;
    }
    reader.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Format;

    fn sample() -> Graph {
        let mut g = Graph::new("g one");
        let d = Arc::new(TensorDesc::new(&[1, 4], DataType::FLOAT16, Format::NCHW));
        let mut a = OpDesc::new("a", "Data");
        a.add_output("y", d.clone()).unwrap();
        a.set_attr("index", AttrValue::Int(0));
        let mut b = OpDesc::new("b odd", "Relu");
        b.add_input("x", d.clone());
        b.add_output("y", d.clone()).unwrap();
        b.set_attr("note", AttrValue::String("a \"quoted\", {x}".into()));
        b.set_attr("alpha", AttrValue::Float(0.5));
        b.set_attr("dims", AttrValue::ListInt(vec![1, 2]));
        b.set_attr("blob", AttrValue::Bytes(vec![1u8, 2].into()));
        let mut c = OpDesc::new("c", "NetOutput");
        c.add_input("x", d);
        let (a, b, c) = (
            g.add_node(a).unwrap(),
            g.add_node(b).unwrap(),
            g.add_node(c).unwrap(),
        );
        g.link(OutAnchor::data(a, 0), InAnchor::data(b, 0)).unwrap();
        g.link(OutAnchor::data(b, 0), InAnchor::data(c, 0)).unwrap();
        g.link(OutAnchor::control(a), InAnchor::control(c)).unwrap();
        g.set_input_nodes(vec![a]).unwrap();
        g.add_output_node(b, 0).unwrap();
        g
    }

    #[test]
    fn a_dump_reads_back_to_the_same_dump() {
        let g = sample();
        let text = g.dump();
        assert!(looks_like_dump(&text));
        let back = read_dump_text(&text).unwrap();
        // Kinds the dump does not spell out come back as their text.
        assert_eq!(
            back.dump()
                .replace("blob:STRING=\"bytes[2]\"", "blob:BYTES=bytes[2]"),
            text
        );
        assert_eq!(back.len(), 3);
        let b = back.find("b odd").unwrap();
        let op = back.op(b).unwrap();
        assert_eq!(
            op.attr("note"),
            Some(&AttrValue::String("a \"quoted\", {x}".into()))
        );
        assert_eq!(op.attr("alpha"), Some(&AttrValue::Float(0.5)));
        assert_eq!(op.attr("dims"), Some(&AttrValue::ListInt(vec![1, 2])));
    }

    #[test]
    fn bad_dumps_name_the_line() {
        let err = read_dump_text("hello\n").unwrap_err();
        assert!(
            matches!(err, DumpTextError::Syntax { line: 1, .. }),
            "{err}"
        );
        let text = sample().dump().replace("<- a:0", "<- zz:0");
        let err = read_dump_text(&text).unwrap_err();
        assert!(err.to_string().contains("no node named 'zz'"), "{err}");
        let text = sample().dump().replace("FLOAT16[1, 4]", "FLOAT16[1, x]");
        let err = read_dump_text(&text).unwrap_err();
        assert!(err.to_string().contains("dimension 'x'"), "{err}");
        assert!(err.offset() > 0);
        let text = sample().dump().replace("  node c", "  nodule c");
        assert!(read_dump_text(&text).is_err());
        assert!(read_dump_text("").is_err());
    }
}
