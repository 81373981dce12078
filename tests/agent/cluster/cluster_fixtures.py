"""Helpers of the cluster agent tests: an in-process agent (synthetic machine, in-memory cgroup
driver) joined to a real ``numaplane apiserver`` through ``ApiPodSource`` and ``ClusterSide``,
and a blocking API client for the test's own reads and writes."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from numaplane.agent.agent import Agent, AgentOptions
from numaplane.agent.cluster.podsource import ApiPodSource
from numaplane.agent.cluster.sync import ClusterSide
from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.kube.client import KubeClient
from numaplane.kube.config import KubeConfig, load_kubeconfig
from numaplane.kube.errors import ApiError
from numaplane.topology.discover import load_machine
from tests.agent.agent_fixtures import SMALL_MACHINE, MemoryDriver, kubelet_config

T = TypeVar("T")

NODE = "node-a"


class Api:
    """Blocking calls to the API server, on one client and event loop (``close`` them)."""

    def __init__(self, config: KubeConfig) -> None:
        self.config = config
        self._runner = asyncio.Runner()
        self._client = KubeClient(config)

    def call(self, use: Callable[[KubeClient], Awaitable[T]]) -> T:
        async def run() -> T:
            return await use(self._client)

        return self._runner.run(run())

    def close(self) -> None:
        self._runner.run(self._client.close())
        # TLS transports finish closing on the loop's next turns.
        self._runner.run(asyncio.sleep(0.1))
        self._runner.close()

    def create_pod(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        return self.call(lambda c: c.create("v1", "pods", dict(doc), "default"))

    def pod(self, name: str) -> dict[str, Any] | None:
        async def get(client: KubeClient) -> dict[str, Any] | None:
            try:
                return await client.get("v1", "pods", name, "default")
            except ApiError as err:
                if err.is_not_found:
                    return None
                raise

        return self.call(get)

    def delete_pod(self, name: str, grace: int | None = None) -> None:
        self.call(lambda c: c.delete("v1", "pods", name, "default", grace_period_seconds=grace))


@dataclass
class Joined:
    """An agent joined to a cluster: stop with ``close``."""

    agent: Agent
    side: ClusterSide
    api: Api
    stop: threading.Event = field(default_factory=threading.Event)
    loop: threading.Thread | None = None

    def close(self, *, stop_pods: bool = True) -> None:
        self.stop.set()
        self.agent.wake()
        if self.loop is not None:
            self.loop.join(30)
        self.side.stop()
        self.api.close()
        if stop_pods:
            self.agent.stop_all_pods()
        self.agent.close()


def bound_pod(
    name: str,
    command: Sequence[str] | None = ("sleep", "600"),
    *,
    cpu: str | None = None,
    image: str = "busybox",
    restart_policy: str = "Always",
    grace: int = 1,
    env: Sequence[Mapping[str, Any]] = (),
    annotations: Mapping[str, str] | None = None,
    node: str = NODE,
) -> dict[str, Any]:
    """A one-container pod bound to ``node``; ``cpu``: Guaranteed with 64Mi."""
    container: dict[str, Any] = {"name": "main", "image": image}
    if command is not None:
        container["command"] = list(command)
    if cpu is not None:
        limits = {"cpu": cpu, "memory": "64Mi"}
        container["resources"] = {"requests": dict(limits), "limits": dict(limits)}
    if env:
        container["env"] = [dict(e) for e in env]
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "nodeName": node,
            "restartPolicy": restart_policy,
            "terminationGracePeriodSeconds": grace,
            "containers": [container],
        },
    }


def join(
    kubeconfig: Path,
    state: Path,
    *,
    config: KubeletConfiguration | None = None,
    driver: MemoryDriver | None = None,
) -> Joined:
    """Start an agent for node ``NODE`` with its cluster side."""
    source = ApiPodSource(NODE)
    options = AgentOptions(
        machine=load_machine(SMALL_MACHINE),
        config=config or kubelet_config(),
        manifest_dir=None,
        state_dir=state,
        poll_interval=0.05,
        device_plugins=False,
    )
    agent = Agent(options, driver=driver or MemoryDriver(), sources=[source])
    agent.start()
    kube = load_kubeconfig(kubeconfig)
    side = ClusterSide(agent, source, kube)
    side.start()
    joined = Joined(agent, side, Api(kube))
    joined.loop = threading.Thread(target=agent.run, args=(joined.stop,), daemon=True)
    joined.loop.start()
    return joined
