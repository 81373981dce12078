"""``cpu_manager_state``: the CPU manager's checkpoint, as the kubelet writes and reads it.

V2 (current): ``{"policyName","defaultCpuSet","entries":{pod:{container:cpuset}},"checksum"}``.
V1 (legacy): ``entries`` keyed by container ID. Restoring tries V2, then V1, migrating V1
entries through the runtime's container map (container ID → pod UID, container name).
Checksums hash the go-spew rendering of ``*state.CPUManagerCheckpoint`` (V1's type name is
normalised to that); a stored checksum of 0 is accepted unverified, as upstream.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from numaplane.gofmt import go_parse_cpuset, go_quote
from numaplane.node.checkpoint import (
    CheckpointDecodeError,
    CheckpointError,
    CheckpointRestoreError,
    ContainerMap,
    CorruptCheckpointError,
)
from numaplane.node.gocodec import (
    CHECKSUM,
    STRING,
    GoField,
    GoType,
    go_checksum,
    map_of,
    ptr_to,
    spew_sharp_v,
    struct,
)
from numaplane.node.gojson import GoJSONError, go_marshal, go_unmarshal
from numaplane.topology.cpuset import CPUSet

CPU_MANAGER_CHECKPOINT = "cpu_manager_state"
"""The file name the kubelet uses in its root directory."""

_ENTRIES_V2 = map_of(STRING, map_of(STRING, STRING))
_ENTRIES_V1 = map_of(STRING, STRING)


def _checkpoint_type(name: str, entries: GoType) -> GoType:
    return ptr_to(
        struct(
            name,
            GoField("PolicyName", STRING, "policyName"),
            GoField("DefaultCPUSet", STRING, "defaultCpuSet"),
            GoField("Entries", entries, "entries", omitempty=True),
            GoField("Checksum", CHECKSUM, "checksum"),
        )
    )


CHECKPOINT_V2_TYPE = _checkpoint_type("state.CPUManagerCheckpoint", _ENTRIES_V2)
"""``*state.CPUManagerCheckpoint`` (V2 is an alias of it)."""
CHECKPOINT_V1_TYPE = _checkpoint_type("state.CPUManagerCheckpointV1", _ENTRIES_V1)
"""``*state.CPUManagerCheckpointV1``."""


def _normalise_v1(rendered: str) -> str:
    return rendered.replace("CPUManagerCheckpointV1", "CPUManagerCheckpoint", 1)


@dataclass(frozen=True)
class CPUManagerCheckpoint:
    """A V2 ``cpu_manager_state``: CPU sets per pod and container, in Linux list format."""

    policy_name: str
    default_cpu_set: str
    entries: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    checksum: int = 0

    def go_value(self) -> dict[str, object]:
        """The Go struct value (field name → value) this checkpoint stands for."""
        return {
            "PolicyName": self.policy_name,
            "DefaultCPUSet": self.default_cpu_set,
            "Entries": {pod: dict(c) for pod, c in self.entries.items()},
            "Checksum": self.checksum,
        }

    def hashed_payload(self) -> str:
        """The spew rendering the checksum hashes (with ``Checksum`` 0)."""
        return spew_sharp_v({**self.go_value(), "Checksum": 0}, CHECKPOINT_V2_TYPE)

    def compute_checksum(self) -> int:
        """The checksum the kubelet would store for this content."""
        return go_checksum({**self.go_value(), "Checksum": 0}, CHECKPOINT_V2_TYPE)

    def to_bytes(self) -> bytes:
        """The file as the kubelet writes it (``MarshalCheckpoint``: checksum recomputed)."""
        return go_marshal(
            {**self.go_value(), "Checksum": self.compute_checksum()}, CHECKPOINT_V2_TYPE
        )

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str, verify: bool = True) -> CPUManagerCheckpoint:
        """Decode a V2 file (Go's case-insensitive keys); verify its checksum unless told not."""
        value = _unmarshal(data, CHECKPOINT_V2_TYPE, source)
        raw_checksum = go_checksum({**value, "Checksum": 0}, CHECKPOINT_V2_TYPE)
        checkpoint = cls(
            policy_name=value["PolicyName"],
            default_cpu_set=value["DefaultCPUSet"],
            entries={pod: dict(c or {}) for pod, c in (value["Entries"] or {}).items()},
            checksum=value["Checksum"],
        )
        if verify:
            _verify(checkpoint.checksum, raw_checksum, source)
        return checkpoint


@dataclass(frozen=True)
class CPUManagerCheckpointV1:
    """A legacy V1 ``cpu_manager_state``: CPU sets keyed by container ID."""

    policy_name: str
    default_cpu_set: str
    entries: Mapping[str, str] = field(default_factory=dict)
    checksum: int = 0

    def go_value(self) -> dict[str, object]:
        """The Go struct value (field name → value) this checkpoint stands for."""
        return {
            "PolicyName": self.policy_name,
            "DefaultCPUSet": self.default_cpu_set,
            "Entries": dict(self.entries),
            "Checksum": self.checksum,
        }

    def hashed_payload(self) -> str:
        """The spew rendering the checksum hashes (type name normalised, ``Checksum`` 0)."""
        return _normalise_v1(spew_sharp_v({**self.go_value(), "Checksum": 0}, CHECKPOINT_V1_TYPE))

    def compute_checksum(self) -> int:
        """The checksum a V1 kubelet stored for this content."""
        value = {**self.go_value(), "Checksum": 0}
        return go_checksum(value, CHECKPOINT_V1_TYPE, rename=_normalise_v1)

    def to_bytes(self) -> bytes:
        """The file as a V1 kubelet wrote it."""
        return go_marshal(
            {**self.go_value(), "Checksum": self.compute_checksum()}, CHECKPOINT_V1_TYPE
        )

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str, verify: bool = True) -> CPUManagerCheckpointV1:
        """Decode a V1 file; verify its checksum unless told not."""
        value = _unmarshal(data, CHECKPOINT_V1_TYPE, source)
        raw_checksum = go_checksum(
            {**value, "Checksum": 0}, CHECKPOINT_V1_TYPE, rename=_normalise_v1
        )
        checkpoint = cls(
            policy_name=value["PolicyName"],
            default_cpu_set=value["DefaultCPUSet"],
            entries=dict(value["Entries"] or {}),
            checksum=value["Checksum"],
        )
        if verify:
            _verify(checkpoint.checksum, raw_checksum, source)
        return checkpoint

    def migrate(self, containers: ContainerMap) -> CPUManagerCheckpoint:
        """The V2 equivalent, mapping container IDs through ``containers`` (ID → pod, name)."""
        entries: dict[str, dict[str, str]] = {}
        for container_id, cpus in self.entries.items():
            if container_id not in containers:
                raise CheckpointError(
                    "failed to migrate checkpoint from v1 to v2: "
                    f"containerID '{container_id}' not found in initial containers list"
                )
            pod_uid, container_name = containers[container_id]
            entries.setdefault(pod_uid, {})[container_name] = cpus
        return CPUManagerCheckpoint(self.policy_name, self.default_cpu_set, entries)


def _unmarshal(data: bytes, t: GoType, source: str) -> dict[str, Any]:
    # Upstream decodes into a struct whose entries map is pre-made: a file without
    # "entries" hashes as an empty map, not a nil one.
    into = {"PolicyName": "", "DefaultCPUSet": "", "Entries": {}, "Checksum": 0}
    try:
        value = go_unmarshal(data, t, into)
    except GoJSONError as exc:
        raise CheckpointDecodeError(str(exc), source=source) from None
    assert isinstance(value, dict)
    return value


def _verify(stored: int, actual: int, source: str | None) -> None:
    if stored != 0 and stored != actual:
        raise CorruptCheckpointError(actual, stored, source=source)


def load_checkpoint(
    data: bytes, *, source: str, containers: ContainerMap | None = None
) -> CPUManagerCheckpoint:
    """Read a file of either version: V2, else V1 migrated through ``containers``.

    When both fail, V1's error is raised (the last attempt), as upstream.
    """
    try:
        return CPUManagerCheckpoint.from_bytes(data, source=source)
    except CheckpointError:
        pass
    legacy = CPUManagerCheckpointV1.from_bytes(data, source=source)
    return legacy.migrate(containers or {})


# -- restore ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RestoredCPUState:
    """What ``NewCheckpointState`` loads: the shared pool and the exclusive assignments."""

    default_cpu_set: CPUSet
    assignments: Mapping[str, Mapping[str, CPUSet]]


def restore_state(
    data: bytes | None,
    *,
    policy_name: str,
    source: str,
    containers: ContainerMap | None = None,
) -> RestoredCPUState:
    """Validate and parse a checkpoint for the configured policy (``restoreState``).

    ``data`` ``None`` (no file) gives the empty state; the caller then writes it. Every failure
    raises ``CheckpointRestoreError`` with upstream's wording.
    """
    if data is None:
        return RestoredCPUState(CPUSet(), {})
    try:
        checkpoint = load_checkpoint(data, source=source, containers=containers)
        if checkpoint.policy_name != policy_name:
            raise CheckpointError(
                f"configured policy {go_quote(policy_name)} differs from state checkpoint "
                f"policy {go_quote(checkpoint.policy_name)}"
            )
        try:
            default = go_parse_cpuset(checkpoint.default_cpu_set)
        except ValueError as exc:
            raise CheckpointError(
                f"could not parse default cpu set {go_quote(checkpoint.default_cpu_set)}: {exc}"
            ) from None
        assignments: dict[str, dict[str, CPUSet]] = {}
        for pod, containers_cpus in checkpoint.entries.items():
            assignments[pod] = {}
            for container, text in containers_cpus.items():
                try:
                    assignments[pod][container] = go_parse_cpuset(text)
                except ValueError as exc:
                    raise CheckpointError(
                        f"could not parse cpuset {go_quote(text)} for container "
                        f"{go_quote(container)} in pod {go_quote(pod)}: {exc}"
                    ) from None
    except CheckpointError as exc:
        raise CheckpointRestoreError(str(exc), source=source) from exc
    return RestoredCPUState(default, assignments)


def checkpoint_of(
    policy_name: str, default_cpu_set: CPUSet, assignments: Mapping[str, Mapping[str, CPUSet]]
) -> CPUManagerCheckpoint:
    """The checkpoint ``storeState`` writes for a state (CPU sets in Linux list format)."""
    entries = {
        pod: {container: str(cpus) for container, cpus in containers.items()}
        for pod, containers in assignments.items()
    }
    checkpoint = CPUManagerCheckpoint(policy_name, str(default_cpu_set), entries)
    return CPUManagerCheckpoint(
        policy_name, str(default_cpu_set), entries, checkpoint.compute_checksum()
    )
