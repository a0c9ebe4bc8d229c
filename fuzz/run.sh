#!/bin/sh
# Builds a fuzz target with libFuzzer instrumentation on stable Rust and runs it.
#
#   fuzz/run.sh TARGET SECONDS [LIBFUZZER_OPTION ...]   fuzz for SECONDS seconds
#   fuzz/run.sh TARGET runs=N [LIBFUZZER_OPTION ...]    fuzz N inputs
#   fuzz/run.sh TARGET FILE ...                         run the target once on each FILE
#   fuzz/run.sh TARGET build                            only build
#
# TARGET is model_def, text, om, onnx or onnx_dir. The corpus is fuzz/corpus/TARGET (make
# the seeds with fuzz/seeds.sh first); crashes, timeouts and out-of-memory inputs are written to
# fuzz/artifacts/TARGET/. The build goes to CARGO_TARGET_DIR (default fuzz/target), under
# the host triple, so that it never mixes with uninstrumented builds.
set -eu
if [ $# -lt 2 ]; then
    sed -n '3,8p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
target=$1
what=$2
shift 2
case $target in
model_def | om) max_len=16384 ;;
text) max_len=65536 ;;
onnx | onnx_dir) max_len=65536 ;;
*)
    echo "unknown target '$target' (model_def, text, om, onnx, onnx_dir)" >&2
    exit 2
    ;;
esac

host=$(rustc -vV | sed -n 's/^host: //p')
target_dir=${CARGO_TARGET_DIR:-$here/target}
RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module \
-Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares \
-Cdebug-assertions -Coverflow-checks" \
    cargo build --release --manifest-path "$here/Cargo.toml" --target "$host" \
    --target-dir "$target_dir" --bin "$target"
bin=$target_dir/$host/release/$target
mkdir -p "$here/corpus/$target" "$here/artifacts/$target"

case $what in
build) exit 0 ;;
runs=*) budget="-runs=${what#runs=}" ;;
*[!0-9]*)
    # Files to reproduce: libFuzzer runs each once and reports the first failure.
    exec "$bin" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$here/artifacts/$target/" "$what" "$@"
    ;;
*) budget="-max_total_time=$what" ;;
esac

exec "$bin" "$here/corpus/$target" \
    -max_len="$max_len" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$here/artifacts/$target/" -print_final_stats=1 \
    "$budget" "$@"
