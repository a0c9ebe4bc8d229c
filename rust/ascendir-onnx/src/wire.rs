//! Locating decode errors: when prost rejects a buffer, this walker re-reads the wire format
//! with the ONNX schema and reports the byte offset and field path of the first bad field.

use ascendir_wire::varint;

use crate::error::{OnnxError, OnnxResult};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Msg {
    Model,
    Graph,
    Node,
    Attribute,
    Tensor,
    Segment,
    ValueInfo,
    Type,
    TypeTensor,
    TypeSeq,
    TypeMap,
    Shape,
    Dim,
    Opset,
    StrStr,
    Sparse,
    Function,
    Annotation,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    M(Msg),
    Str,
    Bytes,
    Varint,
    F32,
    /// Repeated scalar that may be packed (wire type 2) or not.
    PVarint,
    PF32,
    PF64,
}

fn field(msg: Msg, no: u32) -> Option<(&'static str, Kind)> {
    use Kind::*;
    use Msg as G;
    Some(match (msg, no) {
        (G::Model, 1) => ("ir_version", Varint),
        (G::Model, 2) => ("producer_name", Str),
        (G::Model, 3) => ("producer_version", Str),
        (G::Model, 4) => ("domain", Str),
        (G::Model, 5) => ("model_version", Varint),
        (G::Model, 6) => ("doc_string", Str),
        (G::Model, 7) => ("graph", M(G::Graph)),
        (G::Model, 8) => ("opset_import", M(G::Opset)),
        (G::Model, 14) => ("metadata_props", M(G::StrStr)),
        (G::Model, 25) => ("functions", M(G::Function)),
        (G::Graph, 1) => ("node", M(G::Node)),
        (G::Graph, 2) => ("name", Str),
        (G::Graph, 5) => ("initializer", M(G::Tensor)),
        (G::Graph, 10) => ("doc_string", Str),
        (G::Graph, 11) => ("input", M(G::ValueInfo)),
        (G::Graph, 12) => ("output", M(G::ValueInfo)),
        (G::Graph, 13) => ("value_info", M(G::ValueInfo)),
        (G::Graph, 14) => ("quantization_annotation", M(G::Annotation)),
        (G::Graph, 15) => ("sparse_initializer", M(G::Sparse)),
        (G::Graph, 16) => ("metadata_props", M(G::StrStr)),
        (G::Node, 1) => ("input", Str),
        (G::Node, 2) => ("output", Str),
        (G::Node, 3) => ("name", Str),
        (G::Node, 4) => ("op_type", Str),
        (G::Node, 5) => ("attribute", M(G::Attribute)),
        (G::Node, 6) => ("doc_string", Str),
        (G::Node, 7) => ("domain", Str),
        (G::Node, 8) => ("overload", Str),
        (G::Node, 9) => ("metadata_props", M(G::StrStr)),
        (G::Attribute, 1) => ("name", Str),
        (G::Attribute, 2) => ("f", F32),
        (G::Attribute, 3) => ("i", Varint),
        (G::Attribute, 4) => ("s", Bytes),
        (G::Attribute, 5) => ("t", M(G::Tensor)),
        (G::Attribute, 6) => ("g", M(G::Graph)),
        (G::Attribute, 7) => ("floats", PF32),
        (G::Attribute, 8) => ("ints", PVarint),
        (G::Attribute, 9) => ("strings", Bytes),
        (G::Attribute, 10) => ("tensors", M(G::Tensor)),
        (G::Attribute, 11) => ("graphs", M(G::Graph)),
        (G::Attribute, 13) => ("doc_string", Str),
        (G::Attribute, 14) => ("tp", M(G::Type)),
        (G::Attribute, 15) => ("type_protos", M(G::Type)),
        (G::Attribute, 20) => ("type", Varint),
        (G::Attribute, 21) => ("ref_attr_name", Str),
        (G::Attribute, 22) => ("sparse_tensor", M(G::Sparse)),
        (G::Attribute, 23) => ("sparse_tensors", M(G::Sparse)),
        (G::Tensor, 1) => ("dims", PVarint),
        (G::Tensor, 2) => ("data_type", Varint),
        (G::Tensor, 3) => ("segment", M(G::Segment)),
        (G::Tensor, 4) => ("float_data", PF32),
        (G::Tensor, 5) => ("int32_data", PVarint),
        (G::Tensor, 6) => ("string_data", Bytes),
        (G::Tensor, 7) => ("int64_data", PVarint),
        (G::Tensor, 8) => ("name", Str),
        (G::Tensor, 9) => ("raw_data", Bytes),
        (G::Tensor, 10) => ("double_data", PF64),
        (G::Tensor, 11) => ("uint64_data", PVarint),
        (G::Tensor, 12) => ("doc_string", Str),
        (G::Tensor, 13) => ("external_data", M(G::StrStr)),
        (G::Tensor, 14) => ("data_location", Varint),
        (G::Tensor, 16) => ("metadata_props", M(G::StrStr)),
        (G::Segment, 1) => ("begin", Varint),
        (G::Segment, 2) => ("end", Varint),
        (G::ValueInfo, 1) => ("name", Str),
        (G::ValueInfo, 2) => ("type", M(G::Type)),
        (G::ValueInfo, 3) => ("doc_string", Str),
        (G::ValueInfo, 4) => ("metadata_props", M(G::StrStr)),
        (G::Type, 1) => ("tensor_type", M(G::TypeTensor)),
        (G::Type, 4) => ("sequence_type", M(G::TypeSeq)),
        (G::Type, 5) => ("map_type", M(G::TypeMap)),
        (G::Type, 6) => ("denotation", Str),
        (G::Type, 8) => ("sparse_tensor_type", M(G::TypeTensor)),
        (G::Type, 9) => ("optional_type", M(G::TypeSeq)),
        (G::TypeTensor, 1) => ("elem_type", Varint),
        (G::TypeTensor, 2) => ("shape", M(G::Shape)),
        (G::TypeSeq, 1) => ("elem_type", M(G::Type)),
        (G::TypeMap, 1) => ("key_type", Varint),
        (G::TypeMap, 2) => ("value_type", M(G::Type)),
        (G::Shape, 1) => ("dim", M(G::Dim)),
        (G::Dim, 1) => ("dim_value", Varint),
        (G::Dim, 2) => ("dim_param", Str),
        (G::Dim, 3) => ("denotation", Str),
        (G::Opset, 1) => ("domain", Str),
        (G::Opset, 2) => ("version", Varint),
        (G::StrStr, 1) => ("key", Str),
        (G::StrStr, 2) => ("value", Str),
        (G::Sparse, 1) => ("values", M(G::Tensor)),
        (G::Sparse, 2) => ("indices", M(G::Tensor)),
        (G::Sparse, 3) => ("dims", PVarint),
        (G::Function, 1) => ("name", Str),
        (G::Function, 4) => ("input", Str),
        (G::Function, 5) => ("output", Str),
        (G::Function, 6) => ("attribute", Str),
        (G::Function, 7) => ("node", M(G::Node)),
        (G::Function, 8) => ("doc_string", Str),
        (G::Function, 9) => ("opset_import", M(G::Opset)),
        (G::Function, 10) => ("domain", Str),
        (G::Function, 11) => ("attribute_proto", M(G::Attribute)),
        (G::Function, 12) => ("value_info", M(G::ValueInfo)),
        (G::Function, 13) => ("overload", Str),
        (G::Function, 14) => ("metadata_props", M(G::StrStr)),
        (G::Annotation, 1) => ("tensor_name", Str),
        (G::Annotation, 2) => ("quant_parameter_tensor_names", M(G::StrStr)),
        _ => return None,
    })
}

fn msg_name(m: Msg) -> &'static str {
    match m {
        Msg::Model => "ModelProto",
        Msg::Graph => "GraphProto",
        Msg::Node => "NodeProto",
        Msg::Attribute => "AttributeProto",
        Msg::Tensor => "TensorProto",
        Msg::Segment => "Segment",
        Msg::ValueInfo => "ValueInfoProto",
        Msg::Type => "TypeProto",
        Msg::TypeTensor => "TypeProto.Tensor",
        Msg::TypeSeq => "TypeProto.Sequence",
        Msg::TypeMap => "TypeProto.Map",
        Msg::Shape => "TensorShapeProto",
        Msg::Dim => "Dimension",
        Msg::Opset => "OperatorSetIdProto",
        Msg::StrStr => "StringStringEntryProto",
        Msg::Sparse => "SparseTensorProto",
        Msg::Function => "FunctionProto",
        Msg::Annotation => "TensorAnnotation",
    }
}

struct Fault {
    offset: usize,
    path: String,
    message: String,
}

fn walk(buf: &[u8], base: usize, msg: Msg, path: &str, depth: usize) -> Result<(), Fault> {
    let fault = |offset: usize, path: String, message: String| {
        Err(Fault {
            offset,
            path,
            message,
        })
    };
    if depth > 100 {
        return fault(base, path.to_string(), "messages nested too deeply".into());
    }
    let mut pos = 0usize;
    let mut counts: Vec<(u32, usize)> = Vec::new();
    while pos < buf.len() {
        let start = pos;
        let Some(key) = varint(buf, &mut pos) else {
            return fault(
                base + start,
                path.to_string(),
                "truncated or overlong field key".into(),
            );
        };
        let no = (key >> 3) as u32;
        let wt = (key & 7) as u8;
        if no == 0 {
            return fault(
                base + start,
                path.to_string(),
                "field number 0 is invalid".into(),
            );
        }
        let (fname, kind) = field(msg, no).unwrap_or(("?", Kind::Bytes));
        let idx = match counts.iter_mut().find(|(n, _)| *n == no) {
            Some((_, c)) => {
                *c += 1;
                *c - 1
            }
            None => {
                counts.push((no, 1));
                0
            }
        };
        let here = if fname == "?" {
            format!("{path}.<field {no}>")
        } else if matches!(kind, Kind::M(_)) {
            format!("{path}.{fname}[{idx}]")
        } else {
            format!("{path}.{fname}")
        };
        let known = fname != "?";
        let expect_ok = |wt: u8| -> bool {
            if !known {
                return true;
            }
            match kind {
                Kind::M(_) | Kind::Str | Kind::Bytes => wt == 2,
                Kind::Varint => wt == 0,
                Kind::F32 => wt == 5,
                Kind::PVarint => wt == 0 || wt == 2,
                Kind::PF32 => wt == 5 || wt == 2,
                Kind::PF64 => wt == 1 || wt == 2,
            }
        };
        if !expect_ok(wt) && wt <= 5 {
            return fault(
                base + start,
                here,
                format!("wire type {wt} is invalid for this field"),
            );
        }
        match wt {
            0 => {
                if varint(buf, &mut pos).is_none() {
                    return fault(base + start, here, "truncated varint".into());
                }
            }
            1 | 5 => {
                let n = if wt == 1 { 8 } else { 4 };
                if pos + n > buf.len() {
                    return fault(base + start, here, "truncated fixed-width value".into());
                }
                pos += n;
            }
            2 => {
                let Some(len) = varint(buf, &mut pos) else {
                    return fault(base + start, here, "truncated length".into());
                };
                let len = usize::try_from(len).unwrap_or(usize::MAX);
                if len > buf.len() - pos {
                    return fault(
                        base + start,
                        here,
                        format!("length {len} runs past the end of the enclosing message"),
                    );
                }
                let body = &buf[pos..pos + len];
                match kind {
                    Kind::M(child) if known => {
                        walk(
                            body,
                            base + pos,
                            child,
                            &format!("{here}:{}", msg_name(child)),
                            depth + 1,
                        )?;
                    }
                    Kind::Str if known && ascendir_wire::utf8(body).is_none() => {
                        return fault(base + pos, here, "string is not valid UTF-8".into());
                    }
                    Kind::PVarint if known => {
                        let mut p = 0;
                        while p < body.len() {
                            if varint(body, &mut p).is_none() {
                                return fault(
                                    base + pos + p,
                                    here,
                                    "truncated packed varint".into(),
                                );
                            }
                        }
                    }
                    Kind::PF32 | Kind::PF64 if known => {
                        let w = if kind == Kind::PF32 { 4 } else { 8 };
                        if body.len() % w != 0 {
                            return fault(
                                base + pos,
                                here,
                                "packed values are not a whole number of elements".into(),
                            );
                        }
                    }
                    _ => {}
                }
                pos += len;
            }
            3 | 4 => {
                return fault(base + start, here, "groups are not supported".into());
            }
            _ => {
                return fault(base + start, here, format!("invalid wire type {wt}"));
            }
        }
    }
    Ok(())
}

/// The decode error of `data`, located. Falls back to prost's message at offset 0 when the
/// walker finds nothing wrong (e.g. an out-of-range enum prost rejects).
pub fn locate(data: &[u8], err: &dyn std::fmt::Display) -> OnnxError {
    match walk(data, 0, Msg::Model, "ModelProto", 0) {
        Err(f) => OnnxError::Decode {
            offset: f.offset,
            path: f.path,
            message: f.message,
        },
        Ok(()) => OnnxError::Decode {
            offset: 0,
            path: "ModelProto".into(),
            message: err.to_string(),
        },
    }
}

/// One field of a message body (number, wire type, body of a length-delimited field);
/// `Some(None)` on malformed bytes.
fn scan<'a>(buf: &'a [u8], pos: &mut usize) -> Option<Option<(u64, u8, &'a [u8])>> {
    if *pos >= buf.len() {
        return None;
    }
    let Some(key) = varint(buf, pos) else {
        return Some(None);
    };
    let wt = (key & 7) as u8;
    let body: &[u8] = match wt {
        0 => match varint(buf, pos) {
            Some(_) => &[],
            None => return Some(None),
        },
        1 | 5 => {
            let n = if wt == 1 { 8 } else { 4 };
            match pos.checked_add(n).filter(|&e| e <= buf.len()) {
                Some(e) => {
                    *pos = e;
                    &[]
                }
                None => return Some(None),
            }
        }
        2 => {
            let end = varint(buf, pos)
                .and_then(|l| usize::try_from(l).ok())
                .and_then(|l| pos.checked_add(l))
                .filter(|&e| e <= buf.len());
            let Some(end) = end else {
                return Some(None);
            };
            let b = &buf[*pos..end];
            *pos = end;
            b
        }
        _ => return Some(None),
    };
    Some(Some((key >> 3, wt, body)))
}

/// Before the model is decoded, a scan of its bytes for nodes without an `op_type` (in the
/// main graph and in the bodies of its nodes, down to the depth protobuf's decoder accepts):
/// an empty `NodeProto` is 2 bytes on the wire and hundreds once decoded, so a file of them is
/// refused with memory bounded by its size. Malformed bytes end the scan without an error (the
/// decoder reports them with their offset). Returns the number of nodes seen (the
/// import's memory estimate).
pub fn precheck_nodes(data: &[u8]) -> OnnxResult<usize> {
    let mut pos = 0;
    let mut nodes = 0usize;
    while let Some(f) = scan(data, &mut pos) {
        let Some((number, wt, body)) = f else {
            return Ok(nodes);
        };
        if number == 7 && wt == 2 {
            if let Some(Err(e)) = precheck_graph(body, "ModelProto.graph", 0, &mut nodes) {
                return Err(e);
            }
        }
    }
    Ok(nodes)
}

/// `None`: malformed or too deep (left to the decoder). Counts the nodes into `nodes`.
fn precheck_graph(
    body: &[u8],
    path: &str,
    depth: usize,
    nodes: &mut usize,
) -> Option<OnnxResult<()>> {
    if depth > 40 {
        return None;
    }
    let mut pos = 0;
    let mut i = 0usize;
    while let Some(f) = scan(body, &mut pos) {
        let (number, wt, node) = f?;
        if number != 1 || wt != 2 {
            continue;
        }
        let here = format!("{path}.node[{i}]");
        i += 1;
        *nodes = nodes.saturating_add(1);
        let mut op_type: &[u8] = &[];
        let mut npos = 0;
        while let Some(f) = scan(node, &mut npos) {
            let (n, wt, b) = f?;
            match (n, wt) {
                (4, 2) => op_type = b,
                (5, 2) => {
                    // AttributeProto: g = 6, graphs = 11.
                    let mut apos = 0;
                    while let Some(f) = scan(b, &mut apos) {
                        let (an, awt, ab) = f?;
                        if (an == 6 || an == 11) && awt == 2 {
                            if let Err(e) =
                                precheck_graph(ab, &format!("{here}.attribute"), depth + 1, nodes)?
                            {
                                return Some(Err(e));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if op_type.is_empty() {
            return Some(Err(OnnxError::Invalid(format!("{here} has no op_type"))));
        }
    }
    Some(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_counts_the_nodes_of_the_graph_and_its_bodies() {
        use crate::pb;
        use prost::Message;
        let node = |op: &str| pb::NodeProto {
            op_type: op.to_owned().into(),
            ..Default::default()
        };
        let body = pb::GraphProto {
            node: vec![node("Neg"), node("Abs")],
            ..Default::default()
        };
        let mut with_body = node("If");
        with_body.attribute.push(pb::AttributeProto {
            name: "then_branch".into(),
            g: Some(body),
            ..Default::default()
        });
        let m = pb::ModelProto {
            graph: Some(pb::GraphProto {
                node: vec![node("Relu"), with_body],
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(precheck_nodes(&m.encode_to_vec()).unwrap(), 4);
    }

    #[test]
    fn truncated_length_is_located() {
        // ModelProto.graph (field 7, wire type 2) claiming 50 bytes with only 2 present.
        let data = [0x08, 0x07, 0x3a, 50, 0x0a, 0x00];
        let e = locate(&data, &"x");
        match e {
            OnnxError::Decode { offset, path, .. } => {
                assert_eq!(offset, 2);
                assert_eq!(path, "ModelProto.graph[0]");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nested_bad_utf8_is_located() {
        // graph { node { name: "\xff" } }
        let node = [0x1a, 0x01, 0xff];
        let graph = [&[0x0a, node.len() as u8][..], &node[..]].concat();
        let model = [&[0x3a, graph.len() as u8][..], &graph[..]].concat();
        match locate(&model, &"x") {
            OnnxError::Decode { offset, path, .. } => {
                assert_eq!(offset, 6);
                assert_eq!(
                    path,
                    "ModelProto.graph[0]:GraphProto.node[0]:NodeProto.name"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
