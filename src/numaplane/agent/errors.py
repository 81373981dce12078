"""Errors of the node agent: cgroups it cannot set up or tear down, processes it cannot run.

All root in ``AgentError`` (itself a ``NumaplaneError``), so the agent's loop can tell a refused
operation on the host apart from a bug.
"""

from __future__ import annotations

from numaplane.errors import NumaplaneError


class AgentError(NumaplaneError):
    """An operation of the node agent on the host failed."""


class CgroupError(AgentError):
    """A cgroup could not be created, configured, joined or removed.

    ``path`` is the cgroup directory or interface file involved, when there is one.
    """

    def __init__(self, message: str, path: str | None = None) -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class CgroupBusyError(CgroupError):
    """A cgroup to remove still holds processes; the agent never kills them implicitly."""

    def __init__(self, path: str, pids: list[int]) -> None:
        self.pids = pids
        shown = ", ".join(str(p) for p in pids[:10]) + (", ..." if len(pids) > 10 else "")
        super().__init__(
            f"still holds {len(pids)} process(es) ({shown}); stop them before removing it",
            path,
        )
