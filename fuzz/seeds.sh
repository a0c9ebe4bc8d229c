#!/bin/sh
# Writes the seed corpus of every fuzz target into fuzz/corpus/<target>/: slices of the GE
# dumps in tests/data/ge/ (decompressed to a temporary directory first), their text and OM
# forms, the small ONNX models of the ONNX mutation fuzzer and the ONNX files in examples/.
# The generator is the `seeds` example of this crate, an ordinary (uninstrumented) build.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$root"/tests/data/ge/*.gz; do
    gzip -dc "$f" >"$tmp/$(basename "$f" .gz)"
done
env -u RUSTFLAGS cargo run --release --manifest-path "$here/Cargo.toml" --example seeds -- \
    "$tmp" "$here/corpus" "$root"/examples/*.onnx
