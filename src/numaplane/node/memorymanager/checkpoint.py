"""``memory_manager_state``: the memory manager's checkpoint, in every upstream layout.

- V1 (all released kubelets before PodLevelResourceManagers): ``{"policyName","machineState",
  "entries","checksum"}``; checksum over ``*state.MemoryManagerCheckpoint``; 0 accepted.
- V2: adds ``podEntries`` (hashed, type name normalised); 0 *not* accepted.
- V3: the V1 fields inline (for downgrades; their checksum is V1's) plus ``data``, a JSON string
  of ``{policyName, machineState, entries, podEntries}``, and ``dataChecksum`` = FNV-32a of
  ``"(string)" + data``. ``data`` is authoritative.

The reader of the newest revision tries V3, then V2, then V1; a file that looks like V3 (``data``
or ``dataChecksum`` set) but fails is an error with no fallback. The reader of earlier
revisions (``layout="v2-only"``) has one struct, the V1 layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from numaplane.gofmt import go_quote
from numaplane.node.checkpoint import (
    CheckpointDecodeError,
    CheckpointError,
    CheckpointRestoreError,
    CorruptCheckpointError,
    drain_hint,
)
from numaplane.node.gocodec import (
    CHECKSUM,
    INT,
    STRING,
    UINT64,
    GoField,
    GoType,
    fnv32a,
    map_of,
    ptr_to,
    slice_of,
    spew_sharp_v,
    struct,
)
from numaplane.node.gojson import GoJSONError, go_marshal, go_unmarshal, go_unmarshal_lenient

MEMORY_MANAGER_CHECKPOINT = "memory_manager_state"
"""The file name the kubelet uses in its root directory."""

MEMORY_TABLE_TYPE = struct(
    "state.MemoryTable",
    GoField("TotalMemSize", UINT64, "total"),
    GoField("SystemReserved", UINT64, "systemReserved"),
    GoField("Allocatable", UINT64, "allocatable"),
    GoField("Reserved", UINT64, "reserved"),
    GoField("Free", UINT64, "free"),
)
_RESOURCE_NAME = STRING.named("v1.ResourceName")
NUMA_NODE_STATE_TYPE = struct(
    "state.NUMANodeState",
    GoField("NumberOfAssignments", INT, "numberOfAssignments"),
    GoField("MemoryMap", map_of(_RESOURCE_NAME, ptr_to(MEMORY_TABLE_TYPE)), "memoryMap"),
    GoField("Cells", slice_of(INT), "cells"),
)
NUMA_NODE_MAP_TYPE = map_of(INT, ptr_to(NUMA_NODE_STATE_TYPE)).named("state.NUMANodeMap")
BLOCK_TYPE = struct(
    "state.Block",
    GoField("NUMAAffinity", slice_of(INT), "numaAffinity"),
    GoField("Type", _RESOURCE_NAME, "type"),
    GoField("Size", UINT64, "size"),
)
CONTAINER_ASSIGNMENTS_TYPE = map_of(STRING, map_of(STRING, slice_of(BLOCK_TYPE))).named(
    "state.ContainerMemoryAssignments"
)
POD_ENTRY_TYPE = struct(
    "state.PodEntry", GoField("MemoryBlocks", slice_of(BLOCK_TYPE), "memoryBlocks")
)
POD_ASSIGNMENTS_TYPE = map_of(STRING, POD_ENTRY_TYPE).named("state.PodMemoryAssignments")

_POLICY = GoField("PolicyName", STRING, "policyName")
_MACHINE = GoField("MachineState", NUMA_NODE_MAP_TYPE, "machineState")
_ENTRIES = GoField("Entries", CONTAINER_ASSIGNMENTS_TYPE, "entries", omitempty=True)
_POD_ENTRIES = GoField("PodEntries", POD_ASSIGNMENTS_TYPE, "podEntries", omitempty=True)
_CHECKSUM = GoField("Checksum", CHECKSUM, "checksum")

CHECKPOINT_V1_TYPE = ptr_to(
    struct("state.MemoryManagerCheckpointV1", _POLICY, _MACHINE, _ENTRIES, _CHECKSUM)
)
CHECKPOINT_V2_TYPE = ptr_to(
    struct("state.MemoryManagerCheckpointV2", _POLICY, _MACHINE, _ENTRIES, _POD_ENTRIES, _CHECKSUM)
)
# V3 embeds V1 (its fields are inlined in JSON) and adds the authoritative serialised data.
CHECKPOINT_V3_TYPE = ptr_to(
    struct(
        "state.MemoryManagerCheckpoint",
        _POLICY,
        _MACHINE,
        _ENTRIES,
        _CHECKSUM,
        GoField("Data", STRING, "data"),
        GoField("DataChecksum", CHECKSUM, "dataChecksum"),
    )
)
DATA_TYPE = struct("state.MemoryManagerCheckpointData", _POLICY, _MACHINE, _ENTRIES, _POD_ENTRIES)


def _normalise(rendered: str) -> str:
    for version in ("V1", "V2"):
        rendered = rendered.replace(
            f"MemoryManagerCheckpoint{version}", "MemoryManagerCheckpoint", 1
        )
    return rendered


# -- typed values ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryTable:
    """Memory of one type on one NUMA node, in bytes (JSON: total, systemReserved, …)."""

    total: int
    system_reserved: int
    allocatable: int
    reserved: int
    free: int

    def go_value(self) -> dict[str, int]:
        """The Go struct value."""
        return {
            "TotalMemSize": self.total,
            "SystemReserved": self.system_reserved,
            "Allocatable": self.allocatable,
            "Reserved": self.reserved,
            "Free": self.free,
        }


@dataclass(frozen=True)
class NUMANodeState:
    """One NUMA node's memory tables; ``cells`` ``None`` is Go's nil slice."""

    number_of_assignments: int
    memory_map: Mapping[str, MemoryTable]
    cells: tuple[int, ...] | None = ()

    def go_value(self) -> dict[str, Any]:
        """The Go struct value."""
        return {
            "NumberOfAssignments": self.number_of_assignments,
            "MemoryMap": {name: t.go_value() for name, t in self.memory_map.items()},
            "Cells": None if self.cells is None else list(self.cells),
        }


@dataclass(frozen=True)
class Block:
    """Memory of one type assigned on a set of NUMA nodes."""

    numa_affinity: tuple[int, ...]
    type: str
    size: int

    def go_value(self) -> dict[str, Any]:
        """The Go struct value."""
        return {"NUMAAffinity": list(self.numa_affinity), "Type": self.type, "Size": self.size}


MachineState = Mapping[int, NUMANodeState]
ContainerAssignments = Mapping[str, Mapping[str, tuple[Block, ...]]]
PodAssignments = Mapping[str, tuple[Block, ...]]


@dataclass(frozen=True)
class MemoryManagerCheckpoint:
    """The memory manager's state as checkpointed (V1 fields plus V2/V3 ``pod_entries``)."""

    policy_name: str
    machine_state: MachineState = field(default_factory=dict)
    entries: ContainerAssignments = field(default_factory=dict)
    pod_entries: PodAssignments = field(default_factory=dict)
    checksum: int = 0

    def v1_value(self) -> dict[str, Any]:
        """The Go ``MemoryManagerCheckpointV1`` value."""
        return {
            "PolicyName": self.policy_name,
            "MachineState": {n: s.go_value() for n, s in self.machine_state.items()},
            "Entries": {
                pod: {c: [b.go_value() for b in blocks] for c, blocks in containers.items()}
                for pod, containers in self.entries.items()
            },
            "Checksum": self.checksum,
        }

    def v2_value(self) -> dict[str, Any]:
        """The Go ``MemoryManagerCheckpointV2`` value."""
        pods = {
            pod: {"MemoryBlocks": [b.go_value() for b in blocks]}
            for pod, blocks in self.pod_entries.items()
        }
        return {**self.v1_value(), "PodEntries": pods}

    def hashed_payload(self, version: Literal[1, 2] = 1) -> str:
        """The spew rendering a V1 or V2 checksum hashes."""
        value, t = self._typed(version)
        return _normalise(spew_sharp_v({**value, "Checksum": 0}, t))

    def compute_checksum(self, version: Literal[1, 2] = 1) -> int:
        """The V1 (default) or V2 checksum of this content."""
        return fnv32a(self.hashed_payload(version))

    def data_json(self) -> str:
        """V3's ``data``: the JSON of ``{policyName, machineState, entries, podEntries}``."""
        value = self.v2_value()
        del value["Checksum"]
        return go_marshal(value, DATA_TYPE).decode("utf-8")

    def to_bytes(self, version: Literal[1, 2, 3] = 1) -> bytes:
        """The file as written by a kubelet of that layout (checksums recomputed)."""
        if version == 3:
            data = self.data_json()
            value = {
                **self.v1_value(),
                "Checksum": self.compute_checksum(1),
                "Data": data,
                "DataChecksum": data_checksum(data),
            }
            return go_marshal(value, CHECKPOINT_V3_TYPE)
        typed, t = self._typed(version)
        return go_marshal({**typed, "Checksum": self.compute_checksum(version)}, t)

    @classmethod
    def from_bytes(
        cls, data: bytes, *, source: str, version: Literal[1, 2, 3] = 1, verify: bool = True
    ) -> MemoryManagerCheckpoint:
        """Decode one layout, verifying its checksum with that layout's rule."""
        if version == 3:
            return _load_v3(data, source)
        t = CHECKPOINT_V1_TYPE if version == 1 else CHECKPOINT_V2_TYPE
        into = _empty_value(version)
        try:
            value = go_unmarshal(data, t, into)
        except GoJSONError as exc:
            raise CheckpointDecodeError(str(exc), source=source) from None
        actual = fnv32a(_normalise(spew_sharp_v({**value, "Checksum": 0}, t)))
        stored = value["Checksum"]
        zero_ok = version == 1
        if verify and stored != actual and not (zero_ok and stored == 0):
            raise CorruptCheckpointError(actual, stored, source=source)
        return _from_value(value, stored)

    def _typed(self, version: int) -> tuple[dict[str, Any], GoType]:
        if version == 1:
            return self.v1_value(), CHECKPOINT_V1_TYPE
        return self.v2_value(), CHECKPOINT_V2_TYPE


def data_checksum(data: str) -> int:
    """``checksum.New(data)`` for a string: FNV-32a of ``"(string)" + data``."""
    return fnv32a("(string)" + data)


def _empty_value(version: int) -> dict[str, Any]:
    # Upstream pre-makes the maps, so absent keys hash as empty maps, not nil ones.
    value: dict[str, Any] = {"PolicyName": "", "MachineState": {}, "Entries": {}, "Checksum": 0}
    if version == 2:
        value["PodEntries"] = {}
    return value


def _blocks(raw: Any) -> tuple[Block, ...]:
    return tuple(Block(tuple(b["NUMAAffinity"] or ()), b["Type"], b["Size"]) for b in (raw or ()))


def _node(raw: Any) -> NUMANodeState:
    raw = raw or {"NumberOfAssignments": 0, "MemoryMap": None, "Cells": None}
    # A nil table (JSON null) reads as zeros: upstream never writes one.
    tables = {name: _table(t or {}) for name, t in (raw["MemoryMap"] or {}).items()}
    cells = raw["Cells"]
    return NUMANodeState(
        raw["NumberOfAssignments"], tables, None if cells is None else tuple(cells)
    )


def _table(raw: Mapping[str, int]) -> MemoryTable:
    names = ("TotalMemSize", "SystemReserved", "Allocatable", "Reserved", "Free")
    return MemoryTable(*(raw.get(name, 0) for name in names))


def _from_value(value: Mapping[str, Any], checksum: int) -> MemoryManagerCheckpoint:
    return MemoryManagerCheckpoint(
        policy_name=value["PolicyName"],
        machine_state={n: _node(s) for n, s in (value["MachineState"] or {}).items()},
        entries={
            pod: {c: _blocks(blocks) for c, blocks in (containers or {}).items()}
            for pod, containers in (value["Entries"] or {}).items()
        },
        pod_entries={
            pod: _blocks((entry or {}).get("MemoryBlocks"))
            for pod, entry in (value.get("PodEntries") or {}).items()
        },
        checksum=checksum,
    )


class _V3Error(CheckpointError):
    """V3 failed; ``looks_v3`` says whether the file claimed to be V3 (no fallback then)."""

    def __init__(self, message: str, *, looks_v3: bool, source: str) -> None:
        super().__init__(message, source=source)
        self.looks_v3 = looks_v3


def _load_v3(data: bytes, source: str) -> MemoryManagerCheckpoint:
    into = {**_empty_value(1), "Data": "", "DataChecksum": 0}
    try:
        value, type_error = go_unmarshal_lenient(data, CHECKPOINT_V3_TYPE, into)
    except GoJSONError as exc:
        message = f"failed to deserialize memory manager checkpoint: {exc}"
        raise _V3Error(message, looks_v3=False, source=source) from None
    looks_v3 = bool(value["Data"]) or value["DataChecksum"] != 0
    if type_error is not None:
        message = f"failed to deserialize memory manager checkpoint: {type_error}"
        raise _V3Error(message, looks_v3=looks_v3, source=source)
    inner_into = {**_empty_value(2)}
    del inner_into["Checksum"]
    try:
        inner = go_unmarshal(value["Data"].encode("utf-8"), DATA_TYPE, inner_into)
    except GoJSONError as exc:
        message = f"failed to deserialize memory manager checkpoint data: {exc}"
        raise _V3Error(message, looks_v3=looks_v3, source=source) from None
    actual = data_checksum(value["Data"])
    if value["DataChecksum"] != actual:
        raise _V3Error("checkpoint is corrupted", looks_v3=looks_v3, source=source)
    return _from_value(inner, value["Checksum"])


def load_checkpoint(
    data: bytes, *, source: str, layout: Literal["v2-only", "v1/v2/v3"] = "v1/v2/v3"
) -> MemoryManagerCheckpoint:
    """Read a file as the kubelet of ``layout`` does (newest: V3, then V2, then V1).

    Raises ``CheckpointError`` with upstream's message (before the "could not restore" prefix).
    """
    if layout == "v2-only":
        return MemoryManagerCheckpoint.from_bytes(data, source=source, version=1)
    try:
        return _load_v3(data, source)
    except _V3Error as exc:
        if exc.looks_v3:
            raise CheckpointError(f"could not load v3 checkpoint: {exc}", source=source) from exc
    try:
        return MemoryManagerCheckpoint.from_bytes(data, source=source, version=2)
    except CheckpointError:
        pass
    return MemoryManagerCheckpoint.from_bytes(data, source=source, version=1)


@dataclass(frozen=True)
class RestoredMemoryState:
    """What ``NewCheckpointState`` loads."""

    machine_state: MachineState
    assignments: ContainerAssignments
    pod_assignments: PodAssignments


def restore_state(
    data: bytes | None,
    *,
    policy_name: str,
    source: str,
    layout: Literal["v2-only", "v1/v2/v3"] = "v1/v2/v3",
    pod_level_resource_managers: bool = False,
) -> RestoredMemoryState:
    """Validate a checkpoint for the configured policy (``restoreState``).

    ``data`` ``None`` (no file) gives the empty state. Pod-level entries are restored only with
    the ``PodLevelResourceManagers`` gate on. Failures raise ``CheckpointRestoreError`` with
    upstream's wording, including the advice to drain the node and delete ``source``.
    """
    if data is None:
        return RestoredMemoryState({}, {}, {})
    try:
        checkpoint = load_checkpoint(data, source=source, layout=layout)
        if checkpoint.policy_name != policy_name:
            raise CheckpointError(
                f"[memorymanager] configured policy {go_quote(policy_name)} differs from state "
                f"checkpoint policy {go_quote(checkpoint.policy_name)}"
            )
    except CheckpointError as exc:
        hint = drain_hint("memory manager", source)
        raise CheckpointRestoreError(str(exc), hint=hint, source=source) from exc
    pods = checkpoint.pod_entries if pod_level_resource_managers else {}
    return RestoredMemoryState(checkpoint.machine_state, checkpoint.entries, pods)
