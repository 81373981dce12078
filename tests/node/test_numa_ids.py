"""NUMA node ids the kubelet's 64-bit affinity mask cannot hold (ids above 63).

Real machines have them (GPU memory exposed as NUMA nodes 250-255); a node that would build
NUMA masks refuses such a machine with one line naming the machine, the NUMA node and the limit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.cli.main import main
from numaplane.node.admission import Node, UnsupportedMachineError
from numaplane.topology.discover import load_machine
from numaplane.topology.model import Machine


def _machine(*numa_ids: int) -> Machine:
    """A synthetic machine whose CPU-less NUMA nodes get the ids after the first (node 0, with
    the CPUs), as GPU memory nodes do."""
    base = load_machine(
        f"sockets=1,numa-per-socket=1,cores-per-numa=2,memory-only-numa={len(numa_ids) - 1}"
    )
    nodes = tuple(
        replace(node, id=new) for node, new in zip(base.numa_nodes, numa_ids, strict=True)
    )
    return Machine(name="gpu-box", cpus=base.cpus, numa_nodes=nodes, source="test")


@dataclass(frozen=True)
class IdCase:
    name: str
    numa_ids: tuple[int, ...]
    config: dict[str, object]
    error: str | None


STATIC_MEMORY: dict[str, object] = {
    "memoryManagerPolicy": "Static",
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
}

CASES = (
    IdCase("id 63 fits", (0, 63), {"topologyManagerPolicy": "best-effort"}, None),
    IdCase(
        "id 64 under a topology manager policy",
        (0, 64, 250),
        {"topologyManagerPolicy": "best-effort"},
        "machine gpu-box: NUMA node 64 is above 63, the highest NUMA node id the kubelet's NUMA "
        'affinity bitmask holds (upstream bitmask: "bit number must be in range 0-63"), which '
        "the topology manager policy best-effort needs",
    ),
    IdCase(
        "id 250 under the Static memory policy",
        (0, 250),
        STATIC_MEMORY,
        "machine gpu-box: NUMA node 250 is above 63, the highest NUMA node id the kubelet's "
        'NUMA affinity bitmask holds (upstream bitmask: "bit number must be in range 0-63"), '
        "which the memory manager policy Static needs",
    ),
    # No manager builds NUMA masks: the machine is usable as it is upstream.
    IdCase("id 250 with policies none", (0, 250), {}, None),
)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_numa_ids_above_63(case: IdCase) -> None:
    config = kubelet_config_from_dict({"kind": "KubeletConfiguration", **case.config}, "<test>")
    if case.error is None:
        Node(_machine(*case.numa_ids), config)
        return
    with pytest.raises(UnsupportedMachineError) as info:
        Node(_machine(*case.numa_ids), config)
    assert str(info.value) == case.error


def test_capture_with_gpu_memory_nodes_is_one_line_exit_2(
    topologies_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real capture (NUMA nodes 0, 8 and 250-255) through the CLI; needs ../shared."""
    capture = topologies_dir / "linux" / "nvidiagpunumanodes.tar.bz2"
    config = tmp_path / "kubelet.yaml"
    config.write_text("kind: KubeletConfiguration\ntopologyManagerPolicy: single-numa-node\n")
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        "spec: {containers: [{name: c, resources: {limits: {cpu: '1', memory: 1Gi}}}]}\n"
    )
    with pytest.raises(SystemExit) as info:
        main(["admit", str(pod), "-m", str(capture), "-c", str(config)])
    assert info.value.code == 2
    _, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "machine nvidiagpunumanodes: NUMA node 250 is above 63" in lines[0]
    assert "bit number must be in range 0-63" in lines[0]
