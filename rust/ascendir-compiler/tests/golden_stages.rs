//! `examples/transformer_block.onnx` compiled from Rust alone (the builtin op table, no
//! Python), its stage dumps compared with the golden files under
//! `tests/golden/transformer_block/` (kernel cache keys, which carry the build id, read as
//! `<key>`). A change that moves a stage shows as a diff of that
//! stage; after reviewing it, regenerate the files with
//! `ASCENDIR_UPDATE_GOLDEN=1 cargo test -p ascendir-compiler --test golden_stages`.

use std::path::{Path, PathBuf};

use ascendir_compiler::load::{load, Source};
use ascendir_compiler::{compile, CompileOptions};
use ascendir_ir::infer::NoCustom;

/// `text` with every run of 64 hex digits (a kernel's cache key, which carries the build id
/// and so changes with any source change) replaced by `<key>`.
fn without_keys(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if b[i].is_ascii_hexdigit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_hexdigit() {
                i += 1;
            }
            if i - start == 64 {
                out.push_str(&text[copied..start]);
                out.push_str("<key>");
                copied = i;
            }
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/transformer_block")
}

#[test]
fn transformer_block_stage_dumps_match_the_golden_files() {
    assert_eq!(ascendir_ir::registry::builtin_table_error(), None);
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/transformer_block.onnx");
    let g = load(&Source::Path(model)).expect("the example loads");
    let cm = compile(&g, &CompileOptions::default(), &mut NoCustom, true).expect("it compiles");
    assert!(!cm.kernels.is_empty(), "the block compiles to kernels");
    let dir = golden_dir();
    let update = std::env::var("ASCENDIR_UPDATE_GOLDEN").as_deref() == Ok("1");
    if update {
        std::fs::create_dir_all(&dir).expect("the golden directory");
        for entry in std::fs::read_dir(&dir)
            .expect("the golden directory")
            .flatten()
        {
            std::fs::remove_file(entry.path()).expect("an old golden file is removed");
        }
    }
    let mut names: Vec<&str> = Vec::new();
    let mut differ: Vec<String> = Vec::new();
    for (name, text) in &cm.dumps {
        names.push(name);
        let text = &without_keys(text);
        let path = dir.join(name);
        if update {
            std::fs::write(&path, text).expect("a golden file is written");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if &want == text => {}
            Ok(want) => {
                let line = want
                    .lines()
                    .zip(text.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| want.lines().count().min(text.lines().count()));
                differ.push(format!("{name} (first difference at line {})", line + 1));
            }
            Err(_) => differ.push(format!("{name} (no golden file)")),
        }
    }
    if !update {
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        on_disk.sort();
        for f in on_disk {
            if !names.contains(&f.as_str()) {
                differ.push(format!("{f} (a golden file no stage dumps)"));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "stage dumps differ from tests/golden/transformer_block: {}; review, then regenerate \
         with ASCENDIR_UPDATE_GOLDEN=1 cargo test -p ascendir-compiler --test golden_stages",
        differ.join(", ")
    );
}
