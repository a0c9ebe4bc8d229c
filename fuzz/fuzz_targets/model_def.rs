//! Binary `ModelDef` bytes through the decoder, checked against the reference decoder.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ascendir_fuzz::check_model_def(data);
});
