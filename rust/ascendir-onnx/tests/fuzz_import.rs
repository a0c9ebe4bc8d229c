//! Mutation fuzzing of the ONNX import: every mutated model must give either a graph that
//! passes the invariant check (and exports without a panic) or an error — never a panic. A
//! second target fuzzes external data: locations, offsets and lengths over a model directory
//! that holds a regular file, a FIFO, a directory, a link to `/dev/zero` and a link out of
//! the directory; every answer must come at once (a FIFO is never opened) and a tensor read
//! from a file is exactly the range it names.
//!
//! The CI run is small. The full run (see docs/FUZZING.md):
//! `ASCENDIR_FUZZ_ITERS=1000000 cargo test -p ascendir-onnx --test fuzz_import -- --nocapture`

use std::path::{Path, PathBuf};

use ascendir_onnx::{export_model, import_model, pb, ExportOptions, ImportOptions};
use bytes::Bytes;
use prost::Message;

/// xorshift64* (the same generator as the ModelDef fuzzer).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn iters(default: usize) -> usize {
    std::env::var("ASCENDIR_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn vi(name: &str, elem: i32, dims: &[i64]) -> pb::ValueInfoProto {
    pb::ValueInfoProto {
        name: name.into(),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: elem,
                shape: Some(pb::TensorShapeProto {
                    dim: dims
                        .iter()
                        .map(|&d| pb::tensor_shape_proto::Dimension {
                            value: Some(pb::tensor_shape_proto::dimension::Value::DimValue(d)),
                            denotation: String::new(),
                        })
                        .collect(),
                }),
            })),
            denotation: String::new(),
        }),
        ..Default::default()
    }
}

fn node(
    op: &str,
    inputs: &[&str],
    outputs: &[&str],
    attrs: Vec<pb::AttributeProto>,
) -> pb::NodeProto {
    let b = |s: &&str| Bytes::copy_from_slice(s.as_bytes());
    pb::NodeProto {
        op_type: Bytes::copy_from_slice(op.as_bytes()),
        input: inputs.iter().map(b).collect(),
        output: outputs.iter().map(b).collect(),
        attribute: attrs,
        ..Default::default()
    }
}

fn graph_attr(name: &str, g: pb::GraphProto) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: pb::attribute_proto::AttributeType::Graph as i32,
        g: Some(g),
        ..Default::default()
    }
}

fn floats(name: &str, dims: &[i64]) -> pb::TensorProto {
    let n: i64 = dims.iter().product();
    pb::TensorProto {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: 1,
        raw_data: Bytes::from(
            (0..n)
                .flat_map(|i| (i as f32).to_le_bytes())
                .collect::<Vec<u8>>(),
        ),
        ..Default::default()
    }
}

fn model(graph: pb::GraphProto) -> pb::ModelProto {
    pb::ModelProto {
        ir_version: 8,
        opset_import: vec![pb::OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(graph),
        ..Default::default()
    }
}

/// Small valid models: a chain with an initializer, nested If bodies capturing an outer value,
/// a Loop with a carried value, typed and string initializers.
fn seeds() -> Vec<Vec<u8>> {
    let chain = pb::GraphProto {
        name: "chain".into(),
        node: vec![
            node("Add", &["x", "w"], &["a"], vec![]),
            node("Relu", &["a"], &["y"], vec![]),
        ],
        initializer: vec![floats("w", &[2, 3])],
        input: vec![vi("x", 1, &[2, 3])],
        output: vec![vi("y", 1, &[2, 3])],
        ..Default::default()
    };
    let branch = |name: &str, op: &str| pb::GraphProto {
        name: name.into(),
        node: vec![node(op, &["x"], &[&format!("{name}_y")], vec![])],
        output: vec![vi(&format!("{name}_y"), 1, &[2])],
        ..Default::default()
    };
    let mut inner_if = node(
        "If",
        &["c"],
        &["t_y"],
        vec![
            graph_attr("then_branch", branch("t2", "Neg")),
            graph_attr("else_branch", branch("e2", "Abs")),
        ],
    );
    inner_if.name = Bytes::from_static(b"inner");
    let then = pb::GraphProto {
        name: "t1".into(),
        node: vec![inner_if],
        output: vec![vi("t_y", 1, &[2])],
        ..Default::default()
    };
    let nested = pb::GraphProto {
        name: "nested".into(),
        node: vec![node(
            "If",
            &["c"],
            &["y"],
            vec![
                graph_attr("then_branch", then),
                graph_attr("else_branch", branch("e1", "Relu")),
            ],
        )],
        input: vec![vi("c", 9, &[]), vi("x", 1, &[2])],
        output: vec![vi("y", 1, &[2])],
        ..Default::default()
    };
    let body = pb::GraphProto {
        name: "body".into(),
        node: vec![
            node("Identity", &["cond_in"], &["cond_out"], vec![]),
            node("Add", &["v_in", "one"], &["v_out"], vec![]),
        ],
        initializer: vec![floats("one", &[1])],
        input: vec![vi("i", 7, &[]), vi("cond_in", 9, &[]), vi("v_in", 1, &[1])],
        output: vec![vi("cond_out", 9, &[]), vi("v_out", 1, &[1])],
        ..Default::default()
    };
    let looped = pb::GraphProto {
        name: "loop".into(),
        node: vec![node(
            "Loop",
            &["n", "c", "v"],
            &["v_final"],
            vec![graph_attr("body", body)],
        )],
        input: vec![vi("n", 7, &[]), vi("c", 9, &[]), vi("v", 1, &[1])],
        output: vec![vi("v_final", 1, &[1])],
        ..Default::default()
    };
    let typed = pb::GraphProto {
        name: "typed".into(),
        node: vec![node("Reshape", &["f", "shape"], &["y"], vec![])],
        initializer: vec![
            pb::TensorProto {
                name: "f".into(),
                dims: vec![4],
                data_type: 1,
                float_data: vec![1.0, 2.0, 3.0, 4.0],
                ..Default::default()
            },
            pb::TensorProto {
                name: "shape".into(),
                dims: vec![2],
                data_type: 7,
                int64_data: vec![2, 2],
                ..Default::default()
            },
            pb::TensorProto {
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
    let out: Vec<Vec<u8>> = [chain, nested, looped, typed]
        .into_iter()
        .map(|g| model(g).encode_to_vec())
        .collect();
    for s in &out {
        import_model(Bytes::from(s.clone()), &ImportOptions::default()).expect("seeds are valid");
    }
    out
}

const INTERESTING: &[u8] = &[
    0x00, 0x01, 0x02, 0x07, 0x08, 0x0a, 0x12, 0x3a, 0x7f, 0x80, 0xff,
];

fn mutate(rng: &mut Rng, seed: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = b.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                b[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                b[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 => {
                let i = rng.below(len + 1);
                b.insert(i, INTERESTING[rng.below(INTERESTING.len())]);
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below(16.min(len - i));
                b.drain(i..i + n);
            }
            4 => b.truncate(rng.below(len + 1)),
            5 if len > 4 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                let chunk = b[i..i + n].to_vec();
                let at = rng.below(len + 1);
                b.splice(at..at, chunk);
            }
            6 => {
                let other = &pool[rng.below(pool.len())];
                if !other.is_empty() {
                    let i = rng.below(other.len());
                    let n = 1 + rng.below((other.len() - i).min(128));
                    let at = rng.below(len + 1);
                    b.splice(at..at, other[i..i + n].iter().copied());
                }
            }
            7 if len > 0 => {
                let i = rng.below(len);
                b.splice(i..i, [0xff, 0xff, 0xff, 0xff, 0x0f]);
            }
            _ => {
                if len > 1 {
                    let i = rng.below(len - 1);
                    b.swap(i, i + 1);
                }
            }
        }
    }
    b
}

/// Import; on success check the invariants and export (and import the export) without panic.
fn check(input: &[u8], opts: &ImportOptions) -> bool {
    let Ok((g, _)) = import_model(Bytes::from(input.to_vec()), opts) else {
        return false;
    };
    for graph in std::iter::once(&g).chain(g.subgraphs.iter()) {
        let problems = graph.check_invariants();
        assert!(
            problems.is_empty(),
            "imported graph breaks invariants: {problems:?}"
        );
    }
    if let Ok(bytes) = export_model(&g, &ExportOptions::default()) {
        let _ = import_model(Bytes::from(bytes), &ImportOptions::default());
    }
    true
}

#[test]
fn mutated_onnx_models_never_panic() {
    let pool = seeds();
    let seed: u64 = std::env::var("ASCENDIR_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x51_7CC1_B727_220A);
    let mut rng = Rng(seed | 1);
    let n = iters(3000);
    let (mut ok, mut err) = (0usize, 0usize);
    for _ in 0..n {
        let s = &pool[rng.below(pool.len())];
        if check(&mutate(&mut rng, s, &pool), &ImportOptions::default()) {
            ok += 1;
        } else {
            err += 1;
        }
    }
    eprintln!("onnx fuzz: {n} inputs, {ok} imported, {err} rejected with an error");
    assert_eq!(ok + err, n);
}

/// A model directory with every kind of thing an external data location can name.
fn hostile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ascendir-fuzz-ext-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let payload: Vec<u8> = (0..64u8).collect();
    std::fs::write(dir.join("data.bin"), &payload).unwrap();
    std::fs::write(dir.join("sub/inner.bin"), &payload).unwrap();
    let outside =
        std::env::temp_dir().join(format!("ascendir-fuzz-outside-{}", std::process::id()));
    std::fs::write(&outside, &payload).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/dev/zero", dir.join("zero")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("out")).unwrap();
        std::os::unix::fs::symlink("data.bin", dir.join("alias")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.join("fifo"))
            .status()
            .is_ok_and(|s| s.success());
        assert!(made, "mkfifo failed");
    }
    dir
}

fn external_model(
    location: &str,
    offset: Option<&str>,
    length: Option<&str>,
    dims: i64,
) -> Vec<u8> {
    let mut entries = vec![pb::StringStringEntryProto {
        key: "location".into(),
        value: location.into(),
    }];
    if let Some(o) = offset {
        entries.push(pb::StringStringEntryProto {
            key: "offset".into(),
            value: o.into(),
        });
    }
    if let Some(l) = length {
        entries.push(pb::StringStringEntryProto {
            key: "length".into(),
            value: l.into(),
        });
    }
    let w = pb::TensorProto {
        name: "w".into(),
        dims: vec![dims],
        data_type: 2, // UINT8: one byte per element
        external_data: entries,
        data_location: pb::tensor_proto::DataLocation::External as i32,
        ..Default::default()
    };
    let g = pb::GraphProto {
        name: "ext".into(),
        node: vec![node("Identity", &["w"], &["y"], vec![])],
        initializer: vec![w],
        output: vec![vi("y", 2, &[dims])],
        ..Default::default()
    };
    model(g).encode_to_vec()
}

#[test]
fn hostile_external_data_is_read_exactly_or_refused() {
    let dir = hostile_dir();
    let opts = ImportOptions {
        base_dir: Some(dir.clone()),
    };
    let locations = [
        "data.bin",
        "sub/inner.bin",
        "alias",
        "zero",
        "fifo",
        "out",
        "sub",
        "missing",
        "../data.bin",
        "/etc/passwd",
        "",
        ".",
        "sub/../data.bin",
    ];
    let numbers = |rng: &mut Rng| -> Option<String> {
        match rng.below(8) {
            0 => None,
            1 => Some("0".into()),
            2 => Some(rng.below(70).to_string()),
            3 => Some(u64::MAX.to_string()),
            4 => Some("-1".into()),
            5 => Some("18446744073709551616".into()),
            6 => Some("x".into()),
            _ => Some((rng.below(16) * 4).to_string()),
        }
    };
    let mut rng = Rng(0x2F1C_0FFE_E000_0001);
    let n = iters(3000) / 3;
    let mut read = 0usize;
    for _ in 0..n.max(200) {
        let loc = locations[rng.below(locations.len())];
        let offset = numbers(&mut rng);
        let length = numbers(&mut rng);
        let dims = [0i64, 1, 4, 16, 64, 65][rng.below(6)];
        let bytes = external_model(loc, offset.as_deref(), length.as_deref(), dims);
        let start = std::time::Instant::now();
        let result = import_model(Bytes::from(bytes), &opts);
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "{loc} {offset:?} {length:?} took {:?}",
            start.elapsed()
        );
        if let Ok((g, _)) = result {
            read += 1;
            assert!(
                matches!(loc, "data.bin" | "sub/inner.bin" | "alias"),
                "'{loc}' was read"
            );
            let c = g.find("w").expect("the initializer");
            let Some(ascendir_ir::AttrValue::Tensor(t)) = g.op(c).unwrap().attr("value") else {
                panic!("no value");
            };
            let off: usize = offset.as_deref().map_or(0, |o| o.parse().unwrap());
            assert_eq!(t.data.len() as i64, dims);
            let want: Vec<u8> = (off..off + t.data.len()).map(|b| b as u8).collect();
            assert_eq!(&t.data[..], &want[..], "bytes of {loc} at {off}");
        }
    }
    eprintln!("external data fuzz: {} models, {read} read", n.max(200));
    let _ = std::fs::remove_dir_all(Path::new(&dir));
}
