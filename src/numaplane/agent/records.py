"""The agent's process records: which process runs each container, kept in the state directory.

Beside the kubelet-format checkpoints and ``numaplane_pods.json``, the agent writes
``numaplane_processes.json`` (atomically, through ``CheckpointStore``) after every process
change. A record names a pid together with the process's start time (``/proc/<pid>/stat``
field 22), so that a restarted agent re-adopts exactly the processes it started and never a
process that merely reuses the pid. ``RecordsWriter`` rewrites the file when a runtime reports
a change, from a thread of its own.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from numaplane.agent.runtime import ProcessRecord
from numaplane.errors import InputError
from numaplane.node.checkpoint import CheckpointError, CheckpointStore

_log = logging.getLogger(__name__)

PROCESS_RECORDS_FILE = "numaplane_processes.json"


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
        data = self._store.read(PROCESS_RECORDS_FILE)
        if data is None:
            return []
        try:
            doc = json.loads(data)
            return [_record_from_json(item) for item in doc["processes"]]
        except (ValueError, KeyError, TypeError) as err:
            raise InputError(self.path, f"not a numaplane process record file: {err}") from err

    def save(self, records: Iterable[ProcessRecord]) -> None:
        """Replace the records with ``records`` (atomic)."""
        doc = {"processes": [_record_to_json(r) for r in sort_records(records)]}
        self._store.write(PROCESS_RECORDS_FILE, json.dumps(doc, indent=1).encode())


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
    if not isinstance(pid, int) or not isinstance(start, int) or isinstance(pid, bool):
        raise TypeError("pid and startTime must be integers")
    return ProcessRecord(pod_uid, container, pid, start)


class RecordsWriter:
    """Keeps the records file up to date: ``save`` writes now; ``wake`` (what the runtimes
    call on a process change) has the writer thread write soon, so that a runtime never waits
    for the file. ``current(exclude)`` lists the processes to record, without pod ``exclude``;
    a failed write is logged and passed to ``on_error``."""

    def __init__(
        self,
        records: ProcessRecords,
        current: Callable[[str | None], list[ProcessRecord]],
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
                self._records.save(self._current(exclude))
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
