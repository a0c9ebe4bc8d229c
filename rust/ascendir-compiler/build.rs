//! The build id: a digest of the sources of this crate and of every crate of ours it builds
//! on (and of the protocol files and the lock file), given to the crate as
//! `ASCENDIR_BUILD_ID`. The compile cache keys carry it, so a tree rebuilt after a change at
//! the same version never reads an archive an earlier build wrote; an unchanged tree keeps
//! its id, and its cache.
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Every file under `dir`, sorted (nothing for a missing directory).
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let rust = manifest.join("..");
    let mut inputs: Vec<PathBuf> = Vec::new();
    for krate in [
        "ascendir-ir",
        "ascendir-wire",
        "ascendir-asc",
        "ascendir-proto",
        "ascendir-onnx",
        "ascendir-compiler",
    ] {
        let dir = rust.join(krate);
        for part in ["src", "Cargo.toml", "build.rs"] {
            inputs.push(dir.join(part));
        }
    }
    inputs.push(rust.join("../proto"));
    inputs.push(rust.join("../Cargo.lock"));
    let mut h = Sha256::new();
    for input in &inputs {
        println!("cargo:rerun-if-changed={}", input.display());
        let mut list = Vec::new();
        if input.is_dir() {
            files(input, &mut list);
        } else if input.is_file() {
            list.push(input.clone());
        }
        for f in list {
            let rel = f.strip_prefix(&rust).unwrap_or(&f);
            h.update(rel.to_string_lossy().as_bytes());
            h.update([0]);
            h.update(std::fs::read(&f)?);
            h.update([0]);
        }
    }
    let id: String = h
        .finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=ASCENDIR_BUILD_ID={id}");
    Ok(())
}
