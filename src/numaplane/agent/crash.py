"""Crash injection for the agent's crash-safety tests.

Setting ``NUMAPLANE_AGENT_CRASH_AT=N`` makes ``numaplane agent`` die abruptly (``os._exit``,
no clean-up, as ``kill -9``) just before its N-th state-file write. Every checkpoint and record
goes through ``CheckpointStore.write``, so varying N places the crash anywhere in start-up,
admission and release.
"""

from __future__ import annotations

import os
import threading

from numaplane.node.checkpoint import CheckpointStore

#: Environment variable: die (``os._exit(137)``) just before the N-th state file write.
CRASH_AT_ENV = "NUMAPLANE_AGENT_CRASH_AT"


def install_crash_point(count: int) -> None:
    """Make the process exit abruptly before its ``count``-th checkpoint or record write.

    For crash-safety tests: every state file goes through ``CheckpointStore.write``, so a
    count places the crash anywhere in admission, release and start-up.
    """
    original = CheckpointStore.write
    seen = [0]
    guard = threading.Lock()

    def write(self: CheckpointStore, name: str, data: bytes) -> None:
        with guard:
            seen[0] += 1
            if seen[0] >= count:
                os._exit(137)
        original(self, name, data)

    setattr(CheckpointStore, "write", write)  # noqa: B010 (a method on a frozen class)
