//! Compiles `proto/ascendc_ir.proto` with protox (no system `protoc` needed) into prost types.
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let candidates = [manifest.join("../../proto"), manifest.join("proto")];
    let dir = candidates
        .iter()
        .find(|d| d.join("ascendc_ir.proto").exists())
        .ok_or("ascendc_ir.proto not found")?
        .clone();
    println!(
        "cargo:rerun-if-changed={}",
        dir.join("ascendc_ir.proto").display()
    );
    let fds = protox::compile(["ascendc_ir.proto"], [&dir])?;
    prost_build::Config::new()
        .btree_map(["."])
        .compile_fds(fds)?;
    Ok(())
}
