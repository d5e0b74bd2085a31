#!/bin/sh
# Regenerates the Go bindings in this directory from schema.fbs.
#
# schema.fbs is the upstream TFLite schema (revision 3d) from
# tensorflow/tflite-micro tensorflow/compiler/mlir/lite/schema/schema.fbs
# at commit 90b983c, vendored unmodified with its Apache-2.0 header.
# Debian's flatc 2.0.8 rejects the "(deprecated)" mark on enum values,
# so those marks are stripped from a temporary copy before generation.
# --gen-object-api adds the T structs with Pack and UnPack that
# tflite.SetMetadata and tflite.Repack rewrite models with.
set -eu
cd "$(dirname "$0")"
command -v flatc >/dev/null || { echo "generate.sh: flatc not found (apt-get install flatbuffers-compiler)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -E 's/ \(deprecated\),/,/' schema.fbs > "$tmp/schema.fbs"
flatc --go --gen-object-api --go-namespace schema -o "$tmp/out" "$tmp/schema.fbs"
rm -f ./*_generated.go
for f in "$tmp"/out/schema/*.go; do
	cp "$f" "./$(basename "$f" .go)_generated.go"
done
gofmt -w ./*_generated.go
