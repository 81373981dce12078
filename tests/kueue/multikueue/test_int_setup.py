"""Scenarios A14 and G11 of the MultiKueue corpus in the INT harness (intworld): a
MultiKueueCluster naming a ClusterProfile while its feature gate is off, and the manager quota
automation (feature gate ``MultiKueueManagerQuotaAutomation``) summing the workers' quotas."""

from __future__ import annotations

from typing import Any

import pytest

from numaplane.kube.errors import ApiError
from numaplane.testing import multikueue_int as mk
from numaplane.testing.apiserver import open_crd
from numaplane.testing.multikueue_int import Clusters
from tests.kueue.multikueue.intworld import Knobs, World, run, world

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

Obj = dict[str, Any]
CONDITION = "MultiKueueManagerQuotaAutomation"
GATE = "MultiKueueManagerQuotaAutomation"
AUTOMATED = (
    "True",
    "QuotaAutomated",
    "ClusterQueue quota is automatically managed based on MultiKueue workers.",
)
NOT_REQUESTED = (
    "False",
    "NotRequested",
    "MultiKueue manager quota automation has not been requested.",
)
MISSING_MEMORY = (
    "False",
    "UnsupportedConfiguration",
    "manager-side coveredResources is missing resources configured on workers: [memory]",
)
ONE_FLAVOR = (
    "False",
    "UnsupportedConfiguration",
    "Quota automation requires that the manager-side ClusterQueue has exactly one ResourceFlavor",
)
QUEUE_REF: Obj = {"apiVersion": mk.API, "kind": "ClusterQueue", "metadata": {"name": mk.QUEUE}}


def test_a14_cluster_profile_gate_off(int_clusters: Clusters) -> None:
    """A14: a MultiKueueCluster with ``clusterProfileRef`` while the ClusterProfile gate is off
    is ``Active=False MultiKueueClusterProfileFeatureDisabled``, its message naming the gate."""

    async def scenario() -> None:
        async with world(int_clusters) as w:
            cluster = {
                "apiVersion": mk.API,
                "kind": "MultiKueueCluster",
                "metadata": {"name": "worker3"},
                "spec": {"clusterSource": {"clusterProfileRef": {"name": "profile3"}}},
            }
            w.cluster_names.add("worker3")
            await w.create("manager", cluster)
            await w.until_cluster("worker3", "False", "MultiKueueClusterProfileFeatureDisabled")
            disabled: tuple[str, str, str] | None = (
                "False",
                "MultiKueueClusterProfileFeatureDisabled",
                "load client config failed: MultiKueueClusterProfile feature gate is disabled",
            )
            assert await w.cluster_active("worker3") == disabled
            # Creating the profile changes nothing while the gate is off.
            await create_cluster_profile(w, "profile3")
            await mk.consistently(
                lambda: w.cluster_active("worker3"), disabled, 0.5, "worker3 Active"
            )
            # The other clusters are untouched.
            assert await w.cluster_active("worker1") == ("True", "Active", "Connected")

    run(scenario)


async def create_cluster_profile(w: World, name: str) -> None:
    """ClusterProfile ``name`` in Kueue's namespace, its CRD (multicluster.x-k8s.io, schema
    left open) installed first as upstream's suite does."""
    client = w.manager.client
    crd = open_crd(
        "multicluster.x-k8s.io", "v1alpha1", "clusterprofiles", "ClusterProfile", "Namespaced"
    )
    await client.create("apiextensions.k8s.io/v1", "customresourcedefinitions", crd)
    profile = {
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": name, "namespace": mk.KUEUE_NAMESPACE},
        "spec": {"clusterManager": {"name": "test"}},
    }

    async def created() -> bool:
        try:
            await client.create(
                "multicluster.x-k8s.io/v1alpha1", "clusterprofiles", profile, mk.KUEUE_NAMESPACE
            )
        except ApiError as err:
            if err.is_not_found:
                return False  # the CRD is not served yet
            raise
        return True

    await w.until(created, f"ClusterProfile {name} created")


async def manager_quota(w: World) -> tuple[str, tuple[str, str, str] | None]:
    """The manager ClusterQueue's cpu nominal quota and its automation condition."""
    found = await w.get("manager", QUEUE_REF)
    assert found is not None
    resources = found["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    cpu = next((r["nominalQuota"] for r in resources if r["name"] == "cpu"), None)
    return str(cpu), mk.condition(found, CONDITION)


async def until_quota(w: World, cpu: str, condition: tuple[str, str, str]) -> None:
    """Wait until the manager ClusterQueue has ``cpu`` and ``condition``."""

    async def probe() -> bool:
        return await manager_quota(w) == (cpu, condition)

    await w.until(probe, f"manager ClusterQueue cpu {cpu} with {condition[1]}")


async def set_quota_management(w: World, value: str) -> None:
    """The manager's MultiKueueConfig ``quotaManagement``."""

    def edit(obj: Obj) -> None:
        obj["spec"]["quotaManagement"] = value

    await w.change("manager", mk.multikueue_config(mk.CONFIG, []), edit)


def test_g11_manager_quota_automation(int_clusters: Clusters) -> None:
    """G11: with the gate on and ``quotaManagement: Automated`` the manager ClusterQueue's
    cpu is the sum of the workers' (10 + 10), follows a worker's ClusterQueue (5 → 15) and a
    worker's LocalQueue deletion (→ 10); Manual says NotRequested; a resource only the workers
    cover, or a second manager flavor, is UnsupportedConfiguration."""
    knobs = Knobs(feature_gates=((GATE, True),))

    async def scenario() -> None:
        async with world(int_clusters, knobs, worker_cpu="10") as w:
            await until_quota(w, "5", NOT_REQUESTED)
            await set_quota_management(w, "Automated")
            await until_quota(w, "20", AUTOMATED)

            def cpu_five(cq: Obj) -> None:
                cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "5"

            await w.change("worker1", QUEUE_REF, cpu_five)
            await until_quota(w, "15", AUTOMATED)
            await w.delete("worker1", _lq_ref(w))
            await until_quota(w, "10", AUTOMATED)

            def add_memory(cq: Obj) -> None:
                group = cq["spec"]["resourceGroups"][0]
                group["coveredResources"].append("memory")
                group["flavors"][0]["resources"].append({"name": "memory", "nominalQuota": "1Gi"})

            await w.change("worker2", QUEUE_REF, add_memory)
            await until_quota(w, "10", MISSING_MEMORY)

            def second_flavor(cq: Obj) -> None:
                group = cq["spec"]["resourceGroups"][0]
                group["coveredResources"].append("memory")
                group["flavors"][0]["resources"].append({"name": "memory", "nominalQuota": "0"})
                rows = [{"name": r, "nominalQuota": "0"} for r in group["coveredResources"]]
                group["flavors"].append({"name": "other", "resources": rows})

            await w.change("manager", QUEUE_REF, second_flavor)
            await until_quota(w, "10", ONE_FLAVOR)
            await set_quota_management(w, "Manual")
            await until_quota(w, "10", NOT_REQUESTED)

    run(scenario)


def test_g11_gate_off_watches_no_worker_queues(int_clusters: Clusters) -> None:
    """G11: with the gate off (the default) an Automated config changes nothing, and the
    workers' LocalQueues and ClusterQueues are not watched at all."""

    async def scenario() -> None:
        async with world(int_clusters) as w:
            assert w.manager.multikueue is not None
            assert w.manager.multikueue.quota is None
            for name in mk.WORKERS:
                await w.until_cluster(name, "True", "Active")
                remote = w.manager.multikueue.remotes.get(name)
                assert remote is not None
                assert (remote.local_queues, remote.cluster_queues) == (None, None)
            await set_quota_management(w, "Automated")
            unchanged: tuple[str, tuple[str, str, str] | None] = ("5", None)
            await mk.consistently(lambda: manager_quota(w), unchanged, 1.0, "manager quota")

    run(scenario)


def _lq_ref(w: World) -> Obj:
    return {
        "apiVersion": mk.API,
        "kind": "LocalQueue",
        "metadata": {"name": mk.QUEUE, "namespace": w.namespace},
    }
