"""A node's state directory: the three managers' checkpointed states, opened together.

The directory holds the kubelet-format files ``cpu_manager_state``, ``memory_manager_state`` and
``kubelet_internal_checkpoint`` side by side (the kubelet keeps the last one in its
``device-plugins`` subdirectory; numaplane keeps one flat directory per node).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from numaplane.errors import InputError
from numaplane.node.admission import NodeStates
from numaplane.node.checkpoint import ContainerMap
from numaplane.node.cpumanager.state_checkpoint import CheckpointState as CPUCheckpointState
from numaplane.node.devicemanager.state_checkpoint import (
    CheckpointState as DeviceCheckpointState,
)
from numaplane.node.memorymanager.state_checkpoint import (
    CheckpointState as MemoryCheckpointState,
)


class StateDirError(InputError):
    """The state directory cannot be created or written; ``source`` is its path."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(str(path), reason)
        self.path = path


def ensure_writable_dir(path: Path) -> None:
    """Create ``path`` if missing and prove a file can be created in it.

    A real probe rather than ``os.access``: permissions are not the only way to be refused
    (read-only mounts, root on NFS), and root passes every ``os.access`` check.
    """
    if path.exists() and not path.is_dir():
        raise StateDirError(path, "state directory is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StateDirError(path, f"cannot create state directory: {exc.strerror or exc}") from exc
    try:
        fd, probe = tempfile.mkstemp(prefix=".numaplane-probe.", dir=path)
    except OSError as exc:
        raise StateDirError(
            path, f"state directory is not writable: {exc.strerror or exc}"
        ) from exc
    os.close(fd)
    Path(probe).unlink(missing_ok=True)


def open_node_states(
    state_dir: Path,
    cpu_policy: str,
    memory_policy: str,
    *,
    initial_containers: ContainerMap | None = None,
) -> NodeStates:
    """The checkpointed states of ``state_dir`` (created if missing) for the given policies.

    ``initial_containers`` is the kubelet's container map (``checkpoint.container_map``), through
    which a CPU manager checkpoint of the V1 layout is migrated.

    Raises ``StateDirError`` when the directory cannot be created or written, and the
    managers' ``CheckpointRestoreError`` (with the file in ``source``) when a CPU or memory
    checkpoint is corrupt or belongs to another policy. A bad device checkpoint is logged and
    ignored, as the kubelet does.
    """
    ensure_writable_dir(state_dir)
    return NodeStates(
        cpu=CPUCheckpointState.open(state_dir, cpu_policy, initial_containers=initial_containers),
        memory=MemoryCheckpointState.open(state_dir, memory_policy),
        devices=DeviceCheckpointState.open(state_dir),
    )
