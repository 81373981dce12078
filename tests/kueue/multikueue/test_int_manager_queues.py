"""Scenario A17 of the MultiKueue corpus (SPEC §1.2, upstream ``clusterqueue.go``
``updateQueueStatus``): ClusterQueue shapes a MultiKueue manager cannot use are inactive, with
their reason and message, and reserve no quota; a MultiKueue check restricted to every flavor of
its queue is fine.

Against a real ``numaplane apiserver`` with the manager's Kueue running, its scheduler on. No
MultiKueue and no ProvisioningRequest controller run: the test marks the AdmissionChecks
``Active`` itself, as upstream's integration tests do (``util.SetAdmissionCheckActive``), so
that what keeps each queue inactive is its shape alone."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kueue.runtime.install import install_kueue_crds
from numaplane.kueue.runtime.runtime import KueueRuntime
from numaplane.testing import kueue_objects as objects
from numaplane.testing import multikueue_int as mk
from numaplane.testing.apiserver import running_apiserver

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

Obj = dict[str, Any]
API = objects.API
NAMESPACE = "ns-a17"
PROVISIONING = "kueue.x-k8s.io/provisioning-request"
TWO_FLAVORS = {"default": {"cpu": "5"}, "other": {"cpu": "5"}}
CANT = "Can't admit new workloads: "


@dataclass(frozen=True)
class Shape:
    """A manager ClusterQueue: its flavors and checks (name → onFlavors, empty: all), and the
    ``Active`` condition it must get."""

    name: str
    queue: str
    quotas: dict[str, dict[str, str]]
    checks: dict[str, tuple[str, ...]]
    active: tuple[str, str, str]


SHAPES = (
    Shape(
        "two MultiKueue checks",
        "two-mk",
        {"default": {"cpu": "5"}},
        {"mk1": (), "mk2": ()},
        (
            "False",
            "MultipleMultiKueueAdmissionChecks",
            CANT + "Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, "
            "found: mk1,mk2.",
        ),
    ),
    Shape(
        "MultiKueue check on a strict subset of the flavors",
        "per-flavor",
        TWO_FLAVORS,
        {"mk1": ("default",)},
        (
            "False",
            "MultiKueueAdmissionCheckAppliedPerFlavor",
            CANT + "Cannot specify MultiKueue AdmissionCheck per flavor, found: mk1.",
        ),
    ),
    Shape(
        "MultiKueue and ProvisioningRequest checks",
        "mk-prov",
        {"default": {"cpu": "5"}},
        {"mk1": (), "prov": ()},
        (
            "False",
            "MultiKueueWithProvisioningRequest",
            CANT + "Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks "
            "together, found: mk1, prov.",
        ),
    ),
    Shape(
        "MultiKueue check listing every flavor",
        "all-flavors",
        TWO_FLAVORS,
        {"mk1": ("other", "default")},
        ("True", "Ready", "Can admit new workloads"),
    ),
)


def cluster_queue(shape: Shape) -> Obj:
    """The shape's ClusterQueue, its checks in ``admissionChecksStrategy``."""
    rules = []
    for name, on_flavors in shape.checks.items():
        rule: Obj = {"name": name}
        if on_flavors:
            rule["onFlavors"] = list(on_flavors)
        rules.append(rule)
    strategy = {"admissionChecks": rules}
    return objects.cluster_queue(shape.queue, shape.quotas, admissionChecksStrategy=strategy)


def check(name: str, controller: str) -> Obj:
    """An AdmissionCheck of ``controller``."""
    spec: Obj = {"controllerName": controller}
    if controller == mk.MULTIKUEUE_CONTROLLER:
        spec["parameters"] = {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "c"}
    return {"apiVersion": API, "kind": "AdmissionCheck", "metadata": {"name": name}, "spec": spec}


async def create_active_check(client: KubeClient, name: str, controller: str) -> None:
    """Create the check and mark it Active (its controller's work)."""
    created = await client.create(API, "admissionchecks", check(name, controller))
    created["status"] = {
        "conditions": [
            {
                "type": "Active",
                "status": "True",
                "reason": "Active",
                "message": "The admission check is active",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
    }
    await client.update(API, "admissionchecks", created, subresource="status")


async def setup(client: KubeClient, shapes: Sequence[Shape]) -> None:
    """The manager's objects: flavors, the Active checks, each shape's queues."""
    await install_kueue_crds(client)
    await client.create("v1", "namespaces", objects.namespace(NAMESPACE))
    for flavor in ("default", "other"):
        await client.create(API, "resourceflavors", objects.resource_flavor(flavor))
    for name, controller in (
        ("mk1", mk.MULTIKUEUE_CONTROLLER),
        ("mk2", mk.MULTIKUEUE_CONTROLLER),
        ("prov", PROVISIONING),
    ):
        await create_active_check(client, name, controller)
    for shape in shapes:
        await client.create(API, "clusterqueues", cluster_queue(shape))
        lq = objects.local_queue(NAMESPACE, shape.queue, shape.queue)
        await client.create(API, "localqueues", lq, NAMESPACE)


async def condition(client: KubeClient, resource: str, name: str, kind: str) -> Any:
    """``(status, reason, message)`` of condition ``kind`` of the object (None: none)."""
    namespace = NAMESPACE if resource == "workloads" else None
    return mk.condition(await client.get(API, resource, name, namespace), kind)


def test_a17_invalid_manager_cluster_queues_are_inactive_and_reserve_nothing(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        with running_apiserver(tmp_path / "data", clusters=("manager",)) as server:
            path = server.cluster_kubeconfig("manager")
            async with KubeClient(load_kubeconfig(path)) as client:
                await setup(client, SHAPES)
                runtime = KueueRuntime(client, status_batch_period=0.25)
                task = asyncio.ensure_future(runtime.run())
                try:
                    await check_shapes(client)
                finally:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
            await asyncio.sleep(0.25)  # TLS shutdown of the closed connections

    asyncio.run(asyncio.wait_for(scenario(), 100))


async def check_shapes(client: KubeClient) -> None:
    """Each queue's Active condition; a Workload in each: reserved only in the active one."""
    for shape in SHAPES:

        async def active(shape: Shape = shape) -> bool:
            got = await condition(client, "clusterqueues", shape.queue, "Active")
            return bool(got == shape.active)

        await mk.wait_for(active, what=f"{shape.name}: Active {shape.active}")
    for shape in SHAPES:
        wl = objects.workload(NAMESPACE, f"wl-{shape.queue}", shape.queue, {"cpu": "1"})
        await client.create(API, "workloads", wl, NAMESPACE)
    for shape in SHAPES:
        name = f"wl-{shape.queue}"

        async def settled(shape: Shape = shape, name: str = name) -> Any:
            got = await condition(client, "workloads", name, "QuotaReserved")
            if shape.active[0] == "True":
                return got is not None and got[0] == "True"
            inactive = f"ClusterQueue {shape.queue} is inactive"
            return got is not None and got[0] == "False" and got[2] == inactive

        await mk.wait_for(settled, what=f"{shape.name}: the workload's QuotaReserved")
    # Once the active queue counts its workload, the inactive ones still reserve nothing.
    active_queue = next(s.queue for s in SHAPES if s.active[0] == "True")

    async def counted() -> bool:
        cq = await client.get(API, "clusterqueues", active_queue)
        return bool((cq.get("status") or {}).get("reservingWorkloads") == 1)

    await mk.wait_for(counted, what=f"{active_queue} reserving its workload")
    for shape in SHAPES:
        if shape.queue == active_queue:
            continue
        reserved = await condition(client, "workloads", f"wl-{shape.queue}", "QuotaReserved")
        assert reserved[0] == "False", shape.name
        cq = await client.get(API, "clusterqueues", shape.queue)
        assert (cq.get("status") or {}).get("reservingWorkloads", 0) == 0, shape.name
