//! OM containers through the OM reader, then their MODEL_DEF partition through the decoder.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = ascendir_proto::om::read(data) {
        if let Ok(def) = file.model_def() {
            ascendir_fuzz::check_model_def(def);
        }
    }
});
