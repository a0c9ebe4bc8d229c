//! Mutation fuzzing of the decoders over real GE data: every mutated input must give either a
//! model whose graphs pass the invariant check or a decode error — never a panic.
//!
//! The CI run is small. For the full run (see docs/FUZZING.md):
//! `ASCENDIR_FUZZ_ITERS=1000000 cargo test --release -p ascendir-proto --test fuzz_decode -- --nocapture`

use std::path::PathBuf;

use ascendir_proto::{decode_model, om, pb, text, ProtoError};
use prost::Message;

/// xorshift64*: deterministic, seedable, no dependency.
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

/// The GE dumps (`ASCENDIR_GE_TESTDATA`, else `shared/testdata/ge` next to the repository).
fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("ASCENDIR_GE_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/ge")
        });
    dir.exists().then_some(dir)
}

/// Small valid models cut out of the real dumps (consecutive ops, edges kept when both ends
/// are inside), plus the real OM's ModelDef.
fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let Some(dir) = data_dir() else {
        // Without the shared data, fuzz a small synthetic model.
        let def = pb::ModelDef {
            name: "m".into(),
            graph: vec![pb::GraphDef {
                name: "g".into(),
                op: [
                    pb::OpDef {
                        name: "a".into(),
                        r#type: "Data".into(),
                        output_desc: vec![pb::TensorDescriptor::default().encode_to_vec().into()],
                        ..Default::default()
                    },
                    pb::OpDef {
                        name: "b".into(),
                        r#type: "Relu".into(),
                        input: vec!["a:0".into(), "a:-1".into()],
                        input_desc: vec![pb::TensorDescriptor::default().encode_to_vec().into()],
                        ..Default::default()
                    },
                ]
                .iter()
                .map(|o| o.encode_to_vec().into())
                .collect(),
                ..Default::default()
            }],
            ..Default::default()
        };
        out.push(def.encode_to_vec());
        return out;
    };
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for p in names {
        if p.extension().is_some_and(|x| x == "txt") {
            let def = text::parse_model_def(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let g = &def.graph[0];
            let all: Vec<pb::OpDef> =
                g.op.iter()
                    .map(|b| pb::OpDef::decode(b.clone()).unwrap())
                    .collect();
            for (k, chunk) in all.chunks(12).enumerate().take(40) {
                let inside: std::collections::HashSet<&str> =
                    chunk.iter().map(|o| o.name.as_str()).collect();
                let ops = chunk
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
                        op: ops,
                        ..Default::default()
                    }],
                    attr: def.attr.clone(),
                    ..Default::default()
                };
                let bytes = small.encode_to_vec();
                decode_model(&bytes).expect("seed slices are valid");
                out.push(bytes);
            }
        }
    }
    let om_file = std::fs::read(dir.join("root_model.om")).unwrap();
    out.push(om::read(&om_file).unwrap().model_def().unwrap().to_vec());
    out
}

const INTERESTING: &[u8] = &[
    0x00, 0x01, 0x02, 0x07, 0x08, 0x0a, 0x12, 0x3a, 0x7f, 0x80, 0xff,
];

fn mutate(rng: &mut Rng, seed: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
    let mut b = seed.to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
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
                // Duplicate a range (repeated fields, overlapping lengths).
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                let chunk = b[i..i + n].to_vec();
                let at = rng.below(len + 1);
                b.splice(at..at, chunk);
            }
            6 => {
                // Splice in a piece of another seed.
                let other = &pool[rng.below(pool.len())];
                if !other.is_empty() {
                    let i = rng.below(other.len());
                    let n = 1 + rng.below((other.len() - i).min(128));
                    let at = rng.below(len + 1);
                    b.splice(at..at, other[i..i + n].iter().copied());
                }
            }
            7 if len > 0 => {
                // A huge varint (length or index) somewhere.
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

/// The one-pass decoder and the full decoder agree: both accept (with the same encoding of
/// the result) or both reject with the same error.
fn same_as_full_decoder(input: &[u8], fast: &Result<ascendir_proto::Model, ProtoError>) {
    let full = ascendir_proto::reference::decode_model(input);
    match (fast, &full) {
        (Ok(a), Ok(b)) => {
            let ea = ascendir_proto::encode_model(&a.meta, &a.graphs.iter().collect::<Vec<_>>());
            let eb = ascendir_proto::encode_model(&b.meta, &b.graphs.iter().collect::<Vec<_>>());
            assert_eq!(ea, eb, "one-pass and full decoder disagree on {input:?}");
        }
        (Err(a), Err(b)) => assert_eq!(a, b, "different errors for {input:?}"),
        _ => panic!(
            "one-pass decoder gives {:?}, full decoder {:?}, for {input:?}",
            fast.as_ref().map(|_| ()),
            full.as_ref().map(|_| ())
        ),
    }
}

fn check(input: &[u8]) -> bool {
    let res = decode_model(input);
    same_as_full_decoder(input, &res);
    match res {
        Ok(m) => {
            for g in m
                .graphs
                .iter()
                .chain(m.graphs.iter().flat_map(|g| g.subgraphs.iter()))
            {
                let problems = g.check_invariants();
                assert!(
                    problems.is_empty(),
                    "decoded graph breaks invariants: {problems:?}"
                );
            }
            // Whatever decodes also encodes and decodes again to the same bytes.
            let refs: Vec<_> = m.graphs.iter().collect();
            let again = ascendir_proto::encode_model(&m.meta, &refs).expect("re-encode");
            let m2 = decode_model(&again).expect("re-decode");
            let refs2: Vec<_> = m2.graphs.iter().collect();
            assert_eq!(
                ascendir_proto::encode_model(&m2.meta, &refs2).unwrap(),
                again
            );
            true
        }
        Err(_) => false,
    }
}

/// `ASCENDIR_FUZZ_ITERS` (the binary ModelDef count; the text and OM fuzzers run a fixed
/// fraction of it), 3 000 by default.
fn env_iters() -> usize {
    std::env::var("ASCENDIR_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

/// `ASCENDIR_FUZZ_SEED`, mixed into each fuzzer's own constant (the defaults reproduce the
/// runs recorded in docs/FUZZING.md).
fn env_seed(own: u64) -> u64 {
    std::env::var("ASCENDIR_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(own, |s| s ^ own.rotate_left(17))
}

#[test]
fn mutated_real_models_never_panic() {
    let iters = env_iters();
    let seed = std::env::var("ASCENDIR_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15);
    let pool = seeds();
    let mut rng = Rng(seed | 1);
    let (mut ok, mut err) = (0usize, 0usize);
    for _ in 0..iters {
        let s = &pool[rng.below(pool.len())];
        let input = mutate(&mut rng, s, &pool);
        if check(&input) {
            ok += 1;
        } else {
            err += 1;
        }
    }
    eprintln!("fuzz: {iters} inputs, {ok} decoded, {err} rejected with an error");
    assert_eq!(ok + err, iters);
}

#[test]
fn mutated_text_never_panics() {
    let iters = env_iters() / 6;
    let pool = seeds();
    let texts: Vec<Vec<u8>> = pool
        .iter()
        .take(8)
        .map(|b| text::print_bytes(b, "ModelDef").unwrap().into_bytes())
        .collect();
    let mut rng = Rng(env_seed(0xD1B5_4A32_D192_ED03) | 1);
    for _ in 0..iters {
        let s = &texts[rng.below(texts.len())];
        let input = mutate(&mut rng, s, &texts);
        let Ok(t) = std::str::from_utf8(&input) else {
            continue;
        };
        if let Ok(bytes) = text::parse_to_bytes(t, "ModelDef") {
            let _ = check(&bytes);
        }
    }
}

#[test]
fn mutated_om_files_never_panic() {
    let pool = seeds();
    let files: Vec<Vec<u8>> = pool
        .iter()
        .take(4)
        .map(|b| om::write("m", b, b"w"))
        .collect();
    let mut rng = Rng(env_seed(0xABCD_EF01_2345_6789) | 1);
    for _ in 0..env_iters() * 2 / 3 {
        let s = &files[rng.below(files.len())];
        let input = mutate(&mut rng, s, &files);
        if let Ok(f) = om::read(&input) {
            if let Ok(def) = f.model_def() {
                let _ = check(def);
            }
        }
    }
}
