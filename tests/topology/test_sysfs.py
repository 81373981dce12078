"""``read_sysfs`` on small constructed trees: the kernel interfaces and the kubelet's view."""

from __future__ import annotations

from pathlib import Path

import pytest

from numaplane.topology.cpuset import CPUSet
from numaplane.topology.errors import SysfsError
from numaplane.topology.model import HugePages
from numaplane.topology.sysfs import parse_cpu_mask, read_sysfs
from tests.topology.sysfs_builder import cpu_files, node_files, write_tree


def _two_nodes(tmp_path: Path, **extra: str) -> Path:
    files = {
        "sys/devices/system/cpu/online": "0-3",
        **cpu_files([(0, 0, 0), (1, 1, 0), (2, 0, 0), (3, 1, 0)], l3={0: 7, 1: 7, 2: 7, 3: 7}),
        **node_files(0, "0-1", 1024, "10 21"),
        **node_files(1, "2-3", 2048, "21 10"),
        "sys/devices/system/node/online": "0-1",
        **extra,
    }
    return write_tree(tmp_path, files)


def test_cpus_nodes_memory_and_distances(tmp_path: Path) -> None:
    m = read_sysfs(_two_nodes(tmp_path))
    assert str(m.all_cpu_ids) == "0-3"
    assert [str(n.cpus) for n in m.numa_nodes] == ["0-1", "2-3"]
    assert [n.memory_bytes for n in m.numa_nodes] == [1024 * 1024, 2048 * 1024]
    assert m.distance(0, 1) == 21
    assert m.distance(1, 1) == 10
    assert m.cpu(3).uncore_cache == 7
    # core_id 0 on package 0 appears in both nodes: cAdvisor groups per node.
    assert m.cpu(2).physical_core == 2
    assert m.cpu(0).die == 0


def test_hugepages_per_node(tmp_path: Path) -> None:
    hp = "sys/devices/system/node/node0/hugepages"
    root = _two_nodes(
        tmp_path,
        **{
            f"{hp}/hugepages-2048kB/nr_hugepages": "8",
            f"{hp}/hugepages-2048kB/free_hugepages": "5",
            f"{hp}/hugepages-1048576kB/nr_hugepages": "1",
        },
    )
    node = read_sysfs(root).numa_node(0)
    assert node.hugepages == (HugePages(2048, 8, 5), HugePages(1048576, 1, 1))


def test_offline_cpu_is_kept_but_not_online(tmp_path: Path) -> None:
    root = _two_nodes(tmp_path, **{"sys/devices/system/cpu/online": "0-2"})
    m = read_sysfs(root)
    assert m.offline_cpu_ids == CPUSet([3])
    assert str(m.numa_node(1).cpus) == "2"
    assert m.cpu(2).physical_core == 2


def test_per_cpu_online_files_without_global_list(tmp_path: Path) -> None:
    files = {
        **cpu_files([(0, 0, 0), (1, 1, 0)]),
        "sys/devices/system/cpu/cpu1/online": "0",
        **node_files(0, "0-1", 10, "10"),
    }
    m = read_sysfs(write_tree(tmp_path, files))
    assert str(m.all_cpu_ids) == "0"


def test_sparse_cpu_and_node_ids_and_memory_only_node(tmp_path: Path) -> None:
    files = {
        "sys/devices/system/cpu/online": "4,9",
        **cpu_files([(4, 0, 0), (9, 1, 1)]),
        **node_files(3, "4", 10, "10 20 30"),
        **node_files(17, "9", 10, "20 10 30"),
        **node_files(250, "", 99, "30 30 10"),
        "sys/devices/system/node/online": "3,17,250",
    }
    m = read_sysfs(write_tree(tmp_path, files))
    assert m.numa_ids == (3, 17, 250)
    assert not m.numa_node(250).cpus
    assert m.distance(17, 250) == 30
    assert m.distance(250, 3) == 30


def test_no_node_directories_gives_a_node_per_package(tmp_path: Path) -> None:
    files = {
        **cpu_files([(0, 0, 0), (1, 0, 1)]),
        "proc/meminfo": "MemTotal:  4096 kB",
    }
    m = read_sysfs(write_tree(tmp_path, files))
    assert m.numa_ids == (0, 1)
    assert m.cpu(1).numa == 1
    assert m.memory_bytes == 0  # cAdvisor has no per-node memory for several packages


def test_single_package_without_nodes_gets_host_memory(tmp_path: Path) -> None:
    files = {**cpu_files([(0, 0, 0), (1, 1, 0)]), "proc/meminfo": "MemTotal:  4096 kB"}
    m = read_sysfs(write_tree(tmp_path, files))
    assert m.numa_ids == (0,)
    assert m.numa_node(0).memory_bytes == 4096 * 1024


def test_cpu_listed_by_two_nodes_ends_in_the_last_by_name(tmp_path: Path) -> None:
    files = {
        **cpu_files([(0, 0, 0), (1, 1, 0)]),
        **node_files(2, "0-1", 10, "10 20"),
        **node_files(10, "0-1", 10, "20 10"),
    }
    m = read_sysfs(write_tree(tmp_path, files))
    # Go's Glob sorts node10 before node2, so node2 is read last.
    assert m.cpu(0).numa == 2
    assert not m.numa_node(10).cpus


def test_more_than_64_cpus(tmp_path: Path) -> None:
    cpus = [(i, i % 48, i // 96) for i in range(192)]
    files = {
        "sys/devices/system/cpu/online": "0-191",
        **cpu_files(cpus),
        **node_files(0, "0-95", 10, "10 21"),
        **node_files(1, "96-191", 10, "21 10"),
    }
    m = read_sysfs(write_tree(tmp_path, files))
    assert len(m.online_cpus) == 192
    assert len(m.physical_core_ids) == 96
    assert m.siblings(0) == CPUSet([0, 48])


def test_pci_devices_with_sriov_and_odd_links(tmp_path: Path) -> None:
    dev = "sys/devices/pci0000:00"
    files = {
        **cpu_files([(0, 0, 0)]),
        **node_files(0, "0", 10, "10"),
        f"{dev}/0000:01:00.0/vendor": "0x8086",
        f"{dev}/0000:01:00.0/device": "0x1572",
        f"{dev}/0000:01:00.0/class": "0x020000",
        f"{dev}/0000:01:00.0/numa_node": "0",
        f"{dev}/0000:01:02.0/vendor": "0x8086",
        f"{dev}/0000:01:02.0/device": "0x154c",
        f"{dev}/0000:01:02.0/class": "0x020000",
        f"{dev}/0000:01:02.0/numa_node": "-1",
    }
    links = {
        "sys/bus/pci/devices/0000:01:00.0": "../../../devices/pci0000:00/0000:01:00.0",
        # an absolute link, as some captures hold: taken relative to the root
        "sys/bus/pci/devices/0000:01:02.0": f"/{dev}/0000:01:02.0",
        "sys/bus/pci/devices/0000:ff:00.0": "../../../devices/missing",
        f"{dev}/0000:01:00.0/driver": "../../../bus/pci/drivers/i40e",
        f"{dev}/0000:01:00.0/virtfn0": "../0000:01:02.0",
        f"{dev}/0000:01:02.0/physfn": "../0000:01:00.0",
    }
    m = read_sysfs(write_tree(tmp_path, files, links))
    by = {d.address: d for d in m.devices}
    assert by["0000:01:00.0"].driver == "i40e"
    assert by["0000:01:00.0"].numa == 0
    assert by["0000:01:00.0"].virtfns == ("0000:01:02.0",)
    assert by["0000:01:02.0"].physfn == "0000:01:00.0"
    assert by["0000:01:02.0"].numa is None
    assert by["0000:ff:00.0"].vendor == "0x0000"


def test_link_escaping_the_root_is_not_followed(tmp_path: Path) -> None:
    outside = write_tree(tmp_path / "outside", {"dev/numa_node": "5", "dev/vendor": "0x1234"})
    root = tmp_path / "root"
    write_tree(
        root,
        {**cpu_files([(0, 0, 0)]), **node_files(0, "0", 1, "10")},
        {"sys/bus/pci/devices/0000:00:01.0": str(outside.resolve() / "dev")},
    )
    (device,) = read_sysfs(root).devices
    assert device.vendor == "0x0000"
    assert device.numa is None


def test_not_a_sysfs_root(tmp_path: Path) -> None:
    with pytest.raises(SysfsError, match="not a sysfs root"):
        read_sysfs(tmp_path)


def test_mask_syntax() -> None:
    assert parse_cpu_mask("00000000,00000101") == CPUSet([0, 8])
    assert parse_cpu_mask("1,00000000") == CPUSet([32])
