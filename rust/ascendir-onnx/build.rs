//! Compiles `proto/onnx.proto` with protox (no system `protoc` needed) and generates the prost
//! types. Every `bytes` field is generated as `bytes::Bytes`, so decoding from a `Bytes` buffer
//! slices tensor payloads instead of copying them.
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let candidates = [manifest.join("../../proto"), manifest.join("proto")];
    let dir = candidates
        .iter()
        .find(|d| d.join("onnx.proto").exists())
        .ok_or("onnx.proto not found")?
        .clone();
    println!(
        "cargo:rerun-if-changed={}",
        dir.join("onnx.proto").display()
    );
    let fds = protox::compile(["onnx.proto"], [&dir])?;
    // A boxed `t` keeps AttributeProto small (most attributes are not tensors).
    prost_build::Config::new()
        .bytes(["."])
        .boxed(".onnx.AttributeProto.t")
        .compile_fds(fds)?;
    Ok(())
}
