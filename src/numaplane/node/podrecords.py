"""The pods a node has admitted, kept beside the kubelet checkpoints in a state directory.

The kubelet learns its pods from the API server after a restart; numaplane has no API server
for ``admit --state-dir`` and the agent, so it records every admitted pod's manifest in
``numaplane_pods.json`` (written atomically, like the checkpoints).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from numaplane.api.manifest import pod_from_dict, pod_to_manifest
from numaplane.api.pod import Pod
from numaplane.errors import InputError
from numaplane.node.checkpoint import CheckpointStore

POD_RECORDS_FILE = "numaplane_pods.json"


def decode_pod_records(data: bytes | None, source: str) -> list[Pod]:
    """The pods of a records file's bytes (``None``: no file, no pods); ``source`` names it.

    Anything but ``{"pods": [manifest, ...]}`` raises ``InputError`` naming the field.
    """
    if data is None:
        return []
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as err:
        # ValueError covers bytes that are not UTF-8 as well as bad JSON.
        raise InputError(source, f"not a numaplane pod record file: {err}") from err
    if not isinstance(doc, Mapping) or "pods" not in doc:
        raise InputError(source, 'not a numaplane pod record file: expected {"pods": [...]}')
    manifests = doc["pods"]
    if not isinstance(manifests, list):
        raise InputError(source, "expected a list of pod manifests", "pods")
    pods: list[Pod] = []
    seen: dict[str, int] = {}
    for i, manifest in enumerate(manifests):
        if not isinstance(manifest, Mapping):
            raise InputError(
                source, f"expected a pod manifest, got {type(manifest).__name__}", f"pods[{i}]"
            )
        pod = pod_from_dict(manifest, source, path_prefix=f"pods[{i}].")
        if pod.uid in seen:
            raise InputError(
                source, f"pod {pod.key} is recorded twice (first as pods[{seen[pod.uid]}])"
            )
        seen[pod.uid] = i
        pods.append(pod)
    return pods


def encode_pod_records(pods: Iterable[Pod]) -> bytes:
    """A records file's bytes for ``pods``, in admission order."""
    return json.dumps({"pods": [pod_to_manifest(p) for p in pods]}, indent=1).encode()


class PodRecords:
    """Load and save the admitted pods of one state directory."""

    def __init__(self, store: CheckpointStore) -> None:
        self._store = store

    @property
    def path(self) -> str:
        """The records file's path, for messages."""
        return str(self._store.path(POD_RECORDS_FILE))

    def load(self) -> list[Pod]:
        """The recorded pods in admission order (none when the file does not exist)."""
        return decode_pod_records(self._store.read(POD_RECORDS_FILE), self.path)

    def save(self, pods: Iterable[Pod]) -> None:
        """Replace the records with ``pods`` (atomic)."""
        self._store.write(POD_RECORDS_FILE, encode_pod_records(pods))
