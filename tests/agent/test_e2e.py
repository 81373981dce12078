"""The agent on this host, end to end: real cgroups, real processes, a real device plugin.

Each test runs ``python3 -m numaplane.cli.main agent`` as a subprocess with its own cgroup
parent and state directory. Every wait is bounded; a finalizer kills the agent, every process
the test's marker shows in ``/proc`` and removes the test's cgroups.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from numaplane.agent.admissions import AdmissionRecords
from numaplane.agent.records import ProcessRecords
from numaplane.api.manifest import pod_from_dict
from numaplane.cpuset import CPUSet
from numaplane.deviceplugin.plugin import DevicePluginServer
from numaplane.node.checkpoint import CheckpointStore
from numaplane.node.cpumanager.state_checkpoint import CheckpointState as CPUState
from numaplane.node.devicemanager import Device
from numaplane.node.devicemanager.state_checkpoint import CheckpointState as DeviceState
from numaplane.node.memorymanager.state_checkpoint import CheckpointState as MemoryState
from numaplane.node.podrecords import PodRecords
from numaplane.topology.discover import load_machine
from tests.agent.agent_fixtures import (
    alive,
    cpus_allowed,
    environ,
    get_json,
    get_text,
    kill_quietly,
    pod_manifest,
    pod_named,
    running_pid,
    wait_for,
    write_config,
    write_pod,
)

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _cpuset_writable() -> bool:
    v2 = CGROUP_ROOT / "cgroup.controllers"
    if v2.is_file():
        return "cpuset" in v2.read_text().split() and os.access(CGROUP_ROOT, os.W_OK)
    return (CGROUP_ROOT / "cpuset" / "cpuset.cpus").is_file() and os.access(
        CGROUP_ROOT / "cpuset", os.W_OK
    )


def _online_cpus() -> CPUSet:
    return CPUSet.parse(Path("/sys/devices/system/cpu/online").read_text().strip())


pytestmark = [
    pytest.mark.root,
    pytest.mark.cgroup,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root"),
    pytest.mark.skipif(not _cpuset_writable(), reason="no writable cpuset cgroup"),
    pytest.mark.skipif(len(_online_cpus()) < 2, reason="needs at least 2 online CPUs"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Host:
    """One test's agent set-up: directories, cgroup parent, port, marker, processes."""

    root: Path
    parent: str = field(default_factory=lambda: f"nptest-{uuid.uuid4().hex[:8]}")
    marker: str = field(default_factory=lambda: uuid.uuid4().hex)
    port: int = field(default_factory=_free_port)
    agents: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def manifests(self) -> Path:
        return self.root / "pods"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def config(self) -> Path:
        return self.root / "kubelet.yaml"

    def pod(self, name: str, **kwargs: Any) -> dict[str, Any]:
        """A pod manifest whose processes carry this test's marker in their environment."""
        env = dict(kwargs.pop("env", {}) or {})
        env["NPTEST_MARKER"] = self.marker
        return pod_manifest(name, env=env, **kwargs)

    def args(self, *extra: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "numaplane.cli.main",
            "agent",
            "--config",
            str(self.config),
            "--pod-manifest-path",
            str(self.manifests),
            "--state-dir",
            str(self.state),
            "--machine",
            "/",
            "--cgroup-parent",
            self.parent,
            "--listen",
            f"127.0.0.1:{self.port}",
            "--poll-interval",
            "0.1",
            *extra,
        ]

    def start(self, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start an agent and wait until it answers."""
        proc = self.spawn(*extra, env=env)
        wait_for("the agent to answer", lambda: self._healthy(proc), timeout=30)
        return proc

    def spawn(self, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start an agent without waiting."""
        full_env = {**os.environ, **(env or {})}
        proc = subprocess.Popen(
            self.args(*extra), env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        self.agents.append(proc)
        return proc

    def _healthy(self, proc: subprocess.Popen[bytes]) -> bool:
        if proc.poll() is not None:
            raise AssertionError(
                f"agent exited {proc.returncode}: {proc.stderr and proc.stderr.read()!r}"
            )
        with contextlib.suppress(OSError):
            return get_text(self.port, "/healthz") == "ok"
        return False

    def pods(self) -> list[dict[str, Any]]:
        return list(get_json(self.port, "/pods"))

    def marked(self) -> set[int]:
        """Live processes carrying this test's marker."""
        found: set[int] = set()
        needle = f"NPTEST_MARKER={self.marker}".encode()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            with contextlib.suppress(OSError):
                if needle in Path(f"/proc/{entry}/environ").read_bytes() and alive(int(entry)):
                    found.add(int(entry))
        return found

    def cleanup(self) -> None:
        for proc in self.agents:
            with contextlib.suppress(OSError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
            if proc.stderr is not None:
                proc.stderr.close()
        for pid in self.marked():
            kill_quietly(pid)
        deadline = time.monotonic() + 10
        while self.marked() and time.monotonic() < deadline:
            time.sleep(0.05)
        for hierarchy in [CGROUP_ROOT, *CGROUP_ROOT.iterdir()]:
            top = hierarchy / self.parent
            if not top.is_dir():
                continue
            for directory in sorted(top.rglob("*"), key=lambda p: -len(p.parts)):
                if directory.is_dir():
                    with contextlib.suppress(OSError):
                        directory.rmdir()
            with contextlib.suppress(OSError):
                top.rmdir()


HostFactory = Callable[..., Host]


@pytest.fixture
def new_host() -> Iterator[HostFactory]:
    """Builds hosts whose configuration is the default one with ``overrides``; each is cleaned
    up (agents, marked processes, cgroups, directories) at the end."""
    made: list[Host] = []

    def make(**overrides: Any) -> Host:
        # A short root keeps the device-plugin socket paths under the unix limit.
        root = Path(f"/tmp/npe-{uuid.uuid4().hex[:8]}")
        root.mkdir()
        setup = Host(root)
        made.append(setup)
        setup.manifests.mkdir()
        write_config(setup.config, **overrides)
        return setup

    try:
        yield make
    finally:
        for setup in made:
            setup.cleanup()
            subprocess.run(["rm", "-rf", str(setup.root)], check=False)


@pytest.fixture
def host(new_host: HostFactory) -> Host:
    return new_host()


def _exclusive_cpu() -> CPUSet:
    return _online_cpus() - CPUSet.parse("0")


def test_guaranteed_pod_runs_on_its_exclusive_cpu(host: Host) -> None:
    host.start()
    write_pod(host.manifests, host.pod("shared"))
    shared_pid = wait_for("shared running", lambda: running_pid(host.pods(), "shared"))
    assert cpus_allowed(shared_pid) == _online_cpus()

    write_pod(host.manifests, host.pod("pinned", cpu="1"))
    pid = wait_for("pinned running", lambda: running_pid(host.pods(), "pinned"))
    pinned = pod_named(host.pods(), "pinned")
    assert pinned is not None
    exclusive = CPUSet.parse(pinned["containers"][0]["cpus"])
    assert len(exclusive) == 1
    assert 0 not in exclusive  # reservedSystemCPUs
    assert cpus_allowed(pid) == exclusive
    # The BestEffort process left the exclusive CPU.
    wait_for("shared pool shrunk", lambda: cpus_allowed(shared_pid) == _online_cpus() - exclusive)

    (host.manifests / "pinned.yaml").unlink()
    wait_for("pinned stopped", lambda: not alive(pid), timeout=15)
    wait_for("CPU back in the pool", lambda: cpus_allowed(shared_pid) == _online_cpus())
    assert pod_named(host.pods(), "pinned") is None


def test_sigkill_then_restart_adopts_the_same_processes(host: Host) -> None:
    agent = host.start()
    write_pod(host.manifests, host.pod("pinned", cpu="1"))
    write_pod(host.manifests, host.pod("shared"))
    pid = wait_for("pinned running", lambda: running_pid(host.pods(), "pinned"))
    shared_pid = wait_for("shared running", lambda: running_pid(host.pods(), "shared"))
    before = pod_named(host.pods(), "pinned")
    assert before is not None
    wait_for(
        "records written", lambda: len(ProcessRecords(CheckpointStore(host.state)).load()) == 2
    )
    agent.send_signal(signal.SIGKILL)
    agent.wait(10)

    host.start()
    after = wait_for("pinned adopted", lambda: pod_named(host.pods(), "pinned"))
    assert after["containers"][0]["pid"] == pid
    assert after["containers"][0]["cpus"] == before["containers"][0]["cpus"]
    assert after["containers"][0]["restartCount"] == 0
    assert running_pid(host.pods(), "shared") == shared_pid
    assert alive(pid)
    assert alive(shared_pid)
    write_pod(host.manifests, host.pod("second", cpu="1"))
    second = wait_for("second decided", lambda: pod_named(host.pods(), "second"))
    assert second["phase"] == "Failed"  # the only exclusive CPU is still held
    assert cpus_allowed(pid) == CPUSet.parse(before["containers"][0]["cpus"])


def _static_memory_config() -> dict[str, Any]:
    """``memoryManagerPolicy: Static`` with a reservation valid for this host: ``systemReserved``
    memory X, a 100Mi hard eviction threshold, and X + 100Mi reserved on the first NUMA node."""
    machine = load_machine("/")
    first = machine.numa_nodes[0]
    mib = min(256, first.memory_bytes // (8 << 20))
    return {
        "memoryManagerPolicy": "Static",
        "systemReserved": {"memory": f"{mib}Mi"},
        "evictionHard": {"memory.available": "100Mi"},
        "reservedMemory": [{"numaNode": first.id, "limits": {"memory": f"{mib + 100}Mi"}}],
    }


def _mems_allowed(pid: int) -> CPUSet:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Mems_allowed_list:"):
            return CPUSet.parse(line.split(":", 1)[1].strip())
    raise AssertionError(f"no Mems_allowed_list for {pid}")


def _check_consistent(host: Host, expected: set[str], memory_policy: str) -> None:
    """Checkpoints, records and /proc agree: nothing double-assigned, nothing leaked."""
    store = CheckpointStore(host.state)
    pods = {p.uid: p for p in PodRecords(store).load()}
    assert {p.name for p in pods.values()} == expected
    processes = ProcessRecords(store).load()
    by_container = {(r.pod_uid, r.container) for r in processes}
    assert len(by_container) == len(processes), processes
    assert {r.pod_uid for r in processes} == set(pods)
    assert {r.pid for r in processes} == host.marked()
    pid_of = {(r.pod_uid, r.container): r.pid for r in processes}

    cpus = CPUState.open(host.state, "static")
    exclusive = cpus.get_cpu_assignments()
    assert set(exclusive) <= set(pods), "CPUs held by a pod that is not recorded"
    assigned: list[int] = []
    for uid, containers in exclusive.items():
        for name, held in containers.items():
            assert cpus_allowed(pid_of[(uid, name)]) == held
            assigned.extend(held)
    assert len(assigned) == len(set(assigned)), assigned
    assert 0 not in assigned
    assert cpus.get_default_cpu_set() == _online_cpus() - CPUSet(assigned)
    for pod in pods.values():
        guaranteed = pod.qos_class.value == "Guaranteed"
        for container in pod.all_containers():
            pid = pid_of[(pod.uid, container.name)]
            if container.name not in exclusive.get(pod.uid, {}):
                assert not guaranteed or container.limits_of("cpu").milli_value() % 1000
                assert cpus_allowed(pid) == _online_cpus() - CPUSet(assigned)

    memory = MemoryState.open(host.state, memory_policy)
    blocks = memory.get_memory_assignments()
    assert set(blocks) <= set(pods), "memory held by a pod that is not recorded"
    if memory_policy == "None":
        assert not blocks
    else:
        used: dict[tuple[int, str], int] = {}
        for pod in pods.values():
            if pod.qos_class.value != "Guaranteed":
                assert pod.uid not in blocks
                continue
            for container in pod.all_containers():
                mine = blocks[pod.uid][container.name]
                nodes = CPUSet(n for b in mine for n in b.numa_affinity)
                assert _mems_allowed(pid_of[(pod.uid, container.name)]) == nodes
                for block in mine:
                    (node,) = block.numa_affinity
                    used[(node, block.type)] = used.get((node, block.type), 0) + block.size
        for node_id, numa in memory.get_machine_state().items():
            for resource, table in numa.memory_map.items():
                taken = used.get((node_id, resource), 0)
                assert table.reserved == taken <= table.allocatable, (node_id, resource, table)
                assert table.free == table.allocatable - taken

    devices = DeviceState.open(host.state)
    assert devices.pod_uids() <= set(pods), "devices held by a pod that is not recorded"

    # Every recorded pod keeps its admission (written before the pod records, dropped after),
    # and /pods shows it, whether this agent admitted the pod or adopted it.
    admitted = AdmissionRecords(store).load(range(64))
    assert set(pods) <= set(admitted), "a recorded pod without its admission"
    for shown in host.pods():
        assert shown["admission"] == admitted[shown["uid"]], shown["name"]


def _all_running(host: Host, names: set[str]) -> bool:
    return all(running_pid(host.pods(), n) for n in names) and len(host.marked()) == len(names)


RANDOM_CRASH_RUNS = 32
"""Agent runs of the random-crash test, alternating between its two memory policies."""


def test_crashes_at_random_points_leak_nothing(new_host: HostFactory) -> None:
    """Agents killed at random state writes (admissions, releases, start-up), under the memory
    manager's ``None`` and ``Static`` policies in turn: every restart is accepted and, at the
    end, every manifest runs and nothing is held twice or leaked."""
    rng = random.Random(int(os.environ.get("NPTEST_SEED", "6")))
    # kubeReserved rather than reservedSystemCPUs: CPU 0 is still reserved, but 1.9 CPUs stay
    # allocatable, so the exclusive pod and a fractional Guaranteed one fit together.
    cpus: dict[str, Any] = {"reservedSystemCPUs": None, "kubeReserved": {"cpu": "100m"}}
    hosts = {"None": new_host(**cpus), "Static": new_host(**cpus, **_static_memory_config())}
    manifests = {
        policy: {
            "pinned": host.pod("pinned", cpu="1"),
            "sized": host.pod("sized", cpu="500m", memory="128Mi"),
            "shared-a": host.pod("shared-a"),
            "shared-b": host.pod("shared-b"),
        }
        for policy, host in hosts.items()
    }
    order = list(hosts)
    # A fixed number of runs, not a time box: a loaded machine makes the test slower, never
    # different (the crash points come from the seeded generator).
    runs = 0
    crashed = dict.fromkeys(hosts, 0)
    while runs < RANDOM_CRASH_RUNS:
        policy = order[runs % len(order)]
        host = hosts[policy]
        for name, doc in manifests[policy].items():
            path = host.manifests / f"{name}.yaml"
            if rng.random() < 0.4:
                if path.exists():
                    path.unlink()
                else:
                    write_pod(host.manifests, doc)
        crash_at = rng.randint(1, 16)
        proc = host.spawn("--once", env={"NUMAPLANE_AGENT_CRASH_AT": str(crash_at)})
        try:
            code = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        assert code in (0, 137), (policy, proc.stderr.read() if proc.stderr else code)
        crashed[policy] += code == 137
        runs += 1
    assert all(n >= 3 for n in crashed.values()), crashed
    for policy, host in hosts.items():
        host.start()
        present = {p.stem for p in host.manifests.glob("*.yaml")}
        wait_for(
            f"every pod running ({policy})", functools.partial(_all_running, host, present), 30
        )
    time.sleep(0.5)  # let the records writers catch up
    for policy, host in hosts.items():
        _check_consistent(host, {p.stem for p in host.manifests.glob("*.yaml")}, policy)


def test_device_plugin_devices_reach_the_process(host: Host) -> None:
    host.start()
    plugin_dir = host.state / "device-plugins"
    plugin = DevicePluginServer(
        "example.com/fake",
        [Device("fake-0", (0,)), Device("fake-1", (0,))],
        plugin_dir=plugin_dir,
    )
    plugin.start()
    try:
        plugin.register(timeout=20)
        wait_for(
            "the devices in /topology",
            lambda: any(
                d["healthy"]
                for z in get_json(host.port, "/topology")["zones"]
                for d in z["devices"]
            ),
        )
        write_pod(
            host.manifests,
            host.pod("gpu", cpu="1", extra={"example.com/fake": "1"}),
        )
        pid = wait_for("gpu pod running", lambda: running_pid(host.pods(), "gpu"))
        pod = pod_named(host.pods(), "gpu")
        assert pod is not None
        container = pod["containers"][0]
        (device,) = container["devices"]["example.com/fake"]
        assert device in ("fake-0", "fake-1")
        zones = get_json(host.port, "/topology")["zones"]
        cpu = CPUSet.parse(container["cpus"]).min()
        (zone,) = [z for z in zones if cpu in CPUSet.parse(z["cpus"])]
        held = [d for d in zone["devices"] if d["id"] == device]
        assert held == [
            {"resource": "example.com/fake", "id": device, "healthy": True, "allocated": True}
        ]
        assert environ(pid)["NUMAPLANE_VISIBLE_DEVICES"] == device
    finally:
        plugin.stop()

    def all_unhealthy() -> bool:
        zones = get_json(host.port, "/topology")["zones"]
        devices = [d for z in zones for d in z["devices"]]
        return bool(devices) and not any(d["healthy"] for d in devices)

    wait_for("devices unhealthy after the plugin stopped", all_unhealthy)


def test_manifest_pod_uid_is_stable() -> None:
    """The e2e checks rely on a manifest without a uid getting the same uid every read."""
    first = pod_from_dict(pod_manifest("x"), "<a>")
    second = pod_from_dict(pod_manifest("x"), "<b>")
    assert first.uid == second.uid
