"""The agent restoring a state directory whose ``cpu_manager_state`` has the V1 layout: the
recorded pods' container IDs are the container map it is migrated through."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.agent.startup import AgentStateError, restore
from numaplane.api.kubeletconfig import load_kubelet_config
from numaplane.api.manifest import pod_from_dict
from numaplane.node.checkpoint import CheckpointStore
from numaplane.node.podrecords import PodRecords
from numaplane.topology.cpuset import CPUSet
from numaplane.topology.presets import preset
from tests.cli.test_admit import BEST_EFFORT
from tests.node.cpumanager.test_checkpoint_migration import write_v1


def _web(container_id: str) -> dict[str, object]:
    return {
        "metadata": {"name": "web", "uid": "uid-web"},
        "spec": {
            "containers": [
                {"name": "nginx", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}
            ]
        },
        "status": {"containerStatuses": [{"name": "nginx", "containerID": container_id}]},
    }


@dataclass(frozen=True)
class RestoreCase:
    """The recorded pod's container ID, and the CPUs it gets back or the refusal."""

    name: str
    container_id: str
    cpus: str | None


CASES = [
    RestoreCase("the recorded container is the V1 entry", "containerd://abc123", "2-3"),
    RestoreCase("no recorded container is the V1 entry", "containerd://zzz", None),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_agent_restores_a_v1_cpu_checkpoint(case: RestoreCase, tmp_path: Path) -> None:
    write_v1(tmp_path, "static", "0-1,4-11", {"abc123": "2-3"})
    PodRecords(CheckpointStore(tmp_path)).save([pod_from_dict(_web(case.container_id), "pods")])
    machine, config = preset("dual-socket-ht"), load_kubelet_config(BEST_EFFORT)
    if case.cpus is None:
        with pytest.raises(AgentStateError) as failure:
            restore(tmp_path, machine, config)
        assert failure.value.source == str(tmp_path / "cpu_manager_state")
        assert "containerID 'abc123' not found in initial containers list" in str(failure.value)
        return
    restored = restore(tmp_path, machine, config)
    assert [p.uid for p in restored.pods] == ["uid-web"]
    assert restored.node.cpu_manager.exclusive_cpus("uid-web", "nginx") == CPUSet.parse(case.cpus)
