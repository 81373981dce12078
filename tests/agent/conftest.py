"""Fixtures of the agent tests: what the host allows (root, writable cgroups), drivers, and
in-process agents (``make_agent``) on a synthetic machine with an in-memory driver.

Markers: ``root`` skips a test unless it runs as root; ``cgroup`` skips it unless a writable
cgroup cpuset hierarchy (v1 or v2) is mounted. Driver fixtures build each driver for real under
a parent cgroup unique to the test, and remove it (killing what is left in it) afterwards.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from numaplane.agent.affinity import AffinityDriver
from numaplane.agent.agent import Agent, AgentOptions
from numaplane.agent.cgroupapi import CgroupDriver
from numaplane.agent.cgroupfs import FsDriver, V1Driver, V2Driver
from numaplane.agent.cgroups import v1_hierarchies, v2_hierarchy
from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.cpuset import CPUSet
from numaplane.topology.discover import load_machine
from tests.agent.agent_fixtures import (
    SMALL_MACHINE,
    AgentFactory,
    MemoryDriver,
    kill_quietly,
    kubelet_config,
)

CGROUP_ROOT = Path("/sys/fs/cgroup")


def is_root() -> bool:
    """Whether the tests run as root."""
    return os.geteuid() == 0


def host_cpus() -> CPUSet:
    """The CPUs this process may run on."""
    return CPUSet(os.sched_getaffinity(0))


def host_mems() -> CPUSet:
    """The online memory nodes (node 0 where sysfs does not say)."""
    try:
        return CPUSet.parse(Path("/sys/devices/system/node/online").read_text().strip())
    except OSError:
        return CPUSet([0])


def v1_unusable() -> str | None:
    """Why no real v1 cpuset driver can be tested here, or ``None``."""
    if not is_root():
        return "needs root to write cgroups"
    if v1_hierarchies(CGROUP_ROOT) is None:
        return f"no writable cgroup v1 cpuset hierarchy at {CGROUP_ROOT}/cpuset"
    return None


def v2_unusable() -> str | None:
    """Why no real v2 driver can be tested here, or ``None``."""
    if not is_root():
        return "needs root to write cgroups"
    if v2_hierarchy(CGROUP_ROOT) is None:
        return f"no cgroup v2 hierarchy offering the cpuset controller at {CGROUP_ROOT}"
    return None


def cgroup_unusable() -> str | None:
    """Why neither cgroup driver can be tested here, or ``None``."""
    v1, v2 = v1_unusable(), v2_unusable()
    return None if v1 is None or v2 is None else f"{v1}; {v2}"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Apply the ``root`` and ``cgroup`` markers."""
    if item.get_closest_marker("root") is not None and not is_root():
        pytest.skip("needs root")
    if item.get_closest_marker("cgroup") is not None:
        reason = cgroup_unusable()
        if reason is not None:
            pytest.skip(reason)


def kill_all(driver: CgroupDriver, pod_uid: str, container: str) -> None:
    """SIGKILL whatever is in the container's cgroup and wait until it is empty."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        pids = driver.pids(pod_uid, container)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        time.sleep(0.02)


def _cleanup_fs(driver: FsDriver) -> None:
    for hierarchy in driver.hierarchies:
        parent = driver.parent_dir(hierarchy)
        if not parent.is_dir():
            continue
        for pod in parent.iterdir():
            if pod.is_dir():
                for container in pod.iterdir():
                    if container.is_dir():
                        kill_all(driver, pod.name.removeprefix("pod"), container.name)
    driver.remove_parent()


def _fs_driver(make: Callable[[str], FsDriver]) -> Iterator[FsDriver]:
    driver = make(f"numaplane-test-{uuid.uuid4().hex[:10]}")
    driver.prepare()
    try:
        yield driver
    finally:
        _cleanup_fs(driver)
        leftovers = [driver.parent_dir(h) for h in driver.hierarchies]
        assert not any(p.exists() for p in leftovers), f"left behind: {leftovers}"


@pytest.fixture
def v1_driver() -> Iterator[FsDriver]:
    """A real v1 driver under a fresh parent, removed afterwards."""
    reason = v1_unusable()
    if reason is not None:
        pytest.skip(reason)
    hierarchies = v1_hierarchies(CGROUP_ROOT)
    assert hierarchies is not None
    yield from _fs_driver(
        lambda parent: V1Driver(hierarchies, parent, all_cpus=host_cpus(), all_mems=host_mems())
    )


@pytest.fixture
def v2_driver() -> Iterator[FsDriver]:
    """A real v2 driver under a fresh parent, removed afterwards."""
    reason = v2_unusable()
    if reason is not None:
        pytest.skip(reason)
    unified = v2_hierarchy(CGROUP_ROOT)
    assert unified is not None
    yield from _fs_driver(
        lambda parent: V2Driver([unified], parent, all_cpus=host_cpus(), all_mems=host_mems())
    )


@pytest.fixture
def affinity_driver() -> AffinityDriver:
    """The ``sched_setaffinity`` driver (no privileges needed for our own children)."""
    return AffinityDriver()


@pytest.fixture(params=["v2", "v1", "affinity"])
def driver(request: pytest.FixtureRequest) -> CgroupDriver:
    """Each driver in turn, skipped where the host does not offer it."""
    name = request.param
    fixture = {"v2": "v2_driver", "v1": "v1_driver", "affinity": "affinity_driver"}[name]
    found: CgroupDriver = request.getfixturevalue(fixture)
    return found


@pytest.fixture(params=["v2", "v1"])
def fs_driver(request: pytest.FixtureRequest) -> FsDriver:
    """Each cgroup file-system driver in turn, skipped where the host does not offer it."""
    found: FsDriver = request.getfixturevalue(f"{request.param}_driver")
    return found


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """A manifest directory (created) and a state directory (not yet)."""
    manifests, state = tmp_path / "pods", tmp_path / "state"
    manifests.mkdir()
    return manifests, state


@pytest.fixture
def popens() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Children of abandoned agents, reaped (killed if still running) after the test."""
    children: list[subprocess.Popen[bytes]] = []
    yield children
    for child in children:
        if child.poll() is None:
            kill_quietly(child.pid)
        child.wait(10)


@pytest.fixture
def make_agent(
    dirs: tuple[Path, Path], popens: list[subprocess.Popen[bytes]]
) -> Iterator[AgentFactory]:
    """Builds started agents on ``dirs``; every pod they run is stopped at the end."""
    made: list[Agent] = []
    pids: list[int] = []

    def make(
        config: KubeletConfiguration | None = None,
        driver: CgroupDriver | None = None,
        reset_state: bool = False,
        machine: str = SMALL_MACHINE,
    ) -> Agent:
        manifests, state = dirs
        options = AgentOptions(
            machine=load_machine(machine),
            config=config or kubelet_config(),
            manifest_dir=manifests,
            state_dir=state,
            poll_interval=0.05,
            reset_state=reset_state,
            device_plugins=False,
        )
        agent = Agent(options, driver=driver or MemoryDriver())
        agent.start()
        made.append(agent)
        return agent

    yield make
    for agent in made:
        pids.extend(r.pid for r in agent.process_records())
        agent.stop_all_pods()
        agent.close()
    for pid in pids:
        kill_quietly(pid)
