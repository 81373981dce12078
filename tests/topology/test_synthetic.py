"""Synthetic shapes and presets; presets match the kubelet's test fixtures."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.topology.cpuset import CPUSet
from numaplane.topology.errors import SyntheticSpecError
from numaplane.topology.presets import PRESETS, preset
from numaplane.topology.synthetic import parse_shape, parse_synthetic


def test_issue_example_shape() -> None:
    m = parse_synthetic(
        "sockets=2,numa-per-socket=2,cores-per-numa=8,threads-per-core=2,"
        "memory-per-numa=64Gi,gpus-per-numa=1"
    )
    assert len(m.online_cpus) == 64
    assert m.numa_ids == (0, 1, 2, 3)
    assert m.numa_nodes_in_sockets(1) == (2, 3)
    assert all(n.memory_bytes == 64 << 30 for n in m.numa_nodes)
    assert [d.numa for d in m.devices] == [0, 1, 2, 3]
    assert m.distance(0, 1) == 11
    assert m.distance(0, 2) == 21
    assert m.siblings(0) == m.siblings(32)


def test_offline_memory_only_and_hugepages() -> None:
    m = parse_synthetic(
        "cores-per-numa=2,threads-per-core=2,offline=3,memory-only-numa=1,hugepages-2Mi-per-numa=16"
    )
    assert str(m.offline_cpu_ids) == "3"
    assert m.siblings(1) == m.all_cpu_ids & m.cpus_in_physical_cores(1)
    assert not m.numa_node(1).cpus
    assert m.numa_node(0).hugepages[0].resource_name == "hugepages-2Mi"


@dataclass(frozen=True)
class Bad:
    name: str
    spec: str
    message: str


BAD = (
    Bad("unknown key", "cores=4", "unknown key"),
    Bad("missing equals", "sockets=2,numa", "not key=value"),
    Bad("zero sockets", "sockets=0", "at least 1"),
    Bad("duplicate", "sockets=1,sockets=2", "twice"),
    Bad("both numa modes", "sockets=2,numa-per-socket=2,sockets-per-numa=2", "cannot both"),
    Bad("uneven split", "numa-per-socket=3,cores-per-socket=4", "evenly"),
    Bad("offline out of range", "cores-per-numa=2,offline=5", "outside"),
    Bad("bad size", "memory-per-numa=lots", "size"),
    Bad("bad numbering", "numbering=random", "numbering"),
    Bad("too big", "sockets=4096,cores-per-numa=4096", "exceed"),
    Bad("a million sockets", "sockets=1000000", "4000000 CPUs exceed the limit of 65536"),
    Bad("huge cores per node", "cores-per-numa=100000000", "CPUs exceed the limit of 65536"),
    Bad(
        "huge memory-only count",
        "memory-only-numa=99999999",
        "100000000 NUMA nodes exceed the limit of 1024",
    ),
    Bad("huge GPU count", "gpus-per-numa=99999999", "GPUs exceed the limit of 65536"),
    Bad(
        "cores per socket against per node",
        "cores-per-socket=4,cores-per-numa=3,numa-per-socket=2",
        "cores-per-socket=4 conflicts with cores-per-numa=3 x numa-per-socket=2",
    ),
    Bad(
        "cores per node against per socket",
        "sockets=2,sockets-per-numa=2,cores-per-socket=4,cores-per-numa=4",
        "cores-per-numa=4 conflicts with cores-per-socket=4 x sockets-per-numa=2",
    ),
    Bad("offline id past the CPU limit", "offline=0-999999999", "above the limit of 65535"),
    Bad("a number too long", "memory-per-numa=" + "9" * 5000, "more than 18 digits"),
    Bad("a digit Python reads but is no number", "threads-per-core=²", "non-negative integer"),
)


def test_agreeing_core_counts_are_accepted() -> None:
    both = parse_synthetic("cores-per-socket=6,cores-per-numa=3,numa-per-socket=2")
    one = parse_synthetic("cores-per-numa=3,numa-per-socket=2")
    assert (both.cpus, both.numa_nodes) == (one.cpus, one.numa_nodes)
    assert len(both.all_cpu_ids) == 6


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.name)
def test_bad_shapes(case: Bad) -> None:
    with pytest.raises(SyntheticSpecError, match=case.message):
        parse_synthetic(case.spec)


@settings(max_examples=40, deadline=None)
@given(
    sockets=st.integers(1, 4),
    nps=st.integers(1, 3),
    cores=st.integers(1, 6),
    threads=st.integers(1, 4),
    numbering=st.sampled_from(["linear", "interleaved", "adjacent"]),
)
def test_shape_laws(sockets: int, nps: int, cores: int, threads: int, numbering: str) -> None:
    spec = (
        f"sockets={sockets},numa-per-socket={nps},cores-per-numa={cores},"
        f"threads-per-core={threads},numbering={numbering}"
    )
    m = parse_synthetic(spec)
    assert m.all_cpu_ids == CPUSet.range(0, sockets * nps * cores * threads)
    assert len(m.physical_core_ids) == sockets * nps * cores
    assert m.threads_per_core == threads
    for node in m.numa_nodes:
        assert len(node.cpus) == cores * threads
    assert parse_shape(parse_shape(spec).to_spec()) == parse_shape(spec)


# The conformance vectors are the repository's own test data (tests/data/vectors); until that
# copy exists on a branch, the shared directory beside the repository stands in.
_VECTOR_DIRS = (
    Path(__file__).resolve().parents[1] / "data" / "vectors",
    Path(__file__).resolve().parents[2].parent / "shared" / "vectors",
)


def _kubelet_topologies() -> dict[str, dict[str, object]]:
    env = os.environ.get("NUMAPLANE_VECTORS")
    dirs = (Path(env),) if env else _VECTOR_DIRS
    path = next((d / "topologies.json" for d in dirs if (d / "topologies.json").is_file()), None)
    if path is None:
        pytest.fail(
            f"topologies.json (conformance vectors) not found in {', '.join(map(str, dirs))}"
        )
    data: dict[str, dict[str, object]] = json.loads(path.read_text())["topologies"]
    return data


@pytest.mark.parametrize("name", [p.name for p in PRESETS.values() if p.fixture])
def test_preset_matches_kubelet_fixture(name: str) -> None:
    fixture = _kubelet_topologies()[str(PRESETS[name].fixture)]
    rows = fixture["cpus"]
    assert isinstance(rows, list)
    machine = preset(name)
    assert len(machine.cpus) == len(rows)
    for row in rows:
        cpu = machine.cpu(row["cpu"])
        assert (cpu.core, cpu.socket, cpu.numa) == (row["core"], row["socket"], row["numa"])
        if "uncore_cache" in row:
            assert cpu.uncore_cache == row["uncore_cache"]


def test_every_preset_builds() -> None:
    for p in PRESETS.values():
        m = p.build()
        assert m.online_cpus
        assert all(n.distance_to(n.id) == 10 for n in m.numa_nodes)
