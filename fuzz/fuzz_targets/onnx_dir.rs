//! ONNX model bytes with external data, imported from a directory of hostile files (a
//! symlink to `/dev/zero`, a FIFO, a symlink leaving the directory).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ascendir_fuzz::check_onnx_dir(data);
});
