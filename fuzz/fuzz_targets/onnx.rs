//! ONNX model bytes through the importer, then export and import again.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ascendir_fuzz::check_onnx(data);
});
