"""The device manager's checkpointed state: ``InMemoryState`` mirrored to its checkpoint file.

Upstream keeps the device manager's allocations in memory and rewrites
``kubelet_internal_checkpoint`` after each change (``writeCheckpoint``): one ``PodDevicesEntry``
per pod, container and resource (device ids per NUMA node, the plugin's allocate response), and
the registered devices per resource. Unlike the CPU and memory managers, the device manager has
no policy and *fails open*: at start-up a missing file is no error and writes nothing, and an
unreadable or corrupt one is logged and the manager continues with an empty state
(``Continue after failing to read checkpoint file``). ``strict=True`` refuses instead, for
callers that would rather stop than forget allocations.

A failed write after a change is logged and the change kept, as upstream (the mechanics are
``numaplane.node.checkpoint.CheckpointedState``'s).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path

from numaplane.node.checkpoint import CheckpointedState, CheckpointError, CheckpointStore
from numaplane.node.devicemanager import checkpoint as codec
from numaplane.node.devicemanager.checkpoint import (
    DEVICE_MANAGER_CHECKPOINT,
    DeviceManagerCheckpoint,
    load_checkpoint,
)
from numaplane.node.devicemanager.state import DeviceAllocation, InMemoryState, PodDevicesEntry

_log = logging.getLogger(__name__)


def checkpoint_of(
    entries: Iterable[PodDevicesEntry], registered: Mapping[str, Iterable[str]]
) -> DeviceManagerCheckpoint:
    """The checkpoint ``writeCheckpoint`` writes for the state's rows and registered devices.

    No rows give Go's nil slice (``"PodDeviceEntries":null``), as the kubelet writes it.
    """
    rows = tuple(
        codec.PodDevicesEntry(
            pod_uid=entry.pod_uid,
            container_name=entry.container_name,
            resource_name=entry.resource_name,
            device_ids=entry.allocation.by_numa,
            alloc_resp=entry.allocation.alloc_resp,
        )
        for entry in entries
    )
    return DeviceManagerCheckpoint(
        pod_device_entries=rows or None,
        registered_devices={resource: tuple(ids) for resource, ids in registered.items()},
    )


def state_of(checkpoint: DeviceManagerCheckpoint) -> InMemoryState:
    """An in-memory state holding a checkpoint's rows (file order) and registered devices."""
    restored = InMemoryState()
    for entry in checkpoint.pod_device_entries or ():
        allocation = DeviceAllocation.of(entry.device_ids, entry.alloc_resp)
        restored.set_allocation(
            entry.pod_uid, entry.container_name, entry.resource_name, allocation
        )
    for resource, ids in checkpoint.registered_devices.items():
        restored.set_registered_devices(resource, ids)
    return restored


class CheckpointState(CheckpointedState[InMemoryState]):
    """A device manager ``State`` persisted to ``kubelet_internal_checkpoint`` on every change.

    ``restore_error`` holds the error a fail-open start swallowed (``None`` when the file was
    read, or absent).
    """

    checkpoint_name = DEVICE_MANAGER_CHECKPOINT
    _write_failure_log = "failed to write checkpoint file %s: %s"

    def __init__(
        self,
        store: CheckpointStore,
        cache: InMemoryState,
        *,
        restore_error: CheckpointError | None = None,
    ) -> None:
        """Wrap ``cache``; use ``open`` to restore from the file."""
        super().__init__(store, cache)
        self.restore_error = restore_error

    @classmethod
    def open(cls, state_dir: Path, *, strict: bool = False) -> CheckpointState:
        """Restore the state from ``state_dir`` (``readCheckpoint`` at manager start).

        A missing file gives the empty state. An unreadable or corrupt file gives the empty
        state too (logged, kept in ``restore_error``), unless ``strict``: then its
        ``CheckpointError`` is raised, with ``source`` = the file.
        """
        store = CheckpointStore(state_dir)
        path = store.path(DEVICE_MANAGER_CHECKPOINT)
        try:
            data = store.read(DEVICE_MANAGER_CHECKPOINT)
            if data is None:
                return cls(store, InMemoryState())
            return cls(store, state_of(load_checkpoint(data, source=str(path))))
        except CheckpointError as exc:
            if exc.source is None:
                exc.source = str(path)
            if strict:
                raise
            _log.error(
                "continue after failing to read checkpoint file %s; device allocation info may "
                "NOT be up-to-date: %s",
                path,
                exc,
            )
            return cls(store, InMemoryState(), restore_error=exc)

    def checkpoint(self) -> DeviceManagerCheckpoint:
        """The checkpoint the current state is written as (checksum included)."""
        unsummed = checkpoint_of(self._cache.entries(), self._cache.registered_devices())
        return DeviceManagerCheckpoint(
            unsummed.pod_device_entries,
            unsummed.registered_devices,
            checksum=unsummed.compute_checksum(),
        )

    def _encode(self) -> bytes:
        return self.checkpoint().to_bytes()

    # -- reads ----------------------------------------------------------------------------

    def container_devices(
        self, pod_uid: str, container_name: str, resource: str
    ) -> frozenset[str] | None:
        """See ``StateReader``."""
        return self._cache.container_devices(pod_uid, container_name, resource)

    def container_allocations(
        self, pod_uid: str, container_name: str
    ) -> Mapping[str, DeviceAllocation]:
        """See ``StateReader``."""
        return self._cache.container_allocations(pod_uid, container_name)

    def pod_devices(self, pod_uid: str, resource: str) -> frozenset[str]:
        """See ``StateReader``."""
        return self._cache.pod_devices(pod_uid, resource)

    def pod_uids(self) -> frozenset[str]:
        """See ``StateReader``."""
        return self._cache.pod_uids()

    def container_names(self, pod_uid: str) -> tuple[str, ...]:
        """See ``StateReader``."""
        return self._cache.container_names(pod_uid)

    def allocated_devices(self) -> Mapping[str, frozenset[str]]:
        """See ``StateReader``."""
        return self._cache.allocated_devices()

    def entries(self) -> tuple[PodDevicesEntry, ...]:
        """See ``StateReader``."""
        return self._cache.entries()

    def registered_devices(self) -> Mapping[str, tuple[str, ...]]:
        """See ``StateReader``."""
        return self._cache.registered_devices()

    # -- writes ---------------------------------------------------------------------------

    def set_allocation(
        self, pod_uid: str, container_name: str, resource: str, allocation: DeviceAllocation
    ) -> None:
        """See ``State``; then checkpoint."""
        self._cache.set_allocation(pod_uid, container_name, resource, allocation)
        self._store_state()

    def remove_container(self, pod_uid: str, container_name: str) -> None:
        """See ``State``; then checkpoint."""
        self._cache.remove_container(pod_uid, container_name)
        self._store_state()

    def remove_pods(self, pod_uids: Iterable[str]) -> None:
        """See ``State``; then checkpoint."""
        self._cache.remove_pods(pod_uids)
        self._store_state()

    def set_registered_devices(self, resource: str, device_ids: Iterable[str]) -> None:
        """See ``State``; then checkpoint."""
        self._cache.set_registered_devices(resource, device_ids)
        self._store_state()

    def remove_registered_devices(self, resource: str) -> None:
        """See ``State``; then checkpoint."""
        self._cache.remove_registered_devices(resource)
        self._store_state()
