"""The agent's process records: which process runs each container, kept in the state directory.

Beside the kubelet-format checkpoints and ``numaplane_pods.json``, the agent writes
``numaplane_processes.json`` (atomically, through ``CheckpointStore``) after every process
change. A record names a pid together with the process's start time (``/proc/<pid>/stat``
field 22), so that a restarted agent re-adopts exactly the processes it started and never a
process that merely reuses the pid. Beside the processes, the file keeps every container's
restart count, so that an adopted pod keeps its counts. ``RecordsWriter`` rewrites the file
when a runtime reports a change, from a thread of its own.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from numaplane.agent.runtime import PodRuntime, ProcessRecord
from numaplane.errors import InputError
from numaplane.node.checkpoint import CheckpointError, CheckpointStore

_log = logging.getLogger(__name__)

PROCESS_RECORDS_FILE = "numaplane_processes.json"

#: A container, as ``(pod uid, container name)``.
ContainerKey = tuple[str, str]


@dataclass(frozen=True)
class ProcessSnapshot:
    """What the records file holds: the running processes and every container's restarts."""

    processes: list[ProcessRecord] = field(default_factory=list)
    restarts: Mapping[ContainerKey, int] = field(default_factory=dict)


class ProcessRecords:
    """Load and save the process records of one state directory."""

    def __init__(self, store: CheckpointStore) -> None:
        self._store = store

    @property
    def path(self) -> str:
        """The records file's path, for messages."""
        return str(self._store.path(PROCESS_RECORDS_FILE))

    def load(self) -> list[ProcessRecord]:
        """The recorded processes (none when the file does not exist).

        Raises ``InputError`` (source: the file) when the file is not a process record file.
        """
        return self.load_snapshot().processes

    def load_snapshot(self) -> ProcessSnapshot:
        """The recorded processes and restart counts (a file of an older agent has no
        counts: they are 0). Raises ``InputError`` like ``load``."""
        data = self._store.read(PROCESS_RECORDS_FILE)
        if data is None:
            return ProcessSnapshot()
        try:
            doc = json.loads(data)
            if not isinstance(doc, dict) or not isinstance(doc.get("processes"), list):
                raise TypeError('expected {"processes": [...]}')
            processes = [_record_from_json(item) for item in doc["processes"]]
            counts = doc.get("restartCounts", [])
            if not isinstance(counts, list):
                raise TypeError("restartCounts: expected a list")
            restarts = dict(_count_from_json(item) for item in counts)
        except (ValueError, KeyError, TypeError, RecursionError) as err:
            reason = f"missing key {err}" if isinstance(err, KeyError) else str(err)
            raise InputError(self.path, f"not a numaplane process record file: {reason}") from err
        return ProcessSnapshot(processes, restarts)

    def save(
        self, records: Iterable[ProcessRecord], restarts: Mapping[ContainerKey, int] | None = None
    ) -> None:
        """Replace the records with ``records`` and ``restarts`` (atomic; zero counts are
        left out)."""
        counts = sorted((key, n) for key, n in (restarts or {}).items() if n)
        doc = {
            "processes": [_record_to_json(r) for r in sort_records(records)],
            "restartCounts": [
                {"podUID": pod_uid, "container": name, "restartCount": n}
                for (pod_uid, name), n in counts
            ],
        }
        self._store.write(PROCESS_RECORDS_FILE, json.dumps(doc, indent=1).encode())


def snapshot_of(runtimes: Iterable[PodRuntime]) -> ProcessSnapshot:
    """The processes and restart counts the runtimes report."""
    processes: list[ProcessRecord] = []
    restarts: dict[ContainerKey, int] = {}
    for runtime in runtimes:
        processes.extend(runtime.records())
        for name, count in runtime.restart_counts().items():
            restarts[(runtime.pod_uid, name)] = count
    return ProcessSnapshot(processes, restarts)


def sort_records(records: Iterable[ProcessRecord]) -> list[ProcessRecord]:
    """Records in a stable order (pod, container, pid), so equal sets write equal files."""
    return sorted(records, key=lambda r: (r.pod_uid, r.container, r.pid))


def records_of(records: Sequence[ProcessRecord], pod_uid: str) -> list[ProcessRecord]:
    """The records of one pod."""
    return [r for r in records if r.pod_uid == pod_uid]


def _record_to_json(record: ProcessRecord) -> dict[str, Any]:
    return {
        "podUID": record.pod_uid,
        "container": record.container,
        "pid": record.pid,
        "startTime": record.start_time,
    }


def _record_from_json(item: Any) -> ProcessRecord:
    if not isinstance(item, dict):
        raise TypeError(f"expected an object, got {type(item).__name__}")
    pod_uid, container = item["podUID"], item["container"]
    pid, start = item["pid"], item["startTime"]
    if not isinstance(pod_uid, str) or not isinstance(container, str):
        raise TypeError("podUID and container must be strings")
    if not _is_int(pid) or not _is_int(start):
        raise TypeError("pid and startTime must be integers")
    # No container process is init (1) and none has a negative start; pid 0 is no process.
    if pid < 2 or start < 0:
        raise ValueError(f"pid {pid} with startTime {start} names no container process")
    return ProcessRecord(pod_uid, container, pid, start)


def _count_from_json(item: Any) -> tuple[ContainerKey, int]:
    if not isinstance(item, dict):
        raise TypeError(f"restartCounts: expected an object, got {type(item).__name__}")
    pod_uid, container, count = item["podUID"], item["container"], item["restartCount"]
    if not isinstance(pod_uid, str) or not isinstance(container, str):
        raise TypeError("restartCounts: podUID and container must be strings")
    if not _is_int(count) or count < 0:
        raise TypeError("restartCounts: restartCount must be a non-negative integer")
    return (pod_uid, container), count


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class RecordsWriter:
    """Keeps the records file up to date: ``save`` writes now; ``wake`` (what the runtimes
    call on a process change) has the writer thread write soon, so that a runtime never waits
    for the file. ``current(exclude)`` is what to record, without pod ``exclude``;
    a failed write is logged and passed to ``on_error``."""

    def __init__(
        self,
        records: ProcessRecords,
        current: Callable[[str | None], ProcessSnapshot],
        on_error: Callable[[str], None],
    ) -> None:
        self._records = records
        self._current = current
        self._on_error = on_error
        self._lock = threading.Lock()
        self._dirty = threading.Event()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the writer thread."""
        self._thread = threading.Thread(target=self._loop, name="process-records", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Ask for a write soon."""
        self._dirty.set()

    def save(self, exclude: str | None = None) -> None:
        """Write the records now."""
        with self._lock:
            try:
                snapshot = self._current(exclude)
                self._records.save(snapshot.processes, snapshot.restarts)
            except CheckpointError as err:
                self._on_error(str(err))
                _log.error("cannot write the process records: %s", err)

    def close(self) -> None:
        """Stop the writer thread (a last write is the caller's ``save``)."""
        self._closing.set()
        if self._thread is not None:
            self._thread.join(2.0)

    def _loop(self) -> None:
        while not self._closing.is_set():
            if self._dirty.wait(0.5):
                self._dirty.clear()
                self.save()
