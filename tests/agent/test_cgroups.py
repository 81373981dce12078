"""Cgroup drivers: real confinement (v1, v2 where mounted, affinity), files, removal, detection."""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from numaplane.agent.affinity import AffinityDriver
from numaplane.agent.cgroupapi import CgroupDriver, ContainerLimits
from numaplane.agent.cgroupfs import FsDriver, V1Driver
from numaplane.agent.cgroups import detect_driver, v1_hierarchies
from numaplane.agent.errors import AgentError, CgroupBusyError, CgroupError
from numaplane.cpuset import CPUSet
from numaplane.errors import NumaplaneError
from tests.agent.conftest import CGROUP_ROOT, host_cpus, host_mems, kill_all, v1_unusable

POD = "uid-1"
MiB = 1 << 20


def allowed_cpus(pid: int) -> CPUSet:
    """``Cpus_allowed_list`` of ``pid``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return CPUSet.parse(line.split(":", 1)[1].strip())
    raise AssertionError(f"no Cpus_allowed_list for {pid}")


@pytest.fixture
def spawn(driver: CgroupDriver) -> Iterator[list[subprocess.Popen[bytes]]]:
    """A list to put started processes in; they are killed and reaped afterwards."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait(5)


def start_in(driver: CgroupDriver, container: str) -> subprocess.Popen[bytes]:
    """``sleep`` joined to ``container`` before it execs (as the runtime does)."""

    def join() -> None:
        driver.attach(POD, container, os.getpid())

    proc = subprocess.Popen(["sleep", "30"], preexec_fn=join, start_new_session=True)
    driver.attach(POD, container, proc.pid)
    return proc


def test_an_attached_process_runs_on_the_containers_cpus_and_moves_with_them(
    driver: CgroupDriver, spawn: list[subprocess.Popen[bytes]]
) -> None:
    cpus = host_cpus()
    last, first = CPUSet([max(cpus)]), CPUSet([min(cpus)])
    driver.ensure_container(POD, "app", ContainerLimits(cpus=last))
    proc = start_in(driver, "app")
    spawn.append(proc)
    assert allowed_cpus(proc.pid) == last
    assert driver.pids(POD, "app") == [proc.pid]
    assert driver.cpus_of(POD, "app") == last

    driver.update_cpus(POD, "app", first)
    assert allowed_cpus(proc.pid) == first
    assert driver.cpus_of(POD, "app") == first


def test_children_started_later_inherit_the_confinement(
    driver: CgroupDriver, spawn: list[subprocess.Popen[bytes]]
) -> None:
    cpus = CPUSet([max(host_cpus())])
    driver.ensure_container(POD, "app", ContainerLimits(cpus=cpus))

    def join() -> None:
        driver.attach(POD, "app", os.getpid())

    out = subprocess.run(
        ["sh", "-c", "grep Cpus_allowed_list /proc/self/status"],
        preexec_fn=join,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split(":")[1].strip() == str(cpus)


def test_removal_refuses_while_processes_remain_and_then_leaves_nothing(
    driver: CgroupDriver, spawn: list[subprocess.Popen[bytes]]
) -> None:
    cpus = CPUSet([min(host_cpus())])
    driver.ensure_container(POD, "app", ContainerLimits(cpus=cpus))
    driver.ensure_container(POD, "idle", ContainerLimits(cpus=cpus))
    proc = start_in(driver, "app")
    spawn.append(proc)

    with pytest.raises(CgroupBusyError, match=str(proc.pid)) as busy:
        driver.remove_container(POD, "app")
    assert isinstance(busy.value, AgentError)
    assert isinstance(busy.value, NumaplaneError)
    with pytest.raises(CgroupBusyError):
        driver.remove_pod(POD)
    # A refusal changes nothing, not even the idle sibling.
    assert driver.cpus_of(POD, "app") == cpus
    assert driver.cpus_of(POD, "idle") == cpus

    kill_all(driver, POD, "app")
    driver.remove_container(POD, "app")
    driver.remove_container(POD, "app")  # absent: nothing to do
    assert driver.cpus_of(POD, "app") is None
    driver.remove_pod(POD)
    assert driver.cpus_of(POD, "idle") is None
    if isinstance(driver, FsDriver):
        assert not any(driver.pod_dir(h, POD).exists() for h in driver.hierarchies)


@dataclass(frozen=True)
class LimitsCase:
    """Limits and the interface files they must produce, per driver."""

    name: str
    limits: ContainerLimits
    v1: Mapping[str, str]
    v2: Mapping[str, str]


LIMITS_CASES = [
    LimitsCase(
        "memory and quota",
        ContainerLimits(
            cpus=CPUSet([0]), mems=CPUSet([0]), memory_max=256 * MiB, cpu_quota_us=50_000
        ),
        {"memory.limit_in_bytes": str(256 * MiB), "cpu.cfs_quota_us": "50000",
         "cpu.cfs_period_us": "100000", "cpuset.mems": "0"},
        {"memory.max": str(256 * MiB), "cpu.max": "50000 100000", "cpuset.mems": "0"},
    ),
    LimitsCase(
        "no limits",
        ContainerLimits(cpus=CPUSet([0]), cpu_period_us=50_000),
        {"cpu.cfs_quota_us": "-1", "cpu.cfs_period_us": "50000"},
        {"memory.max": "max", "cpu.max": "max 50000"},
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", LIMITS_CASES, ids=lambda c: c.name)
def test_limits_are_written_to_the_interface_files(fs_driver: FsDriver, case: LimitsCase) -> None:
    driver = fs_driver
    driver.ensure_container(POD, "app", case.limits)
    expected = case.v1 if driver.name == "v1" else case.v2
    for filename, value in expected.items():
        files = [driver.container_dir(h, POD, "app") / filename for h in driver.hierarchies]
        present = [f for f in files if f.exists()]
        if not present:
            continue  # that controller is not mounted here
        assert present[0].read_text().strip() == value, filename


@pytest.mark.root
def test_a_failed_creation_leaves_no_directory_behind(v1_driver: FsDriver) -> None:
    with pytest.raises(CgroupError, match=r"cpuset\.cpus"):
        v1_driver.ensure_container(POD, "app", ContainerLimits(cpus=CPUSet([4095])))
    for hierarchy in v1_driver.hierarchies:
        assert not v1_driver.pod_dir(hierarchy, POD).exists()


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b"])
def test_names_that_would_escape_the_tree_are_refused(
    affinity_driver: AffinityDriver, tmp_path: Path, bad: str
) -> None:
    make_tree(tmp_path, V1_FULL)
    hierarchies = v1_hierarchies(tmp_path)
    assert hierarchies is not None
    fs = V1Driver(hierarchies, "np", all_cpus=CPUSet([0]), all_mems=CPUSet([0]))
    with pytest.raises(CgroupError, match="cannot name a cgroup"):
        fs.ensure_container(POD, bad, ContainerLimits(cpus=CPUSet([0])))
    with pytest.raises(CgroupError, match="cannot name a cgroup"):
        affinity_driver.ensure_container(POD, bad, ContainerLimits(cpus=CPUSet([0])))
    with pytest.raises(CgroupError, match="cannot name a cgroup"):
        affinity_driver.ensure_pod(bad)


def test_attach_to_an_unknown_container_is_an_error(affinity_driver: AffinityDriver) -> None:
    with pytest.raises(CgroupError, match="ensure_container"):
        affinity_driver.attach(POD, "ghost", os.getpid())


# Detection over fake trees ------------------------------------------------------------------


@dataclass(frozen=True)
class DetectCase:
    """A fake cgroup mount and the driver (and warnings) detection must give."""

    name: str
    files: Mapping[str, str]
    driver: str
    warnings: tuple[str, ...] = field(default_factory=tuple)


V1_FULL = {
    "cpuset/cpuset.cpus": "0-3",
    "cpuset/cpuset.mems": "0",
    "memory/memory.limit_in_bytes": "-1",
    "cpu,cpuacct/cpu.cfs_quota_us": "-1",
}

DETECT_CASES = [
    DetectCase("v2 with cpuset", {"cgroup.controllers": "cpuset cpu io memory pids"}, "v2"),
    DetectCase(
        "v2 without cpu",
        {"cgroup.controllers": "cpuset memory"},
        "v2",
        ("lacks the cpu controller",),
    ),
    DetectCase("v2 lacking cpuset: v1", {"cgroup.controllers": "cpu memory", **V1_FULL}, "v1"),
    DetectCase("v1", V1_FULL, "v1"),
    DetectCase(
        "v1 cpuset only",
        {"cpuset/cpuset.cpus": "0-3"},
        "v1",
        ("lacks the memory, cpu controller(s)",),
    ),
    DetectCase("nothing", {}, "affinity", ("sched_setaffinity only",)),
]  # fmt: skip


def make_tree(root: Path, files: Mapping[str, str]) -> None:
    """Write ``files`` (relative path -> content) under ``root``."""
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


@pytest.mark.parametrize("case", DETECT_CASES, ids=lambda c: c.name)
def test_detection_picks_the_best_usable_driver(tmp_path: Path, case: DetectCase) -> None:
    make_tree(tmp_path, case.files)
    warnings: list[str] = []
    driver = detect_driver(
        tmp_path, "np/agent", all_cpus=CPUSet.parse("0-3"), all_mems=CPUSet([0]),
        warn=warnings.append,
    )  # fmt: skip
    assert driver.name == case.driver
    assert len(warnings) == len(case.warnings)
    for warning, expected in zip(warnings, case.warnings, strict=True):
        assert expected in warning


def test_v2_enables_controllers_along_the_path_and_writes_limits(tmp_path: Path) -> None:
    make_tree(tmp_path, {"cgroup.controllers": "cpuset cpu io memory"})
    driver = detect_driver(
        tmp_path, "np/agent", all_cpus=CPUSet.parse("0-3"), all_mems=CPUSet.parse("0-1"),
        warn=pytest.fail,
    )  # fmt: skip
    for level in (tmp_path, tmp_path / "np", tmp_path / "np" / "agent"):
        assert (level / "cgroup.subtree_control").read_text() == "+cpuset +memory +cpu"
    driver.ensure_container(POD, "app", ContainerLimits(cpus=CPUSet([2, 3]), memory_max=MiB))
    pod = tmp_path / "np" / "agent" / f"pod{POD}"
    assert (pod / "cgroup.subtree_control").read_text() == "+cpuset +memory +cpu"
    files = {p.name: p.read_text() for p in (pod / "app").iterdir()}
    assert files == {
        "cpuset.cpus": "2-3",
        "cpuset.mems": "0-1",
        "memory.max": str(MiB),
        "cpu.max": "max 100000",
    }
    driver.attach(POD, "app", 4242)
    assert driver.pids(POD, "app") == [4242]


def test_an_unwritable_v2_tree_falls_back_with_a_warning(tmp_path: Path) -> None:
    make_tree(tmp_path, {"cgroup.controllers": "cpuset", **V1_FULL})
    # A file where the parent directory should be: creation fails, v1 is next.
    (tmp_path / "np").write_text("")
    warnings: list[str] = []
    driver = detect_driver(
        tmp_path, "np", all_cpus=CPUSet([0]), all_mems=CPUSet([0]), warn=warnings.append
    )
    assert driver.name == "v1"
    assert len(warnings) == 1
    assert "cgroup v2" in warnings[0]
    assert "np" in warnings[0]


@pytest.mark.root
def test_detection_on_this_host_prefers_a_cgroup_driver() -> None:
    reason = v1_unusable()
    if reason is not None and v1_hierarchies(CGROUP_ROOT) is None:
        pytest.skip(reason)
    parent = f"numaplane-test-{uuid.uuid4().hex[:10]}"
    warnings: list[str] = []
    driver = detect_driver(
        CGROUP_ROOT, parent, all_cpus=host_cpus(), all_mems=host_mems(), warn=warnings.append
    )
    try:
        assert driver.name in ("v2", "v1")
        assert isinstance(driver, FsDriver)
        assert all(driver.parent_dir(h).is_dir() for h in driver.hierarchies)
    finally:
        assert isinstance(driver, FsDriver)
        driver.remove_parent()
    assert not any(driver.parent_dir(h).exists() for h in driver.hierarchies)
