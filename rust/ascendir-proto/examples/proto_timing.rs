//! Timing loop for profiling: decode and encode a binary `ModelDef` file repeatedly.
//!
//! `cargo run -r -p ascendir-proto --example proto_timing -- FILE [ROUNDS] [dec|enc|both|scan]`
//!
//! `scan` times the op scan every decode runs first (`wire::precheck_ops`) beside the decode.
#![allow(clippy::print_stdout)] // a command-line timing tool

use std::time::Instant;

/// The extension module's allocator, so that figures match the Python benchmarks.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: proto_timing FILE [ROUNDS] [dec|enc|both|scan]")?;
    let rounds: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(200);
    let what = args.get(3).map(String::as_str).unwrap_or("both");
    let data = std::fs::read(path)?;
    let g = ascendir_proto::decode_graph(&data)?;
    let time = |label: &str, f: &dyn Fn() -> Result<(), Box<dyn std::error::Error>>| {
        let t = Instant::now();
        for _ in 0..rounds {
            f()?;
        }
        println!(
            "{label}: {:.3} ms",
            t.elapsed().as_secs_f64() * 1e3 / rounds as f64
        );
        Ok::<(), Box<dyn std::error::Error>>(())
    };
    if what == "scan" {
        time("op scan", &|| {
            std::hint::black_box(ascendir_proto::wire::precheck_ops(&data)?);
            Ok(())
        })?;
    }
    if what != "enc" {
        // Shared input bytes, as the Python binding passes them (no copy per call).
        let shared = bytes::Bytes::from(data.clone());
        time("decode", &|| {
            let model = ascendir_proto::decode_model_bytes(shared.clone())?;
            std::hint::black_box(ascendir_proto::first_graph(model)?);
            Ok(())
        })?;
    }
    if what != "dec" && what != "scan" {
        time("encode", &|| {
            std::hint::black_box(ascendir_proto::encode_graph(&g)?);
            Ok(())
        })?;
    }
    Ok(())
}
