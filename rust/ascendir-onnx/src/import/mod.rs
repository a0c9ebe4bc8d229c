//! ONNX `ModelProto` bytes → ascendir [`Graph`].
//!
//! Graph inputs become `Data` nodes, initializers `Const` nodes (payload shared with the input
//! buffer), every ONNX node one GE node (mapped through [`crate::ops`], or kept as
//! `onnx::<OpType>` with all its attributes), graph outputs the `NetOutput`. Subgraph bodies
//! (If, Loop, Scan, ...) become subgraphs registered on the root with parent links; values a
//! body reads from an enclosing graph become explicit inputs of the parent node and `Data`
//! nodes of the body, as GE requires. Every port desc carries the ONNX value name (`desc.name`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use ascendir_ir::{AttrValue, DataType, Graph, InAnchor, NodeId, OpDesc, OutAnchor, TensorDesc};
use bytes::Bytes;
use prost::Message;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{OnnxError, OnnxResult};
use crate::export::ATTR_NUM_INPUTS;
use crate::ops::{self, Mapped};
use crate::pb;
use crate::types::{desc_from_type, tensor_from_proto};

mod input_info;

/// Options of [`import_model`].
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Directory that external data locations are relative to (the model file's directory).
    /// Without it, a model with external data fails to import.
    pub base_dir: Option<PathBuf>,
}

/// What an import found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportReport {
    /// ONNX nodes imported (all graphs).
    pub onnx_nodes: usize,
    /// ONNX nodes of the root graph.
    pub root_nodes: usize,
    /// Initializers (all graphs).
    pub initializers: usize,
    /// Extra `Const` nodes made for values GE takes as inputs where ONNX has attributes.
    pub aux_consts: usize,
    /// Ops kept unmapped, by GE type (`onnx::<OpType>`), with counts.
    pub unknown_ops: BTreeMap<String, usize>,
    /// Number of subgraphs.
    pub subgraphs: usize,
    /// Standard-domain opset version.
    pub opset: i64,
    /// ONNX IR version.
    pub ir_version: i64,
    /// Producer name and version.
    pub producer: String,
}

/// The standard-domain opsets the mapping was written for (and checked on); a model outside
/// them imports with [`ImportReport::opset_mapped`] false (the Python layer warns).
pub const MAPPED_OPSETS: std::ops::RangeInclusive<i64> = 11..=21;

impl ImportReport {
    /// Whether the model's standard-domain opset is one the mapping was written for.
    pub fn opset_mapped(&self) -> bool {
        MAPPED_OPSETS.contains(&self.opset)
    }
}

/// Graph attribute holding the standard-domain opset the model was imported from.
pub const ATTR_OPSET: &str = "_onnx_opset";
/// Graph attribute holding every opset import as `domain:version`.
pub const ATTR_OPSET_IMPORT: &str = "_onnx_opset_import";
/// Graph attribute holding the ONNX IR version.
pub const ATTR_IR_VERSION: &str = "_onnx_ir_version";
/// Graph attribute holding the producer name.
pub const ATTR_PRODUCER: &str = "_onnx_producer_name";
/// Op attribute holding the domain of an unmapped op from a non-standard domain.
pub const ATTR_DOMAIN: &str = "_onnx_domain";
/// Op attribute marking a `Const` made for a GE input that ONNX holds as an attribute.
pub const ATTR_AUX: &str = "_onnx_aux";
/// Op attribute marking a `Const` that was an ONNX `Constant` node (not an initializer).
pub const ATTR_CONSTANT_NODE: &str = "_onnx_constant_node";

/// Decode ONNX bytes and build the graph. The buffer is kept alive by the graph's constants.
pub fn import_model(data: Bytes, opts: &ImportOptions) -> OnnxResult<(Graph, ImportReport)> {
    let nodes = crate::wire::precheck_nodes(&data)?;
    // The decoded model and the graph built from it are alive together: check up front that
    // both fit, so that memory pressure gives an error instead of an aborting allocation.
    ascendir_ir::memory::reserve(
        data.len().saturating_mul(IMPORT_RESERVE_PER_BYTE),
        nodes.saturating_mul(IMPORT_RESERVE_PER_NODE),
    )
    .map_err(|needed| OnnxError::OutOfMemory {
        needed,
        what: format!("import a model of {} bytes and {nodes} nodes", data.len()),
    })?;
    let model = pb::ModelProto::decode(data.clone()).map_err(|e| crate::wire::locate(&data, &e))?;
    let result = import_proto(&model, opts);
    // Freeing a large decoded model takes a while: off the caller's path when it is large.
    let items = model
        .graph
        .as_ref()
        .map_or(0, |g| g.node.len().saturating_add(g.initializer.len()));
    ascendir_ir::threads::free_in_background(model, items);
    result
}

/// Memory an import is expected to use per input byte (the decoded protobuf's strings and
/// repeated fields; tensor payloads are shared with the input).
pub const IMPORT_RESERVE_PER_BYTE: usize = 2;

/// Address space an import is expected to need per node beyond [`IMPORT_RESERVE_PER_BYTE`]:
/// the decoded `NodeProto` and the graph node built from it (descs, ports, name index) cost
/// several hundred bytes each however few bytes the node takes on the wire, and the
/// allocator maps about twice what it hands out. Only compared with an address-space limit
/// (`RLIMIT_AS`) when one is set.
pub const IMPORT_RESERVE_PER_NODE: usize = 4 << 10;

/// Build the graph of an already decoded model.
pub fn import_proto(
    model: &pb::ModelProto,
    opts: &ImportOptions,
) -> OnnxResult<(Graph, ImportReport)> {
    let gp = model
        .graph
        .as_ref()
        .ok_or_else(|| OnnxError::Invalid("the model has no graph".into()))?;
    let opset = model
        .opset_import
        .iter()
        .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
        .map_or(21, |o| o.version);
    let mut ctx = Ctx {
        opset,
        report: ImportReport {
            opset,
            ir_version: model.ir_version,
            producer: format!("{} {}", model.producer_name, model.producer_version)
                .trim()
                .to_string(),
            ..ImportReport::default()
        },
        base_dir: opts.base_dir.clone(),
        files: FxHashMap::default(),
        graph_names: FxHashSet::default(),
    };
    let root_name = if gp.name.is_empty() {
        "main"
    } else {
        gp.name.as_str()
    };
    ctx.graph_names.insert(root_name.to_string());
    let (mut g, _) = build_graph(gp, root_name, &mut ctx, &[], &[])?;
    // ONNX graphs are acyclic (nodes are topologically sorted): a cycle is refused at load.
    for graph in std::iter::once(&g).chain(g.subgraphs.iter()) {
        if let Some(cycle) = graph.find_cycle() {
            let names: Vec<&str> = cycle
                .iter()
                .filter_map(|&id| graph.node(id).ok().map(|n| n.name()))
                .collect();
            return Err(OnnxError::Invalid(format!(
                "ONNX graph '{}' has a cycle: {}",
                graph.name(),
                names.join(" -> ")
            )));
        }
    }
    ctx.report.root_nodes = gp.node.len();
    ctx.report.subgraphs = g.subgraphs.len();
    g.attrs.insert(ATTR_OPSET, AttrValue::Int(opset));
    g.attrs.insert(
        ATTR_OPSET_IMPORT,
        AttrValue::ListString(
            model
                .opset_import
                .iter()
                .map(|o| format!("{}:{}", o.domain, o.version))
                .collect(),
        ),
    );
    g.attrs
        .insert(ATTR_IR_VERSION, AttrValue::Int(model.ir_version));
    if !model.producer_name.is_empty() {
        g.attrs.insert(
            ATTR_PRODUCER,
            AttrValue::String(model.producer_name.clone()),
        );
    }
    Ok((g, ctx.report))
}

struct Ctx {
    opset: i64,
    report: ImportReport,
    base_dir: Option<PathBuf>,
    /// External data files opened so far, with their sizes.
    files: FxHashMap<String, (std::fs::File, u64)>,
    graph_names: FxHashSet<String>,
}

impl Ctx {
    fn external(&mut self, location: &str, offset: u64, length: Option<u64>) -> OnnxResult<Bytes> {
        let base = self.base_dir.as_ref().ok_or_else(|| {
            OnnxError::Invalid(format!(
                "external data '{location}' needs the model's directory (load from a path)"
            ))
        })?;
        let rel = Path::new(location);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(OnnxError::Invalid(format!(
                "external data location '{location}' must be a relative path inside the model directory"
            )));
        }
        if !self.files.contains_key(location) {
            let file = open_external(base, rel, location)?;
            self.files.insert(location.to_string(), file);
        }
        let (file, size) = &self.files[location];
        let end = match length {
            Some(l) => offset.checked_add(l),
            None => Some(*size),
        };
        let Some(end) = end.filter(|&e| offset <= e && e <= *size) else {
            return Err(OnnxError::Invalid(format!(
                "external data '{location}' has {size} bytes; offset {offset} length {length:?} is out of range"
            )));
        };
        read_range(file, offset, end - offset).map_err(|e| {
            OnnxError::Io(format!(
                "cannot read bytes {offset}..{end} of external data '{location}': {e}"
            ))
        })
    }

    fn tensor(&mut self, t: &pb::TensorProto) -> OnnxResult<ascendir_ir::Tensor> {
        let mut loader = |loc: &str, off: u64, len: Option<u64>| self.external(loc, off, len);
        tensor_from_proto(t, Some(&mut loader))
    }

    fn unique_graph_name(&mut self, wanted: &str, fallback: &str) -> String {
        let base = if wanted.is_empty() || self.graph_names.contains(wanted) {
            fallback
        } else {
            wanted
        };
        let mut name = base.to_string();
        let mut k = 1;
        while self.graph_names.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.graph_names.insert(name.clone());
        name
    }
}

/// A link to make after every node exists: GE input `port` of `node` reads value `name`.
struct Pending<'m> {
    node: NodeId,
    port: usize,
    name: &'m str,
}

struct Builder<'m, 'o> {
    g: Graph,
    values: FxHashMap<&'m str, (NodeId, usize)>,
    types: FxHashMap<&'m str, &'m pb::TypeProto>,
    descs: FxHashMap<&'m str, Arc<TensorDesc>>,
    consts: FxHashMap<&'m str, NodeId>,
    outer: &'o [&'o FxHashSet<&'m str>],
    captures: Vec<(String, NodeId)>,
    unknown: Arc<TensorDesc>,
}

impl<'m> Builder<'m, '_> {
    fn desc(&mut self, name: &'m str) -> Arc<TensorDesc> {
        if name.is_empty() {
            return self.unknown.clone();
        }
        if let Some(d) = self.descs.get(name) {
            return d.clone();
        }
        let mut d = desc_from_type(self.types.get(name).copied());
        d.name = Some(name.into());
        let d = Arc::new(d);
        self.descs.insert(name, d.clone());
        d
    }

    fn unique_node_name<'a>(&self, base: &'a str) -> Cow<'a, str> {
        if self.g.find(base).is_none() {
            return Cow::Borrowed(base);
        }
        let mut k = 1;
        loop {
            let n = format!("{base}_{k}");
            if self.g.find(&n).is_none() {
                return Cow::Owned(n);
            }
            k += 1;
        }
    }

    /// Resolve a value: a local producer, or (in a subgraph) a capture of an enclosing value.
    fn resolve(&mut self, name: &'m str) -> OnnxResult<Option<(NodeId, usize)>> {
        if let Some(v) = self.values.get(name) {
            return Ok(Some(*v));
        }
        if self.outer.iter().any(|s| s.contains(name)) {
            let desc = self.desc(name);
            let node_name = self.unique_node_name(name);
            let mut op = OpDesc::new(&node_name, "Data");
            op.add_input("x", desc.clone());
            op.add_output("y", desc)?;
            let id = self.g.add_node(op)?;
            self.values.insert(name, (id, 0));
            self.captures.push((name.to_string(), id));
            return Ok(Some((id, 0)));
        }
        Ok(None)
    }
}

/// Open the external data file `rel` of the model directory `base`: the path is resolved
/// (symbolic links followed) and must stay inside the resolved model directory, and it must be a
/// regular file (checked before opening, so a FIFO or device is never opened, and again on
/// the opened file). Returns the file and its size.
fn open_external(base: &Path, rel: &Path, location: &str) -> OnnxResult<(std::fs::File, u64)> {
    let io = |what: &str, p: &Path, e: std::io::Error| {
        OnnxError::Io(format!("cannot {what} '{}': {e}", p.display()))
    };
    let root =
        std::fs::canonicalize(base).map_err(|e| io("resolve the model directory", base, e))?;
    let path = base.join(rel);
    let real = std::fs::canonicalize(&path).map_err(|e| io("resolve external data", &path, e))?;
    if !real.starts_with(&root) {
        return Err(OnnxError::Invalid(format!(
            "external data location '{location}' resolves to '{}', outside the model directory",
            real.display()
        )));
    }
    let not_regular = || {
        OnnxError::Invalid(format!(
            "external data location '{location}' is not a regular file"
        ))
    };
    let meta = std::fs::metadata(&real).map_err(|e| io("read external data", &real, e))?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let file = std::fs::File::open(&real).map_err(|e| io("open external data", &real, e))?;
    let meta = file
        .metadata()
        .map_err(|e| io("read external data", &real, e))?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    Ok((file, meta.len()))
}

/// The bytes of the model file at `path`, read into a buffer reserved fallibly: a model too
/// large for the memory left is [`OnnxError::OutOfMemory`], not an aborting allocation.
pub fn read_model_file(path: &std::path::Path) -> OnnxResult<Bytes> {
    let io = |e: std::io::Error| {
        OnnxError::Io(format!("cannot read ONNX model '{}': {e}", path.display()))
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    read_range(&file, 0, len).map_err(|e| {
        if e.kind() == std::io::ErrorKind::OutOfMemory {
            OnnxError::OutOfMemory {
                needed: usize::try_from(len).unwrap_or(usize::MAX),
                what: format!("read ONNX model '{}'", path.display()),
            }
        } else {
            io(e)
        }
    })
}

/// Read exactly `len` bytes of `file` from `offset`; the buffer is reserved fallibly.
fn read_range(mut file: &std::fs::File, offset: u64, len: u64) -> std::io::Result<Bytes> {
    use std::io::{Read, Seek, SeekFrom};
    let n = usize::try_from(len)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::OutOfMemory, "range too large"))?;
    let mut buf: Vec<u8> = Vec::new();
    buf.try_reserve_exact(n)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::OutOfMemory, "out of memory"))?;
    file.seek(SeekFrom::Start(offset))?;
    file.take(len).read_to_end(&mut buf)?;
    if buf.len() != n {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("the file ended after {} of {n} bytes", buf.len()),
        ));
    }
    Ok(Bytes::from(buf))
}

fn has_subgraphs(n: &pb::NodeProto) -> bool {
    n.attribute
        .iter()
        .any(|a| a.g.is_some() || !a.graphs.is_empty())
}

/// Every name a graph defines (inputs, initializers, node outputs).
fn defined_names(gp: &pb::GraphProto) -> FxHashSet<&str> {
    let mut s = FxHashSet::default();
    s.extend(gp.input.iter().map(|v| v.name.as_str()));
    s.extend(gp.initializer.iter().map(|t| t.name.as_str()));
    for n in &gp.node {
        s.extend(
            n.output
                .iter()
                .map(|o| pb::text(o))
                .filter(|o| !o.is_empty()),
        );
    }
    s
}

/// Build one graph. `formal` maps the graph's ONNX inputs to `Data` indexes (root: 0..n;
/// bodies: the parent input each formal input stands for). Returns the graph and the values it
/// captures from enclosing graphs, with their `Data` nodes.
fn build_graph<'m>(
    gp: &'m pb::GraphProto,
    name: &str,
    ctx: &mut Ctx,
    outer: &[&FxHashSet<&'m str>],
    formal: &[i64],
) -> OnnxResult<(Graph, Vec<(String, NodeId)>)> {
    let extra = gp.initializer.len() + gp.input.len() + 1;
    let mut b = Builder {
        g: Graph::with_capacity(name, gp.node.len() + extra),
        values: FxHashMap::default(),
        types: FxHashMap::default(),
        descs: FxHashMap::default(),
        consts: FxHashMap::default(),
        outer,
        captures: Vec::new(),
        unknown: Arc::new(desc_from_type(None)),
    };
    b.values.reserve(gp.node.len() * 2 + extra);
    b.types.reserve(gp.value_info.len() + extra);
    b.descs.reserve(gp.node.len() * 2 + extra);
    for v in gp.value_info.iter().chain(&gp.output).chain(&gp.input) {
        if let Some(t) = &v.r#type {
            b.types.insert(v.name.as_str(), t);
        }
    }
    // Initializers.
    let inits: FxHashSet<&str> = gp.initializer.iter().map(|t| t.name.as_str()).collect();
    for t in &gp.initializer {
        let tensor = ctx.tensor(t)?;
        let mut desc = (*tensor.desc).clone();
        desc.name = Some(t.name.as_str().into());
        let desc = Arc::new(desc);
        b.descs.insert(t.name.as_str(), desc.clone());
        let node_name = b.unique_node_name(if t.name.is_empty() { "const" } else { &t.name });
        let mut op = OpDesc::new(&node_name, "Const");
        op.add_output("y", desc)?;
        op.set_attr("value", AttrValue::Tensor(tensor));
        let id = b.g.add_node(op)?;
        b.values.insert(t.name.as_str(), (id, 0));
        b.consts.insert(t.name.as_str(), id);
    }
    ctx.report.initializers += gp.initializer.len();
    // Graph inputs (those without an initializer of the same name).
    let mut k = 0usize;
    for v in &gp.input {
        if inits.contains(v.name.as_str()) {
            continue;
        }
        if v.name.is_empty() {
            return Err(OnnxError::Invalid(format!(
                "graph '{name}' has an input without a name"
            )));
        }
        let desc = b.desc(v.name.as_str());
        let node_name = b.unique_node_name(&v.name);
        let mut op = OpDesc::new(&node_name, "Data");
        op.add_input("x", desc.clone());
        op.add_output("y", desc)?;
        let index = formal.get(k).copied().unwrap_or(k as i64);
        op.set_attr("index", AttrValue::Int(index));
        let id = b.g.add_node(op)?;
        b.values.insert(v.name.as_str(), (id, 0));
        k += 1;
    }
    // The names visible to bodies: enclosing ones plus this graph's.
    let own_names = gp.node.iter().any(has_subgraphs).then(|| defined_names(gp));
    let mut scope: Vec<&FxHashSet<&'m str>> = outer.to_vec();
    if let Some(s) = &own_names {
        scope.push(s);
    }
    // Pass 1: nodes.
    let mut pending: Vec<Pending<'m>> = Vec::with_capacity(gp.node.len() * 2);
    let mut aux_links: Vec<(NodeId, usize, NodeId)> = Vec::new();
    let id_placeholder = NodeId::default();
    for (i, n) in gp.node.iter().enumerate() {
        for t in n
            .input
            .iter()
            .chain(&n.output)
            .chain([&n.name, &n.op_type, &n.domain])
        {
            if ascendir_wire::utf8(t).is_none() {
                return Err(OnnxError::Decode {
                    offset: 0,
                    path: format!("GraphProto({name}).node[{i}]"),
                    message: "a name is not valid UTF-8".into(),
                });
            }
        }
        let (n_name, n_type, n_domain) =
            (pb::text(&n.name), pb::text(&n.op_type), pb::text(&n.domain));
        if n_type.is_empty() {
            return Err(OnnxError::Invalid(format!(
                "node {i} of graph '{name}' has no op_type"
            )));
        }
        let standard = n_domain.is_empty() || n_domain == "ai.onnx";
        let mapped = if standard {
            ops::map_node(n, ctx.opset, &b)?
        } else {
            None
        };
        let node_name = if n_name.is_empty() {
            Cow::Owned(b.unique_node_name(&format!("{n_type}_{i}")).into_owned())
        } else {
            b.unique_node_name(n_name)
        };
        let Mapped {
            ge_type,
            inputs,
            outputs,
            attrs,
            aux,
        } = match mapped {
            Some(m) => m,
            None => {
                let ge = format!("onnx::{n_type}");
                *ctx.report.unknown_ops.entry(ge.clone()).or_default() += 1;
                let mut attrs = ascendir_ir::AttrMap::new();
                for a in &n.attribute {
                    if a.g.is_none() && a.graphs.is_empty() {
                        if let Some(v) = ops::attr_value(a)? {
                            attrs.insert(a.name.clone(), v);
                        }
                    }
                }
                if !standard {
                    attrs.insert(ATTR_DOMAIN, AttrValue::String(n_domain.to_string()));
                }
                Mapped {
                    ge_type: ge,
                    inputs: (0..n.input.len())
                        .map(|k| (Cow::Owned(format!("__input{k}")), Some(k), false))
                        .collect(),
                    outputs: (0..n.output.len())
                        .map(|k| Cow::Owned(format!("__output{k}")))
                        .collect(),
                    attrs,
                    aux: Vec::new(),
                }
            }
        };
        let mut op = OpDesc::new(&node_name, &ge_type);
        op.attrs = attrs;
        if ge_type == "Const" {
            op.set_attr(ATTR_CONSTANT_NODE, AttrValue::Bool(true));
        }
        let first_pending = pending.len();
        // All ports at once (names checked in linear time): one by one is quadratic in the
        // number of ports.
        let mut in_ports: Vec<(&str, Arc<TensorDesc>)> = Vec::with_capacity(inputs.len());
        for (port, src, optional) in &inputs {
            let value = src.and_then(|k| n.input.get(k)).map_or("", |v| pb::text(v));
            let desc = if value.is_empty() {
                if *optional {
                    Arc::new(TensorDesc::invalid())
                } else {
                    b.unknown.clone()
                }
            } else {
                pending.push(Pending {
                    node: id_placeholder,
                    port: in_ports.len(),
                    name: value,
                });
                b.desc(value)
            };
            in_ports.push((port.as_ref(), desc));
        }
        op.append_ports(ascendir_ir::Side::Input, in_ports)?;
        for (port, _, optional) in &inputs {
            if *optional {
                op.mark_optional_input(port);
            }
        }
        let outs: Vec<(&str, Arc<TensorDesc>)> = outputs
            .iter()
            .enumerate()
            .map(|(k, port)| {
                let value = n.output.get(k).map_or("", |v| pb::text(v));
                (port.as_ref(), b.desc(value))
            })
            .collect();
        op.append_ports(ascendir_ir::Side::Output, outs)?;
        let mut aux_ports = Vec::new();
        for (port, tensor) in aux {
            let idx = op.add_input(&port, tensor.desc.clone());
            aux_ports.push((idx, port, tensor));
        }
        let id = b.g.add_node(op)?;
        for (k, out) in n.output.iter().enumerate() {
            if !out.is_empty() {
                b.values.insert(pb::text(out), (id, k));
            }
        }
        if ge_type == "Const" {
            if let Some(out) = n.output.first() {
                b.consts.insert(pb::text(out), id);
            }
        }
        for (idx, port, tensor) in aux_ports {
            let wanted = format!("{node_name}/{port}");
            let cname = b.unique_node_name(&wanted);
            let mut cop = OpDesc::new(&cname, "Const");
            cop.add_output("y", tensor.desc.clone())?;
            cop.set_attr("value", AttrValue::Tensor(tensor));
            cop.set_attr(ATTR_AUX, AttrValue::Bool(true));
            let cid = b.g.add_node(cop)?;
            aux_links.push((cid, idx, id));
            ctx.report.aux_consts += 1;
        }
        for p in &mut pending[first_pending..] {
            p.node = id;
        }
        if has_subgraphs(n) {
            let extra_inputs = build_bodies(&mut b, ctx, &scope, id, n, &ge_type)?;
            pending.extend(extra_inputs);
        }
    }
    ctx.report.onnx_nodes += gp.node.len();
    // Pass 2: links.
    for p in pending {
        let src = b.resolve(p.name)?.ok_or_else(|| {
            let who = b.g.op(p.node).map(|o| o.name().to_string()).unwrap_or_default();
            OnnxError::Invalid(format!(
                "node '{who}' of graph '{name}' reads '{}', which no node, input or initializer produces",
                p.name
            ))
        })?;
        b.g.link(
            OutAnchor::data(src.0, src.1),
            InAnchor::data(p.node, p.port),
        )?;
    }
    for (cid, idx, id) in aux_links {
        b.g.link(OutAnchor::data(cid, 0), InAnchor::data(id, idx))?;
    }
    // Outputs.
    let mut outs = Vec::with_capacity(gp.output.len());
    for v in &gp.output {
        let src = b.resolve(v.name.as_str())?.ok_or_else(|| {
            OnnxError::Invalid(format!(
                "output '{}' of graph '{name}' is never produced",
                v.name
            ))
        })?;
        outs.push((src.0, src.1 as i32));
    }
    b.g.set_outputs(&outs, &[])?;
    // A graph output produced by a Data node keeps its own name on the NetOutput input desc.
    Ok((b.g, b.captures))
}

/// Build the bodies of `n` (node `id` in `b`), register them, and return the links to make for
/// the values they capture (new inputs of the parent node).
fn build_bodies<'m>(
    b: &mut Builder<'m, '_>,
    ctx: &mut Ctx,
    scope: &[&FxHashSet<&'m str>],
    id: NodeId,
    n: &'m pb::NodeProto,
    ge_type: &str,
) -> OnnxResult<Vec<Pending<'m>>> {
    let parent_inputs = b.g.op(id)?.num_inputs();
    let node_name = b.g.op(id)?.name().to_string();
    // (slot, dynamic, graph)
    let mut bodies: Vec<(String, bool, &'m pb::GraphProto)> = Vec::new();
    for a in &n.attribute {
        if let Some(g) = &a.g {
            bodies.push((a.name.clone(), false, g));
        }
        for g in &a.graphs {
            bodies.push((a.name.clone(), true, g));
        }
    }
    // GE's slot order (attributes may come sorted by name).
    if ge_type == "If" {
        bodies.sort_by_key(|(slot, _, _)| match slot.as_str() {
            "then_branch" => 0,
            "else_branch" => 1,
            _ => 2,
        });
    }
    // Formal inputs of a Loop body stand for the parent inputs in order; others have none
    // they could map to, so their formal inputs get fresh parent ports after the captures.
    let formal: Vec<i64> = (0..parent_inputs as i64).collect();
    let mut built = Vec::with_capacity(bodies.len());
    for (slot, dynamic, gp) in &bodies {
        let name = ctx.unique_graph_name(&gp.name, &format!("{node_name}_{slot}"));
        let (g, caps) = build_graph(gp, &name, ctx, scope, &formal)?;
        built.push((slot.clone(), *dynamic, g, caps));
    }
    // Union of the captured names, in first-seen order, as new parent inputs.
    let mut union: Vec<String> = Vec::new();
    for (_, _, _, caps) in &built {
        for (cname, _) in caps {
            if !union.contains(cname) {
                union.push(cname.clone());
            }
        }
    }
    let dyn_group = match ge_type {
        "If" => Some("input"),
        "Loop" => Some("input"),
        _ => None,
    };
    let mut links = Vec::with_capacity(union.len());
    let mut first_index = 0usize;
    if !union.is_empty() {
        let mut keys: Vec<&'m str> = Vec::with_capacity(union.len());
        for u in &union {
            let key: &'m str = scope
                .iter()
                .find_map(|s| s.get(u.as_str()).copied())
                .ok_or_else(|| {
                    OnnxError::Invalid(format!("captured value '{u}' is not visible"))
                })?;
            keys.push(key);
        }
        let descs: Vec<Arc<TensorDesc>> = keys.iter().map(|k| b.desc(k)).collect();
        let start = parent_inputs;
        first_index = start;
        let existing_dyn = dyn_group.map_or(0, |g| {
            b.g.op(id).map_or(0, |op| {
                op.dynamic_indexes(ascendir_ir::Side::Input, g).len()
            })
        });
        b.g.modify_op(id, |op| {
            op.set_attr(ATTR_NUM_INPUTS, AttrValue::Int(start as i64));
            for (k, d) in descs.into_iter().enumerate() {
                let port = match dyn_group {
                    Some(g) => format!("{g}{}", existing_dyn + k),
                    None => format!("__input{}", start + k),
                };
                op.add_input(&port, d);
            }
        })?;
        for (k, key) in keys.into_iter().enumerate() {
            links.push(Pending {
                node: id,
                port: start + k,
                name: key,
            });
        }
    }
    for (slot, dynamic, mut g, caps) in built {
        for (cname, data) in &caps {
            let pos = union.iter().position(|u| u == cname).unwrap_or(0);
            let index = (first_index + pos) as i64;
            g.modify_op(*data, |op| op.set_attr("index", AttrValue::Int(index)))?;
        }
        // Graph names are unique across the model (`unique_graph_name`).
        b.g.add_subgraph_fresh_names(None, id, &slot, dynamic, g)?;
    }
    Ok(links)
}

/// The data type of a value desc for reports.
pub fn dtype_name(dt: DataType) -> &'static str {
    dt.name()
}
