"""Driver for ``checkpoints.json``: ``cpu_manager_state`` restore, checksums, device checkpoints.

Ops: ``NewCheckpointState (restore)`` (CPU manager restore, expected error substrings and/or
state), ``checksum`` (formats ``v1``/``v2`` CPU, ``devicemanager``): the spew payload, its
FNV-32a, and for files, that decode → encode gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.node.checkpoint import CheckpointRestoreError
from numaplane.node.cpumanager.checkpoint import (
    CPUManagerCheckpoint,
    CPUManagerCheckpointV1,
    restore_state,
)
from numaplane.node.devicemanager.checkpoint import DeviceManagerCheckpoint
from numaplane.node.gocodec import fnv32a
from numaplane.topology.cpuset import CPUSet
from tests.conformance.drivers import VectorContext


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one vector."""
    inputs = vector["input"]
    expected = vector["expected"]
    op = inputs["op"]
    if op.startswith("NewCheckpointState"):
        _restore(inputs, expected)
    elif op == "checksum":
        _checksum(inputs, expected)
    else:
        raise AssertionError(f"unknown op {op!r}")


def _containers(raw: Any) -> dict[str, tuple[str, str]]:
    """The container map (ID → pod UID, container name) from the shapes a vector may use."""
    result: dict[str, tuple[str, str]] = {}
    if not raw:
        return result
    items = raw.items() if isinstance(raw, Mapping) else [(None, item) for item in raw]
    for key, item in items:
        if isinstance(item, Mapping):
            pod = item.get("pod_uid", item.get("podUID", item.get("pod")))
            name = item.get("container_name", item.get("containerName", item.get("container")))
            cid = key or item.get("container_id", item.get("containerID"))
        elif key is not None:
            pod, name = item
            cid = key
        else:
            pod, name, cid = item
        result[str(cid)] = (str(pod), str(name))
    return result


def _cpus(raw: Any) -> CPUSet:
    return CPUSet.parse(raw) if isinstance(raw, str) else CPUSet(raw or ())


def _restore(inputs: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    content = inputs.get("checkpoint_file_content")
    data = content.encode("utf-8") if content and content.strip() else None
    wanted = expected.get("error_contains")
    if isinstance(wanted, str):
        wanted = [wanted]
    try:
        state = restore_state(
            data,
            policy_name=inputs["configured_policy"],
            source="cpu_manager_state",
            containers=_containers(inputs.get("initial_containers")),
        )
    except CheckpointRestoreError as exc:
        error: str | None = str(exc)
        state = None
    else:
        error = None
    if error is not None:
        assert wanted, f"unexpected error: {error}"
        for part in wanted:
            assert part in error, f"{part!r} not in {error!r}"
    else:
        assert not wanted, f"expected an error containing {wanted}"
    if data is not None and "checksum_check" in expected:
        check = expected["checksum_check"]
        decoded = CPUManagerCheckpoint.from_bytes(data, source="vector", verify=False)
        assert decoded.hashed_payload() == check["hashed_payload"]
        assert decoded.compute_checksum() == check["fnv32a"] == fnv32a(check["hashed_payload"])
    want_state = expected.get("state", expected.get("expected_state"))
    if want_state is not None:
        assert state is not None
        _compare_state(state.default_cpu_set, state.assignments, want_state)


def _compare_state(
    default: CPUSet, assignments: Mapping[str, Mapping[str, CPUSet]], want: Mapping[str, Any]
) -> None:
    known = {"default_cpuset", "default_cpu_set", "defaultCPUSet", "assignments", "entries"}
    unknown = set(want) - known
    assert not unknown, f"driver does not know state keys {sorted(unknown)}"
    for key in ("default_cpuset", "default_cpu_set", "defaultCPUSet"):
        if key in want:
            assert default == _cpus(want[key]), f"default {default} != {want[key]}"
    for key in ("assignments", "entries"):
        if key in want:
            got = {p: dict(c) for p, c in assignments.items() if c}
            exp = {
                p: {c: _cpus(s) for c, s in cs.items()} for p, cs in (want[key] or {}).items() if cs
            }
            assert got == exp, f"assignments {got} != {exp}"


def _checksum(inputs: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    fmt = inputs["format"]
    content = inputs.get("checkpoint_file_content")
    data = content.encode("utf-8") if content is not None else None
    checkpoint: CPUManagerCheckpoint | CPUManagerCheckpointV1 | DeviceManagerCheckpoint
    if fmt == "devicemanager":
        assert data is not None
        checkpoint = DeviceManagerCheckpoint.from_bytes(data, source="vector")
    elif fmt in ("v1", "v2"):
        cls = CPUManagerCheckpointV1 if fmt == "v1" else CPUManagerCheckpoint
        if data is not None:
            checkpoint = cls.from_bytes(data, source="vector")
        else:
            checkpoint = cls(inputs["policy"], inputs["default_cpuset"], inputs["entries"])
    else:
        raise AssertionError(f"unknown checkpoint format {fmt!r}")
    assert checkpoint.hashed_payload() == expected["hashed_payload"]
    assert checkpoint.compute_checksum() == expected["fnv32a"]
    assert fnv32a(expected["hashed_payload"]) == expected["fnv32a"]
    if data is not None:
        assert checkpoint.to_bytes() == data, "decode → encode changed the bytes"
