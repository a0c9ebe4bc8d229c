//! Compiles `proto/ge_ir.proto` (and, for its descriptors only, `proto/onnx.proto`) with protox (no system `protoc` needed) and generates the prost
//! types. The `attr_groups` fields are generated as opaque bytes so that attribute groups of any
//! GE version survive a round trip unchanged; the unmodified descriptor set is kept for the text
//! format.
use std::path::PathBuf;

use protox::prost::Message;
use protox::prost_reflect::prost_types::field_descriptor_proto::Type;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    // The proto lives at the repository root; a packaged crate carries a copy next to it.
    let candidates = [manifest.join("../../proto"), manifest.join("proto")];
    let dir = candidates
        .iter()
        .find(|d| d.join("ge_ir.proto").exists())
        .ok_or("ge_ir.proto not found")?
        .clone();
    println!(
        "cargo:rerun-if-changed={}",
        dir.join("ge_ir.proto").display()
    );
    let fds = protox::compile(["ge_ir.proto"], [&dir])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("ge_ir_descriptor.bin"), fds.encode_to_vec())?;
    // ONNX's descriptors drive the text format of GE's ONNX dumps (`ge_onnx*.pbtxt`); the
    // prost types are those of `ascendir-onnx`.
    println!(
        "cargo:rerun-if-changed={}",
        dir.join("onnx.proto").display()
    );
    let onnx = protox::compile(["onnx.proto"], [&dir])?;
    std::fs::write(out.join("onnx_descriptor.bin"), onnx.encode_to_vec())?;

    // Fields kept as raw bytes by the Rust types: `attr_groups` (opaque, any GE version) and the
    // ops of a graph (decoded and encoded in parallel) and the op's tensor descriptors (decoded
    // once per distinct encoding, shared, and cached on write).
    let mut opaque = fds.clone();
    for file in &mut opaque.file {
        for msg in &mut file.message_type {
            let is_op = msg.name.as_deref() == Some("OpDef");
            let is_graph = msg.name.as_deref() == Some("GraphDef");
            for field in &mut msg.field {
                let raw_desc = (is_op
                    && matches!(field.name.as_deref(), Some("input_desc" | "output_desc")))
                    || (is_graph && field.name.as_deref() == Some("op"));
                if field.type_name.as_deref() == Some(".ge.proto.AttrGroups") || raw_desc {
                    field.r#type = Some(Type::Bytes as i32);
                    field.type_name = None;
                }
            }
        }
    }
    prost_build::Config::new()
        .bytes(["."])
        .btree_map(["."])
        .compile_fds(opaque)?;
    Ok(())
}
