"""``--state-dir`` of the simulated nodes: one node snapshot file per node.

``<state-dir>/<node>.snapshot.json`` holds ``NodeSnapshot.to_json()`` (the three managers'
checkpoints, the admitted pods in admission order, their affinities). It is written when the
node's allocations changed, at most every ``checkpoint_interval`` seconds for all nodes
together, atomically (a temporary file renamed; no fsync: what a restart of the simulator
needs survives in the page cache, and a hundred nodes would otherwise wait on the disk). The
directory is locked as the real agent locks its own, so two simulators never share one.

What a restart gets: every allocation written before the last save, exactly (a restored
node decides as the original). Pods admitted after the last save are admitted again, in
their start order, on the restored node (they may get other CPUs than before the crash).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Final

from numaplane.agent.lock import StateDirLock, lock_state_dir
from numaplane.errors import InputError
from numaplane.node.admission import Node
from numaplane.node.snapshot import NodeSnapshot, SnapshotError, snapshot_of

__all__ = ["SUFFIX", "SnapshotFiles"]

SUFFIX: Final = ".snapshot.json"


class SnapshotFiles:
    """The snapshot files of one state directory (created when missing, and locked)."""

    def __init__(self, state_dir: Path) -> None:
        try:
            state_dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise InputError(
                str(state_dir), f"cannot create the state directory: {err.strerror}"
            ) from err
        self.state_dir = state_dir
        self._lock: StateDirLock | None = lock_state_dir(state_dir)

    def path(self, node_name: str) -> Path:
        """The snapshot file of node ``node_name``."""
        return self.state_dir / f"{node_name}{SUFFIX}"

    def load(self, node_name: str) -> NodeSnapshot | None:
        """The node's last snapshot; ``None`` when it has none; ``SnapshotError`` (one line
        naming the file) when the file cannot be read."""
        path = self.path(node_name)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as err:
            raise SnapshotError(str(path), f"cannot read it: {err}") from None
        return NodeSnapshot.from_json(text, source=str(path))

    def save(self, node_name: str, node: Node) -> None:
        """Write the node's allocations now (atomically)."""
        data = snapshot_of(node).to_json().encode()
        path = self.path(node_name)
        fd, tmp = tempfile.mkstemp(prefix=f".{node_name}.", dir=self.state_dir)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def close(self) -> None:
        """Drop the directory's lock."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None
