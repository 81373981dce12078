"""The admitted pods' admissions, kept so that an adopted pod keeps what it was told.

The checkpoints restore what each pod holds, but not the Topology Manager's affinity nor the
admission's explanation: the kubelet recomputes them by admitting its pods again after a
restart, from the pods the API server gives it. The agent has no API server and does not
admit twice, so it writes each admitted pod's ``Admission.to_json()`` to
``numaplane_admissions.json`` (atomically, through ``CheckpointStore``) and, when it adopts the
pod after a restart, shows that admission again and puts each container's affinity back into
the Topology Manager's store.

Write order keeps the file a superset of ``numaplane_pods.json``: an admission is written
before the pod records, a release after them; entries of pods the records do not name are
dropped at load.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from numaplane.api.pod import Pod
from numaplane.errors import InputError
from numaplane.node.admission import Node
from numaplane.node.checkpoint import CheckpointError, CheckpointStore
from numaplane.node.podrecords import PodRecords
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint

_log = logging.getLogger(__name__)

#: The file the admissions are kept in, beside the checkpoints.
ADMISSIONS_FILE = "numaplane_admissions.json"


class AdmissionRecords:
    """Load and save the admissions file of one state directory."""

    def __init__(self, store: CheckpointStore) -> None:
        self._store = store
        self._written: dict[str, Mapping[str, Any]] | None = None

    @property
    def path(self) -> str:
        """The file's path, for messages."""
        return str(self._store.path(ADMISSIONS_FILE))

    def load(self, numa_ids: Iterable[int]) -> dict[str, Mapping[str, Any]]:
        """The recorded admissions by pod uid (none when the file does not exist).

        Raises ``InputError`` (source: the file) when the file is not an admissions file, or
        names a NUMA node outside ``numa_ids``.
        """
        data = self._store.read(ADMISSIONS_FILE)
        if data is None:
            return {}
        known = set(numa_ids)
        try:
            doc = json.loads(data)
            if not isinstance(doc, dict) or not isinstance(doc.get("admissions"), list):
                raise TypeError('expected {"admissions": [...]}')
            found: dict[str, Mapping[str, Any]] = {}
            for index, item in enumerate(doc["admissions"]):
                uid, admission = _entry(item, index, known)
                found[uid] = admission
        except (ValueError, TypeError, RecursionError) as err:
            raise InputError(self.path, f"not a numaplane admissions file: {err}") from err
        self._written = dict(found)
        return found

    def save(self, admissions: Mapping[str, Mapping[str, Any]]) -> None:
        """Replace the file's content with ``admissions`` (atomic; skipped when unchanged)."""
        if self._written is not None and dict(admissions) == self._written:
            return
        doc = {
            "admissions": [
                {"podUID": uid, "admission": admissions[uid]} for uid in sorted(admissions)
            ]
        }
        self._store.write(ADMISSIONS_FILE, json.dumps(doc, indent=1).encode())
        self._written = dict(admissions)


def _entry(item: Any, index: int, numa_ids: set[int]) -> tuple[str, Mapping[str, Any]]:
    where = f"admissions[{index}]"
    if not isinstance(item, dict):
        raise TypeError(f"{where}: expected an object")
    uid, admission = item.get("podUID"), item.get("admission")
    if not isinstance(uid, str) or not uid:
        raise TypeError(f"{where}.podUID: expected a non-empty string")
    if not isinstance(admission, dict):
        raise TypeError(f"{where}.admission: expected an object")
    containers = admission.get("containers")
    if not isinstance(containers, list):
        raise TypeError(f"{where}.admission.containers: expected a list")
    for position, container in enumerate(containers):
        at = f"{where}.admission.containers[{position}]"
        if not isinstance(container, dict) or not isinstance(container.get("name"), str):
            raise TypeError(f"{at}: expected an object with a name")
        _hint(container.get("numa_affinity"), f"{at}.numa_affinity", numa_ids)
    return uid, admission


def _hint(doc: Any, where: str, numa_ids: set[int]) -> TopologyHint | None:
    """A container's stored affinity (``TopologyHint.to_json``'s shape), checked."""
    if doc is None:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("preferred"), bool):
        raise TypeError(f'{where}: expected {{"numa": [...] | null, "preferred": bool}}')
    numa = doc.get("numa")
    if numa is None:
        return TopologyHint(None, doc["preferred"])
    if not isinstance(numa, list) or not numa:
        raise TypeError(f"{where}.numa: expected a non-empty list of NUMA node ids or null")
    for bit in numa:
        if not isinstance(bit, int) or isinstance(bit, bool) or bit not in numa_ids:
            raise ValueError(f"{where}.numa: {bit!r} is not a NUMA node of this machine")
    return TopologyHint(BitMask(*numa), doc["preferred"])


def restore_affinities(node: Node, pod_uid: str, admission: Mapping[str, Any]) -> None:
    """Put the stored affinity of each of the pod's containers back into the Topology
    Manager's store (what the kubelet's re-admission after a restart recomputes)."""
    known = set(node.machine.numa_ids)
    for container in admission.get("containers", ()):
        hint = _hint(container.get("numa_affinity"), "numa_affinity", known)
        if hint is not None:
            node.topology_manager.restore_affinity(pod_uid, container["name"], hint)


class PodBook:
    """What the state directory records of the admitted pods: ``numaplane_pods.json`` and
    their admissions, written in the order that keeps the admissions a superset."""

    def __init__(
        self,
        pods: PodRecords,
        admissions: AdmissionRecords,
        restored: Mapping[str, Mapping[str, Any]],
    ) -> None:
        self._pods = pods
        self._records = admissions
        self._admissions = dict(restored)

    def admission(self, pod_uid: str) -> Mapping[str, Any] | None:
        """The recorded admission of a pod (``Admission.to_json()``), if any."""
        return self._admissions.get(pod_uid)

    def record(self, pod_uid: str, admission: Mapping[str, Any], pods: Sequence[Pod]) -> None:
        """Record a new admission and the admitted ``pods`` (the new one among them).

        Raises ``CheckpointError`` when either file cannot be written.
        """
        self._records.save({**self._admissions, pod_uid: admission})
        self._admissions[pod_uid] = admission
        self._pods.save(pods)

    def forget(self, pod_uid: str, remaining: Sequence[Pod]) -> None:
        """Record a release: ``remaining`` are the pods still admitted.

        Raises ``CheckpointError`` when the pod records cannot be written; the admission is
        forgotten all the same (a leftover entry is dropped at the next load).
        """
        try:
            self._pods.save(remaining)
        finally:
            self._admissions.pop(pod_uid, None)
            try:
                self._records.save(self._admissions)
            except CheckpointError as err:
                _log.error("cannot write the admissions file: %s", err)
