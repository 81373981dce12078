"""Kubernetes' protobuf wire format for request bodies: hand-written ``.proto`` files with
Kubernetes' package names, message names and field numbers, their generated ``_pb2`` modules
(``scripts/gen_kube_protos.sh``), and :mod:`.codec`, which turns a body into the JSON object the
rest of the server works on."""
