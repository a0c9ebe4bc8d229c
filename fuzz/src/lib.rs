//! The oracles shared by the fuzz targets. They mirror the deterministic mutation fuzzers
//! (`rust/ascendir-proto/tests/fuzz_decode.rs` and `rust/ascendir-onnx/tests/fuzz_import.rs`):
//! an input must give either a valid result or a typed error, and any broken expectation
//! panics, which libFuzzer reports as a crash.

use ascendir_ir::Graph;
use ascendir_onnx::{export_model, import_model, ExportOptions, ImportOptions};
use ascendir_proto::{decode_model, encode_model, Model, ProtoError};

/// Panic when a graph breaks the IR invariants.
fn assert_invariants(graph: &Graph, what: &str) {
    let problems = graph.check_invariants();
    assert!(
        problems.is_empty(),
        "{what} graph '{}' breaks invariants: {problems:?}",
        graph.name()
    );
}

/// The encoding of a decoded model (or the error encoding gives).
fn encoding(model: &Model) -> Result<Vec<u8>, ProtoError> {
    encode_model(&model.meta, &model.graphs.iter().collect::<Vec<_>>())
}

/// Decode a binary `ModelDef` with the one-pass decoder and with the reference decoder.
///
/// Both must agree: both accept with the same encoding of the result, or both reject with the
/// same error. When the model decodes, every graph and subgraph passes the invariant check,
/// and the model re-encodes to bytes that are stable after one more decode. Returns whether
/// the input was accepted.
pub fn check_model_def(data: &[u8]) -> bool {
    let fast = decode_model(data);
    let full = ascendir_proto::reference::decode_model(data);
    match (&fast, &full) {
        (Ok(a), Ok(b)) => assert_eq!(
            encoding(a),
            encoding(b),
            "the one-pass and the reference decoder give different models"
        ),
        (Err(a), Err(b)) => assert_eq!(
            a, b,
            "the one-pass and the reference decoder give different errors"
        ),
        (Ok(_), Err(e)) => panic!("only the reference decoder rejects the input: {e}"),
        (Err(e), Ok(_)) => panic!("only the one-pass decoder rejects the input: {e}"),
    }
    let Ok(model) = fast else {
        return false;
    };
    for graph in model
        .graphs
        .iter()
        .chain(model.graphs.iter().flat_map(|g| g.subgraphs.iter()))
    {
        assert_invariants(graph, "decoded");
    }
    let again = encoding(&model).expect("a decoded model encodes");
    let model2 = decode_model(&again).expect("the encoding of a decoded model decodes");
    assert_eq!(
        encoding(&model2).expect("a decoded model encodes"),
        again,
        "the encoding is not stable after one more decode"
    );
    true
}

/// Import ONNX model bytes. When they import, every graph passes the invariant check, and
/// the graph exports and the export imports again without a panic (either may give an error).
/// Returns whether the input was imported.
pub fn check_onnx(data: &[u8]) -> bool {
    let Ok((graph, _)) = import_model(
        bytes::Bytes::copy_from_slice(data),
        &ImportOptions::default(),
    ) else {
        return false;
    };
    for g in std::iter::once(&graph).chain(graph.subgraphs.iter()) {
        assert_invariants(g, "imported");
    }
    if let Ok(out) = export_model(&graph, &ExportOptions::default()) {
        let _ = import_model(bytes::Bytes::from(out), &ImportOptions::default());
    }
    true
}

/// The directory the `onnx_dir` target imports from, made once per process: `data.bin` (64
/// bytes, byte `i` = `i`), `sub/inner.bin` (the same), the symlinks `alias` (to `data.bin`),
/// `zero` (to `/dev/zero`) and `out` (to a file outside the directory), the FIFO `fifo` and
/// the directory `sub`. Only the first three may ever be read.
fn hostile_dir() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("ascendir-fuzz-{}", std::process::id()));
        let dir = base.join("model");
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(dir.join("sub")).expect("create the model directory");
        let bytes: Vec<u8> = (0..64u8).collect();
        std::fs::write(dir.join("data.bin"), &bytes).expect("write data.bin");
        std::fs::write(dir.join("sub/inner.bin"), &bytes).expect("write sub/inner.bin");
        std::fs::write(base.join("outside.bin"), &bytes).expect("write outside.bin");
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink("data.bin", dir.join("alias")).expect("symlink alias");
            symlink("/dev/zero", dir.join("zero")).expect("symlink zero");
            symlink(base.join("outside.bin"), dir.join("out")).expect("symlink out");
            let made = std::process::Command::new("mkfifo")
                .arg(dir.join("fifo"))
                .status()
                .is_ok_and(|s| s.success());
            assert!(made, "mkfifo failed");
        }
        dir
    })
}

/// Import ONNX model bytes whose external data lives in [`hostile_dir`]: a read of
/// `/dev/zero` shows as an out-of-memory input, a blocking open of the FIFO as a timeout.
/// (Which files may be read, and that exactly the named range is, is checked by the
/// deterministic fuzzer in `rust/ascendir-onnx/tests/fuzz_import.rs`, which knows what each
/// model names.) Then as [`check_onnx`]. Returns whether the input was imported.
pub fn check_onnx_dir(data: &[u8]) -> bool {
    let opts = ImportOptions {
        base_dir: Some(hostile_dir().to_path_buf()),
    };
    let Ok((graph, _)) = import_model(bytes::Bytes::copy_from_slice(data), &opts) else {
        return false;
    };
    for g in std::iter::once(&graph).chain(graph.subgraphs.iter()) {
        assert_invariants(g, "imported");
    }
    if let Ok(out) = export_model(&graph, &ExportOptions::default()) {
        let _ = import_model(bytes::Bytes::from(out), &opts);
    }
    true
}
