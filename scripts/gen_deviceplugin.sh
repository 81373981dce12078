#!/usr/bin/env bash
# Regenerate the Python stubs of the device plugin API (v1beta1) from its .proto.
# Needs grpcio-tools (python3 -m grpc_tools.protoc). Run from anywhere; writes next to the proto.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$repo/src"
proto="numaplane/deviceplugin/v1beta1/api.proto"

# Compiling relative to src/ makes the generated modules import each other by their full
# package path (numaplane.deviceplugin.v1beta1.api_pb2).
cd "$src"
python3 -m grpc_tools.protoc \
  --proto_path="$src" \
  --python_out="$src" \
  --pyi_out="$src" \
  --grpc_python_out="$src" \
  "$proto"
# The stubs subclass protobuf's Message, which mypy only sees as Any (no protobuf type stubs
# here); the file-level comment keeps strict mypy quiet about the generated file itself while
# callers still get its field types.
pyi="$src/numaplane/deviceplugin/v1beta1/api_pb2.pyi"
{ echo "# mypy: ignore-errors"; cat "$pyi"; } >"$pyi.tmp" && mv "$pyi.tmp" "$pyi"
echo "generated stubs for $proto with $(python3 -m grpc_tools.protoc --version)"
