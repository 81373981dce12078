"""Helpers of the agent tests: manifests, configurations, an in-memory cgroup driver, waits,
abandoned agents."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from numaplane.agent.agent import Agent
from numaplane.agent.cgroups import ContainerLimits
from numaplane.agent.process import ChildProcess
from numaplane.api.kubeletconfig import KubeletConfiguration, kubelet_config_from_dict
from numaplane.cpuset import CPUSet

T = TypeVar("T")

#: The synthetic machine of the in-process agents (4 CPUs on 2 NUMA nodes).
SMALL_MACHINE = "sockets=1,numa-per-socket=2,cores-per-numa=2,threads-per-core=1"

#: ``make_agent``: builds a started in-process agent (see ``conftest``).
AgentFactory = Callable[..., Agent]

STATIC_SINGLE_NUMA: Mapping[str, Any] = {
    "apiVersion": "kubelet.config.k8s.io/v1beta1",
    "kind": "KubeletConfiguration",
    "cpuManagerPolicy": "static",
    "reservedSystemCPUs": "0",
    "topologyManagerPolicy": "single-numa-node",
}

#: Overrides for ``memoryManagerPolicy: Static`` on a machine whose node 0 can spare 1Gi
#: (systemReserved 924Mi and a 100Mi eviction threshold, all reserved on node 0).
STATIC_MEMORY: Mapping[str, Any] = {
    "memoryManagerPolicy": "Static",
    "systemReserved": {"memory": "924Mi"},
    "evictionHard": {"memory.available": "100Mi"},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
}


def kubelet_config(**overrides: Any) -> KubeletConfiguration:
    """The static/single-numa-node configuration with ``overrides`` (camelCase keys)."""
    doc = dict(STATIC_SINGLE_NUMA)
    doc.update(overrides)
    return kubelet_config_from_dict(doc)


def write_config(path: Path, **overrides: Any) -> Path:
    """Write the configuration YAML to ``path``."""
    doc = dict(STATIC_SINGLE_NUMA)
    doc.update(overrides)
    path.write_text(yaml.safe_dump(doc))
    return path


def pod_manifest(
    name: str,
    command: Sequence[str] = ("sleep", "600"),
    *,
    cpu: str | None = None,
    memory: str | None = None,
    extra: Mapping[str, str] | None = None,
    restart_policy: str = "Always",
    grace: int = 1,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A one-container pod; ``cpu`` (with ``memory``, 64Mi by default) sets requests = limits:
    a Guaranteed pod."""
    if cpu is not None and memory is None:
        memory = "64Mi"
    resources: dict[str, Any] = {}
    limits: dict[str, str] = {}
    if cpu is not None:
        limits["cpu"] = cpu
    if memory is not None:
        limits["memory"] = memory
    if extra:
        limits.update(extra)
    if limits:
        resources = {"requests": dict(limits), "limits": dict(limits)}
    container: dict[str, Any] = {
        "name": "main",
        "image": "busybox",
        "command": list(command),
        "resources": resources,
    }
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "restartPolicy": restart_policy,
            "terminationGracePeriodSeconds": grace,
            "containers": [container],
        },
    }


def write_pod(directory: Path, doc: Mapping[str, Any], name: str | None = None) -> Path:
    """Write a manifest as ``<name>.yaml`` (atomically, so a scan never sees half a file)."""
    stem = name or str(doc["metadata"]["name"])
    path = directory / f"{stem}.yaml"
    tmp = directory / f".{stem}.tmp"
    tmp.write_text(yaml.safe_dump(dict(doc)))
    os.replace(tmp, path)
    return path


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 20.0) -> T:
    """Poll ``probe`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError, KeyError):
            last = probe()
            if last:
                return last
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


def get_json(port: int, path: str) -> Any:
    """GET ``http://127.0.0.1:<port><path>`` as JSON."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
        return json.loads(answer.read())


def get_text(port: int, path: str) -> str:
    """GET as text."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
        return str(answer.read().decode())


def pod_named(pods: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    """The ``/pods`` entry of pod ``name``."""
    return next((p for p in pods if p["name"] == name), None)


def running_pid(pods: Sequence[Mapping[str, Any]], name: str) -> int | None:
    """The pid of pod ``name``'s first container once it runs."""
    pod = pod_named(pods, name)
    if pod is None or not pod["containers"]:
        return None
    container = pod["containers"][0]
    return int(container["pid"]) if container["state"] == "running" and container["pid"] else None


def cpus_allowed(pid: int) -> CPUSet:
    """``Cpus_allowed_list`` of a process."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return CPUSet.parse(line.split(":", 1)[1].strip())
    raise AssertionError(f"no Cpus_allowed_list for {pid}")


def environ(pid: int) -> dict[str, str]:
    """A process's environment."""
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def kill_quietly(pid: int) -> None:
    """SIGKILL ``pid`` and its group; a gone process is fine."""
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


@dataclass
class MemoryDriver:
    """A cgroup driver that only remembers: for tests of the agent's decisions."""

    name: str = "memory"
    pods: set[str] = field(default_factory=set)
    limits: dict[tuple[str, str], ContainerLimits] = field(default_factory=dict)
    cpus: dict[tuple[str, str], CPUSet] = field(default_factory=dict)
    attached: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    updates: list[tuple[str, str, CPUSet]] = field(default_factory=list)

    def ensure_pod(self, pod_uid: str) -> None:
        """Remember the pod."""
        self.pods.add(pod_uid)

    def ensure_container(self, pod_uid: str, container: str, limits: ContainerLimits) -> None:
        """Remember the limits."""
        self.pods.add(pod_uid)
        self.limits[(pod_uid, container)] = limits
        self.cpus[(pod_uid, container)] = limits.cpus

    def update_cpus(self, pod_uid: str, container: str, cpus: CPUSet) -> None:
        """Remember the CPUs."""
        self.cpus[(pod_uid, container)] = cpus
        self.updates.append((pod_uid, container, cpus))

    def attach(self, pod_uid: str, container: str, pid: int) -> None:
        """Remember the pid."""
        self.attached.setdefault((pod_uid, container), []).append(pid)

    def pids(self, pod_uid: str, container: str) -> list[int]:
        """Attached pids still alive."""
        return sorted(p for p in self.attached.get((pod_uid, container), []) if alive(p))

    def remove_container(self, pod_uid: str, container: str) -> None:
        """Forget the container."""
        self.limits.pop((pod_uid, container), None)
        self.cpus.pop((pod_uid, container), None)
        self.attached.pop((pod_uid, container), None)

    def remove_pod(self, pod_uid: str) -> None:
        """Forget the pod."""
        for key in [k for k in self.limits if k[0] == pod_uid]:
            self.remove_container(*key)
        self.pods.discard(pod_uid)

    def cpus_of(self, pod_uid: str, container: str) -> CPUSet | None:
        """The remembered CPUs."""
        return self.cpus.get((pod_uid, container))


def abandon(agent: Agent, popens: list[subprocess.Popen[bytes]]) -> None:
    """Leave ``agent`` as if its process had died: its processes run on, unsupervised.

    In process, the runtimes' supervising threads would outlive the "dead" agent and restart
    what the next agent stops; they are ended here without touching the processes (private
    parts of ``PodRuntime``, acceptable in a test of the agent's restart path). The processes
    are still this test's children: ``popens`` keeps them to be reaped at the end.
    """
    agent.close()
    for entry in agent.pods.values():
        runtime = entry.runtime
        if runtime is None:
            continue
        runtime._stopping.set()
        if runtime._thread is not None:
            runtime._thread.join(5)
        for container in (*runtime._init, *runtime._apps):
            if isinstance(container.proc, ChildProcess):
                popens.append(container.proc.popen)
    agent.pods.clear()
