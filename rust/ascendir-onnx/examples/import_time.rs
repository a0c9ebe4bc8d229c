//! Time the phases of an ONNX import: `cargo run -r --example import_time -- model.onnx`.
use std::time::Instant;

use ascendir_onnx::{import::import_proto, pb, ImportOptions};
use bytes::Bytes;
use prost::Message;

fn rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = s
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / 1e6
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: import_time MODEL.onnx")?;
    let data = Bytes::from(std::fs::read(&path)?);
    let reps: usize = std::env::args()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    for _ in 0..reps {
        let t0 = Instant::now();
        let model = pb::ModelProto::decode(data.clone())?;
        let t1 = Instant::now();
        let r1 = rss_mb();
        let (g, _) = import_proto(&model, &ImportOptions::default())?;
        let t2 = Instant::now();
        eprintln!(
            "rss after decode {r1:.1} MB, after build {:.1} MB",
            rss_mb()
        );
        drop(g);
        drop(model);
        let t3 = Instant::now();
        eprintln!(
            "decode {:.2} ms, build {:.2} ms, drop {:.2} ms",
            (t1 - t0).as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3,
            (t3 - t2).as_secs_f64() * 1e3
        );
    }
    Ok(())
}
