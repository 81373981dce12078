"""This host is discovered and agrees with /proc/cpuinfo (parts containers hide are skipped)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from numaplane.topology.discover import load_machine
from numaplane.topology.model import Machine

CPUINFO = Path("/proc/cpuinfo")


@pytest.fixture(scope="module")
def host() -> Machine:
    if not Path("/sys/devices/system/cpu").is_dir():
        pytest.skip("no sysfs")
    return load_machine("/")


def _cpuinfo() -> list[dict[str, str]]:
    if not CPUINFO.exists():
        pytest.skip("no /proc/cpuinfo")
    blocks = []
    for block in CPUINFO.read_text().split("\n\n"):
        fields = {
            k.strip(): v.strip()
            for line in block.splitlines()
            if ":" in line
            for k, v in [line.split(":", 1)]
        }
        if "processor" in fields and fields["processor"].isdigit():
            blocks.append(fields)
    return blocks


def test_online_cpus_match_cpuinfo_processors(host: Machine) -> None:
    processors = {int(b["processor"]) for b in _cpuinfo()}
    assert {c.id for c in host.online_cpus} <= processors
    if not host.offline_cpu_ids:
        assert {c.id for c in host.online_cpus} == processors


def test_packages_match_physical_ids(host: Machine) -> None:
    blocks = [b for b in _cpuinfo() if "physical id" in b]
    if not blocks:
        pytest.skip("/proc/cpuinfo has no physical id (not x86 or hidden)")
    for b in blocks:
        cpu = int(b["processor"])
        if cpu in host.all_cpu_ids:
            assert host.cpu(cpu).socket == int(b["physical id"])
            if "core id" in b:
                assert host.cpu(cpu).core == int(b["core id"])


def test_node_memory_matches_node_meminfo(host: Machine) -> None:
    # /proc/meminfo is often virtualised in containers; the node files are what cAdvisor reads.
    for node in host.numa_nodes:
        meminfo = Path(f"/sys/devices/system/node/node{node.id}/meminfo")
        if not meminfo.exists():
            pytest.skip("no per-node meminfo")
        m = re.search(r"MemTotal:\s*(\d+) kB", meminfo.read_text())
        assert m is not None
        assert node.memory_bytes == int(m.group(1)) * 1024


def test_every_online_cpu_is_in_its_numa_node(host: Machine) -> None:
    for cpu in host.online_cpus:
        assert cpu.id in host.numa_node(cpu.numa).cpus
