"""The pods a node has admitted, kept beside the kubelet checkpoints in a state directory.

The kubelet learns its pods from the API server after a restart; numaplane has no API server
for ``admit --state-dir`` and the agent, so it records every admitted pod's manifest in
``numaplane_pods.json`` (written atomically, like the checkpoints).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from numaplane.api.manifest import pod_from_dict, pod_to_manifest
from numaplane.api.pod import Pod
from numaplane.errors import InputError
from numaplane.node.checkpoint import CheckpointStore

POD_RECORDS_FILE = "numaplane_pods.json"


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
        data = self._store.read(POD_RECORDS_FILE)
        if data is None:
            return []
        try:
            doc = json.loads(data)
            manifests = doc["pods"]
            if not isinstance(manifests, list):
                raise TypeError("pods is not a list")
        except (ValueError, KeyError, TypeError) as err:
            raise InputError(self.path, f"not a numaplane pod record file: {err}") from err
        return [
            pod_from_dict(m, self.path, path_prefix=f"pods[{i}].") for i, m in enumerate(manifests)
        ]

    def save(self, pods: Iterable[Pod]) -> None:
        """Replace the records with ``pods`` (atomic)."""
        doc = {"pods": [pod_to_manifest(p) for p in pods]}
        self._store.write(POD_RECORDS_FILE, json.dumps(doc, indent=1).encode())
