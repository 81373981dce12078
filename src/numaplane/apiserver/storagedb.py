"""The SQLite side of :class:`~numaplane.apiserver.storage.ClusterStore`: the schema, loading,
and the writer thread that group-commits.

Table ``revisions`` holds one row per write: the object after it (for a deletion, its last state
at the deletion's rv) and the rv of the key's previous revision. Table ``meta`` holds the newest
rv (written in every transaction, so it never goes back even when compaction removes the newest
rows) and the compacted rv. Compaction at rv C deletes every row at or below C that a later row at
or below C supersedes, and every deletion row at or below C: what is left at or below C is exactly
the state at C.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from numaplane.apiserver.watchcache import ADDED, DELETED, MODIFIED, ObjectKey

_TYPE_CODES: Final = {ADDED: 1, MODIFIED: 2, DELETED: 3}
_CODE_TYPES: Final = {code: name for name, code in _TYPE_CODES.items()}

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS revisions (
    rv INTEGER PRIMARY KEY,
    type INTEGER NOT NULL,
    resource TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    prev_rv INTEGER NOT NULL,
    data BLOB NOT NULL
);
INSERT OR IGNORE INTO meta VALUES ('rv', 0), ('compacted', 0);
"""


def object_rv(obj: dict[str, Any]) -> int:
    """The resourceVersion the store wrote into ``obj``."""
    return int(obj["metadata"]["resourceVersion"])


@dataclass(slots=True)
class PendingWrite:
    """One accepted write waiting for its commit."""

    rv: int
    type: str
    key: ObjectKey
    obj: dict[str, Any]
    prev: dict[str, Any] | None
    future: asyncio.Future[dict[str, Any]]


class Writer(threading.Thread):
    """The thread that owns the SQLite connection once the store is open: it commits everything
    queued since its last commit in one transaction (group commit)."""

    def __init__(
        self,
        db: sqlite3.Connection,
        done: Callable[[list[PendingWrite], int, BaseException | None], None],
    ) -> None:
        super().__init__(name="numaplane-store-writer", daemon=True)
        self._db = db
        self._done = done
        self._cond = threading.Condition()
        self._queue: list[PendingWrite] = []
        self._compact_to = 0
        self._stopping = False

    def submit(self, write: PendingWrite) -> None:
        """Queue ``write`` for the next transaction."""
        with self._cond:
            self._queue.append(write)
            if len(self._queue) == 1:
                self._cond.notify()

    def compact(self, rv: int) -> None:
        """Compact the history at ``rv`` in the next transaction."""
        with self._cond:
            self._compact_to = max(self._compact_to, rv)
            self._cond.notify()

    def stop(self) -> None:
        """Commit what is queued, then close the connection and end the thread."""
        with self._cond:
            self._stopping = True
            self._cond.notify()

    def run(self) -> None:
        """Commit batches until stopped; each batch is handed to ``done`` (with the error that
        failed it, if any) in commit order."""
        while True:
            with self._cond:
                while not self._queue and not self._compact_to and not self._stopping:
                    self._cond.wait()
                batch, self._queue = self._queue, []
                compact_to, self._compact_to = self._compact_to, 0
                if not batch and not compact_to:
                    break  # stopping with nothing left to commit
            error: BaseException | None = None
            try:
                self._commit(batch, compact_to)
            except BaseException as exc:  # handed to the loop: every waiting write fails with it
                error = exc
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            self._done(batch, compact_to, error)
        self._db.close()

    def _commit(self, batch: list[PendingWrite], compact_to: int) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        if batch:
            dumps = orjson.dumps
            db.executemany(
                "INSERT INTO revisions VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        w.rv,
                        _TYPE_CODES[w.type],
                        w.key.resource,
                        w.key.namespace,
                        w.key.name,
                        0 if w.prev is None else object_rv(w.prev),
                        dumps(w.obj),
                    )
                    for w in batch
                ],
            )
            db.execute("UPDATE meta SET value = ? WHERE name = 'rv'", (batch[-1].rv,))
        if compact_to:
            db.execute(
                "DELETE FROM revisions WHERE rv <= ?1 AND (type = 3 OR rv IN "
                "(SELECT prev_rv FROM revisions WHERE rv <= ?1))",
                (compact_to,),
            )
            db.execute("UPDATE meta SET value = ? WHERE name = 'compacted'", (compact_to,))
        db.execute("COMMIT")


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path`` in WAL mode with ``synchronous=FULL``
    (a commit is on disk when it returns)."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.executescript(_SCHEMA)
    return db


def load(db: sqlite3.Connection) -> tuple[int, int, Iterator[tuple[int, str, ObjectKey, Any]]]:
    """The newest rv, the compacted rv, and every remaining revision in rv order as
    ``(rv, type, key, object)``."""
    meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
    rows = db.execute("SELECT rv, type, resource, namespace, name, data FROM revisions ORDER BY rv")
    loads = orjson.loads

    def revisions() -> Iterator[tuple[int, str, ObjectKey, Any]]:
        for rv, code, resource, namespace, name, data in rows:
            yield rv, _CODE_TYPES[code], ObjectKey(resource, namespace, name), loads(data)

    return int(meta["rv"]), int(meta["compacted"]), revisions()
