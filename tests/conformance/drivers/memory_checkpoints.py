"""Driver for ``memory_checkpoints.json``: ``memory_manager_state`` restore and checksums."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from numaplane.node.checkpoint import CheckpointRestoreError
from numaplane.node.gocodec import fnv32a
from numaplane.node.gojson import go_marshal
from numaplane.node.memorymanager.checkpoint import (
    CONTAINER_ASSIGNMENTS_TYPE,
    NUMA_NODE_MAP_TYPE,
    POD_ASSIGNMENTS_TYPE,
    MemoryManagerCheckpoint,
    RestoredMemoryState,
    restore_state,
)
from tests.conformance.drivers import VectorContext


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one vector."""
    inputs = vector["input"]
    expected = vector["expected"]
    assert inputs["op"].startswith("NewCheckpointState"), inputs["op"]
    content = inputs.get("checkpoint_file_content")
    data = content.encode("utf-8") if content and content.strip() else None
    layout: Literal["v2-only", "v1/v2/v3"] = inputs.get("revision_layout", "v1/v2/v3")
    gates = inputs.get("feature_gates") or {}
    wanted = expected.get("error_contains")
    try:
        state = restore_state(
            data,
            policy_name=inputs["configured_policy"],
            source="/var/lib/kubelet/memory_manager_state",
            layout=layout,
            pod_level_resource_managers=bool(gates.get("PodLevelResourceManagers", False)),
        )
    except CheckpointRestoreError as exc:
        error: str | None = str(exc)
        state = None
    else:
        error = None
    if error is not None:
        assert wanted, f"unexpected error: {error}"
        for part in [wanted] if isinstance(wanted, str) else wanted:
            assert part in error, f"{part!r} not in {error!r}"
    else:
        assert not wanted, f"expected an error containing {wanted!r}"
    if expected.get("state") is not None:
        assert state is not None
        assert _state_json(state) == _normalise(expected["state"])
    for check in expected.get("checksum_checks") or []:
        assert data is not None
        assert fnv32a(check["hashed_payload"]) == check["fnv32a"]
        assert _payload(check["kind"], data) == check["hashed_payload"]


def _payload(kind: str, data: bytes) -> str:
    if "dataChecksum" in kind:
        data_field: str = json.loads(data)["data"]
        return "(string)" + data_field
    version: Literal[1, 2] = 2 if "V2" in kind else 1
    checkpoint = MemoryManagerCheckpoint.from_bytes(
        data, source="vector", version=version, verify=False
    )
    return checkpoint.hashed_payload(version)


def _state_json(state: RestoredMemoryState) -> dict[str, Any]:
    value = MemoryManagerCheckpoint(
        "", state.machine_state, state.assignments, state.pod_assignments
    ).v2_value()
    return _normalise(
        {
            "machine_state": json.loads(go_marshal(value["MachineState"], NUMA_NODE_MAP_TYPE)),
            "assignments": json.loads(go_marshal(value["Entries"], CONTAINER_ASSIGNMENTS_TYPE)),
            "pod_assignments": json.loads(go_marshal(value["PodEntries"], POD_ASSIGNMENTS_TYPE)),
        }
    )


def _normalise(node: Any) -> dict[str, Any]:
    """``_normalise_any`` for a state document."""
    result: dict[str, Any] = _normalise_any(node)
    return result


def _normalise_any(node: Any) -> Any:
    """Upstream clones states before comparing, so nil and empty ``cells`` are equal."""
    if isinstance(node, Mapping):
        return {
            k: ([] if k == "cells" and v is None else _normalise_any(v)) for k, v in node.items()
        }
    if isinstance(node, list):
        return [_normalise_any(v) for v in node]
    return node
