//! Text dumps (protobuf text format of `ModelDef`) through the text parser, then the decoder.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(bytes) = ascendir_proto::text::parse_to_bytes(text, "ModelDef") {
        ascendir_fuzz::check_model_def(&bytes);
    }
});
