#!/usr/bin/env bash
# Regenerate the Python modules of the Kubernetes protobuf messages the API server decodes
# (src/numaplane/apiserver/protobuf/*.proto: hand-written, with Kubernetes' package names,
# message names and field numbers). Needs grpcio-tools (python3 -m grpc_tools.protoc).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$repo/src"
dir="numaplane/apiserver/protobuf"

# Compiling relative to src/ makes the generated modules import each other by their full
# package path (numaplane.apiserver.protobuf.meta_v1_pb2).
cd "$src"
python3 -m grpc_tools.protoc \
  --proto_path="$src" \
  --python_out="$src" \
  --pyi_out="$src" \
  "$dir"/*.proto
# The stubs subclass protobuf's Message, which mypy only sees as Any (no protobuf type stubs
# here); the file-level comment keeps strict mypy quiet about the generated files themselves.
for pyi in "$src/$dir"/*_pb2.pyi; do
  { echo "# mypy: ignore-errors"; cat "$pyi"; } >"$pyi.tmp" && mv "$pyi.tmp" "$pyi"
done
echo "generated $dir/*_pb2.py with $(python3 -m grpc_tools.protoc --version)"
