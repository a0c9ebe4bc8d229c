//! Writes the seed corpus of every fuzz target.
//!
//! Usage: `seeds GE_DIR OUT_DIR [MODEL.onnx ...]`, where `GE_DIR` holds the decompressed GE
//! dumps (`ge_proto_*.txt` and `root_model.om`). Writes `OUT_DIR/model_def`, `OUT_DIR/text`,
//! `OUT_DIR/om`, `OUT_DIR/onnx` and `OUT_DIR/onnx_dir`:
//!
//! * `model_def`: small valid models cut out of the text dumps the way the mutation fuzzer
//!   does it (12 consecutive ops each, an input kept only when its source is in the slice),
//!   and the MODEL_DEF partition of `root_model.om`;
//! * `text`: the text form of some of those models;
//! * `om`: `root_model.om` and OM containers wrapped around some of the models;
//! * `onnx`: the small models of the ONNX mutation fuzzer (a chain with an initializer,
//!   nested `If` bodies capturing an outer value, a `Loop`, typed and string initializers)
//!   and the ONNX files named on the command line;
//! * `onnx_dir`: models whose initializer lives in external data, at every location of the
//!   target's directory of hostile files.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use ascendir_onnx::pb as onnx;
use ascendir_proto::{decode_model, om, pb, text};
use bytes::Bytes;
use prost::Message;

/// Ops per slice, and slices per dump (as in the mutation fuzzer).
const OPS_PER_SLICE: usize = 12;
const SLICES_PER_DUMP: usize = 40;

fn write(dir: &Path, name: &str, data: &[u8]) {
    std::fs::create_dir_all(dir).expect("create the corpus directory");
    std::fs::write(dir.join(name), data).expect("write a seed");
}

/// Small valid models cut out of one text dump.
fn slices(dump: &str) -> Vec<Vec<u8>> {
    let def = text::parse_model_def(dump).expect("the dump parses");
    let g = &def.graph[0];
    let ops: Vec<pb::OpDef> =
        g.op.iter()
            .map(|b| pb::OpDef::decode(b.clone()).expect("the dump's ops decode"))
            .collect();
    let mut out = Vec::new();
    for (k, chunk) in ops.chunks(OPS_PER_SLICE).enumerate().take(SLICES_PER_DUMP) {
        let inside: HashSet<&str> = chunk.iter().map(|o| o.name.as_str()).collect();
        let op = chunk
            .iter()
            .map(|o| {
                let mut o = o.clone();
                for s in &mut o.input {
                    let src = s.rsplit_once(':').map_or("", |x| x.0);
                    if !inside.contains(src) {
                        s.clear();
                    }
                }
                o.encode_to_vec().into()
            })
            .collect();
        let small = pb::ModelDef {
            name: format!("slice{k}"),
            graph: vec![pb::GraphDef {
                name: g.name.clone(),
                op,
                ..Default::default()
            }],
            attr: def.attr.clone(),
            ..Default::default()
        };
        let bytes = small.encode_to_vec();
        decode_model(&bytes).expect("a slice is a valid model");
        out.push(bytes);
    }
    out
}

fn vi(name: &str, elem: i32, dims: &[i64]) -> onnx::ValueInfoProto {
    use onnx::tensor_shape_proto::{dimension::Value, Dimension};
    onnx::ValueInfoProto {
        name: name.into(),
        r#type: Some(onnx::TypeProto {
            value: Some(onnx::type_proto::Value::TensorType(
                onnx::type_proto::Tensor {
                    elem_type: elem,
                    shape: Some(onnx::TensorShapeProto {
                        dim: dims
                            .iter()
                            .map(|&d| Dimension {
                                value: Some(Value::DimValue(d)),
                                denotation: String::new(),
                            })
                            .collect(),
                    }),
                },
            )),
            denotation: String::new(),
        }),
        ..Default::default()
    }
}

fn node(op: &str, inputs: &[&str], outputs: &[&str]) -> onnx::NodeProto {
    let b = |s: &&str| Bytes::copy_from_slice(s.as_bytes());
    onnx::NodeProto {
        op_type: Bytes::copy_from_slice(op.as_bytes()),
        input: inputs.iter().map(b).collect(),
        output: outputs.iter().map(b).collect(),
        ..Default::default()
    }
}

fn with_graphs(mut n: onnx::NodeProto, graphs: Vec<(&str, onnx::GraphProto)>) -> onnx::NodeProto {
    n.attribute = graphs
        .into_iter()
        .map(|(name, g)| onnx::AttributeProto {
            name: name.into(),
            r#type: onnx::attribute_proto::AttributeType::Graph as i32,
            g: Some(g),
            ..Default::default()
        })
        .collect();
    n
}

fn floats(name: &str, dims: &[i64]) -> onnx::TensorProto {
    let n: i64 = dims.iter().product();
    onnx::TensorProto {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: 1,
        raw_data: (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect(),
        ..Default::default()
    }
}

fn model(graph: onnx::GraphProto) -> Vec<u8> {
    onnx::ModelProto {
        ir_version: 8,
        opset_import: vec![onnx::OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec()
}

/// Models whose one initializer `w` (UINT8) lives in external data: each location of the
/// `onnx_dir` target's directory, with and without an offset and a length.
fn onnx_dir_models() -> Vec<(String, Vec<u8>)> {
    let entry = |key: &str, value: &str| onnx::StringStringEntryProto {
        key: key.into(),
        value: value.into(),
    };
    let mut out = Vec::new();
    for loc in [
        "data.bin",
        "sub/inner.bin",
        "alias",
        "zero",
        "fifo",
        "out",
        "sub",
    ] {
        for (tag, range) in [("all", None), ("range", Some(("8", "16")))] {
            let dims = if range.is_some() { 16 } else { 64 };
            let mut external = vec![entry("location", loc)];
            if let Some((offset, length)) = range {
                external.push(entry("offset", offset));
                external.push(entry("length", length));
            }
            let w = onnx::TensorProto {
                name: "w".into(),
                dims: vec![dims],
                data_type: 2,
                external_data: external,
                data_location: onnx::tensor_proto::DataLocation::External as i32,
                ..Default::default()
            };
            let g = onnx::GraphProto {
                name: "ext".into(),
                node: vec![node("Identity", &["w"], &["y"])],
                initializer: vec![w],
                output: vec![vi("y", 2, &[dims])],
                ..Default::default()
            };
            let name = format!("{}-{tag}.onnx", loc.replace('/', "_"));
            out.push((name, model(g)));
        }
    }
    out
}

/// The small ONNX models of the ONNX mutation fuzzer.
fn onnx_models() -> Vec<(&'static str, Vec<u8>)> {
    let chain = onnx::GraphProto {
        name: "chain".into(),
        node: vec![
            node("Add", &["x", "w"], &["a"]),
            node("Relu", &["a"], &["y"]),
        ],
        initializer: vec![floats("w", &[2, 3])],
        input: vec![vi("x", 1, &[2, 3])],
        output: vec![vi("y", 1, &[2, 3])],
        ..Default::default()
    };
    let branch = |name: &str, op: &str| onnx::GraphProto {
        name: name.into(),
        node: vec![node(op, &["x"], &[&format!("{name}_y")])],
        output: vec![vi(&format!("{name}_y"), 1, &[2])],
        ..Default::default()
    };
    let mut inner_if = with_graphs(
        node("If", &["c"], &["t_y"]),
        vec![
            ("then_branch", branch("t2", "Neg")),
            ("else_branch", branch("e2", "Abs")),
        ],
    );
    inner_if.name = Bytes::from_static(b"inner");
    let then = onnx::GraphProto {
        name: "t1".into(),
        node: vec![inner_if],
        output: vec![vi("t_y", 1, &[2])],
        ..Default::default()
    };
    let nested = onnx::GraphProto {
        name: "nested".into(),
        node: vec![with_graphs(
            node("If", &["c"], &["y"]),
            vec![("then_branch", then), ("else_branch", branch("e1", "Relu"))],
        )],
        input: vec![vi("c", 9, &[]), vi("x", 1, &[2])],
        output: vec![vi("y", 1, &[2])],
        ..Default::default()
    };
    let body = onnx::GraphProto {
        name: "body".into(),
        node: vec![
            node("Identity", &["cond_in"], &["cond_out"]),
            node("Add", &["v_in", "one"], &["v_out"]),
        ],
        initializer: vec![floats("one", &[1])],
        input: vec![vi("i", 7, &[]), vi("cond_in", 9, &[]), vi("v_in", 1, &[1])],
        output: vec![vi("cond_out", 9, &[]), vi("v_out", 1, &[1])],
        ..Default::default()
    };
    let looped = onnx::GraphProto {
        name: "loop".into(),
        node: vec![with_graphs(
            node("Loop", &["n", "c", "v"], &["v_final"]),
            vec![("body", body)],
        )],
        input: vec![vi("n", 7, &[]), vi("c", 9, &[]), vi("v", 1, &[1])],
        output: vec![vi("v_final", 1, &[1])],
        ..Default::default()
    };
    let typed = onnx::GraphProto {
        name: "typed".into(),
        node: vec![node("Reshape", &["f", "shape"], &["y"])],
        initializer: vec![
            onnx::TensorProto {
                name: "f".into(),
                dims: vec![4],
                data_type: 1,
                float_data: vec![1.0, 2.0, 3.0, 4.0],
                ..Default::default()
            },
            onnx::TensorProto {
                name: "shape".into(),
                dims: vec![2],
                data_type: 7,
                int64_data: vec![2, 2],
                ..Default::default()
            },
            onnx::TensorProto {
                name: "s".into(),
                dims: vec![2],
                data_type: 8,
                string_data: vec![Bytes::from_static(b"ab"), Bytes::from_static(b"")],
                ..Default::default()
            },
        ],
        output: vec![vi("y", 1, &[2, 2])],
        ..Default::default()
    };
    vec![
        ("chain", model(chain)),
        ("nested-if", model(nested)),
        ("loop", model(looped)),
        ("typed", model(typed)),
    ]
}

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [ge_dir, out, onnx_files @ ..] = args.as_slice() else {
        eprintln!("usage: seeds GE_DIR OUT_DIR [MODEL.onnx ...]");
        std::process::exit(2);
    };

    let mut dumps: Vec<PathBuf> = std::fs::read_dir(ge_dir)
        .expect("read GE_DIR")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    dumps.sort();
    let mut models: Vec<(String, Vec<u8>)> = Vec::new();
    for (i, p) in dumps.iter().enumerate() {
        let dump = std::fs::read_to_string(p).expect("read a dump");
        for (k, bytes) in slices(&dump).into_iter().enumerate() {
            models.push((format!("dump{i}-slice{k:02}"), bytes));
        }
    }
    let om_file = std::fs::read(ge_dir.join("root_model.om")).expect("read root_model.om");
    let om_def = om::read(&om_file)
        .and_then(|f| f.model_def().map(|d| d.to_vec()))
        .expect("root_model.om has a ModelDef");
    models.push(("root_model".into(), om_def));

    let (n_text, n_om) = (12, 8);
    for (name, bytes) in &models {
        write(&out.join("model_def"), name, bytes);
    }
    // The text form of about a dozen of the models (text seeds are large; a few suffice).
    for (name, bytes) in models.iter().step_by(models.len().div_ceil(n_text)) {
        let t = text::print_bytes(bytes, "ModelDef").expect("a seed prints as text");
        write(&out.join("text"), &format!("{name}.txt"), t.as_bytes());
    }
    write(&out.join("om"), "root_model.om", &om_file);
    for (name, bytes) in models.iter().step_by(models.len().div_ceil(n_om)) {
        write(
            &out.join("om"),
            &format!("{name}.om"),
            &om::write(name, bytes, b"w"),
        );
    }
    for (name, bytes) in onnx_models() {
        ascendir_onnx::import_model(Bytes::from(bytes.clone()), &Default::default())
            .expect("a small ONNX seed imports");
        write(&out.join("onnx"), &format!("{name}.onnx"), &bytes);
    }
    for p in onnx_files {
        let bytes = std::fs::read(p).expect("read an ONNX file");
        let name = p.file_name().expect("a file name").to_string_lossy();
        write(&out.join("onnx"), &name, &bytes);
    }
    for (name, bytes) in onnx_dir_models() {
        write(&out.join("onnx_dir"), &name, &bytes);
    }
    for target in ["model_def", "text", "om", "onnx", "onnx_dir"] {
        let dir = out.join(target);
        let (n, size) = std::fs::read_dir(&dir)
            .expect("read a corpus directory")
            .map(|e| e.expect("an entry").metadata().expect("metadata").len())
            .fold((0, 0), |(n, s), l| (n + 1, s + l));
        eprintln!("{target}: {n} files, {size} bytes in the corpus");
    }
}
