"""Scenarios A7 and A8 of the MultiKueue corpus (upstream's webhook INT tests
``multikueue_config_test.go`` and ``multikueue_cluster_test.go``): which MultiKueueConfigs and
MultiKueueClusters the API server accepts, with the message fragment of each refusal, and the
default ``kubeConfig.locationType: Secret``.

Upstream enforces all of it through its CRD schemas (sizes, enums, defaults, CEL rules), so each
case runs against both definitions on one ``numaplane apiserver``: numaplane's own CRDs (what
``numaplane up`` installs) and upstream's (``../shared/kueue``, the ``shared_kueue`` group)."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kube.errors import ApiError
from numaplane.kueue.crds import kueue_crds
from numaplane.testing.apiserver import RunningApiServer, running_apiserver

pytestmark = [pytest.mark.timeout(120)]

Obj = dict[str, Any]
T = TypeVar("T")
API = "kueue.x-k8s.io/v1beta2"
CRD_API = "apiextensions.k8s.io/v1"
KINDS = ("multikueueconfigs", "multikueueclusters")
LONG = "a" * 257
EXACTLY_ONE = "exactly one of the fields in [kubeConfig clusterProfileRef] must be set"
#: Each test's objects get fresh names.
_serial = itertools.count()


@dataclass(frozen=True)
class Case:
    """One create: the object's ``spec``, and the refusal's message fragment (None: accepted)."""

    name: str
    resource: str
    spec: Obj
    refused: str | None = None


def clusters(*names: str) -> Obj:
    """A MultiKueueConfig spec listing ``names``."""
    return {"clusters": list(names)}


def kubeconfig(location: str, location_type: str | None = "Secret") -> Obj:
    """A MultiKueueCluster spec with a kubeconfig source (None: no ``locationType``)."""
    source: Obj = {"location": location}
    if location_type is not None:
        source["locationType"] = location_type
    return {"clusterSource": {"kubeConfig": source}}


def profile(name: str) -> Obj:
    """A MultiKueueCluster spec with a ClusterProfile source."""
    return {"clusterSource": {"clusterProfileRef": {"name": name}}}


MKCONF, MKC = KINDS
CASES = (
    # A7: MultiKueueConfig.
    Case("A7 one cluster", MKCONF, clusters("worker1")),
    Case("A7 several clusters", MKCONF, clusters("worker1", "worker2")),
    Case("A7 twenty clusters", MKCONF, clusters(*(f"worker{i}" for i in range(20)))),
    Case("A7 a name of 256", MKCONF, clusters("a" * 256)),
    Case("A7 no clusters field", MKCONF, {}, "spec.clusters: Required value"),
    Case("A7 empty list", MKCONF, clusters(), "should have at least 1 items"),
    Case("A7 duplicates", MKCONF, clusters("c1", "c2", "c1"), "must be unique"),
    Case(
        "A7 more than twenty",
        MKCONF,
        clusters(*(f"worker{i}" for i in range(21))),
        "must have at most 20 items",
    ),
    Case("A7 a name over 256", MKCONF, clusters(LONG), "spec.clusters[0]: Too long"),
    # A8: MultiKueueCluster.
    Case("A8 Secret", MKC, kubeconfig("worker-secret")),
    Case("A8 Path", MKC, kubeconfig("/etc/kueue/worker.kubeconfig", "Path")),
    Case("A8 clusterProfileRef", MKC, profile("worker-profile")),
    Case("A8 no cluster source", MKC, {}, "spec.clusterSource: Required value"),
    Case("A8 neither source", MKC, {"clusterSource": {}}, EXACTLY_ONE),
    Case(
        "A8 both sources",
        MKC,
        {"clusterSource": {**kubeconfig("s")["clusterSource"], **profile("p")["clusterSource"]}},
        EXACTLY_ONE,
    ),
    Case("A8 empty location", MKC, kubeconfig(""), "should be at least 1 chars long"),
    Case("A8 location over 256", MKC, kubeconfig(LONG), "location: Too long"),
    Case(
        "A8 locationType not Secret or Path",
        MKC,
        kubeconfig("worker-secret", "Invalid"),
        'Unsupported value: "Invalid"',
    ),
    Case("A8 empty profile name", MKC, profile(""), "should be at least 1 chars long"),
    Case("A8 profile name over 256", MKC, profile(LONG), "clusterProfileRef.name: Too long"),
)


def crd_sets() -> list[Any]:
    """The two CRD sets; upstream's in the ``shared_kueue`` group."""
    return [
        pytest.param("ours", id="numaplane-crds"),
        pytest.param("upstream", id="upstream-crds", marks=pytest.mark.shared_kueue),
    ]


async def until(probe: Callable[[], Awaitable[T | None]], what: str) -> T:
    """Poll ``probe`` until it answers; fail after 60 s."""
    deadline = time.monotonic() + 60.0
    while (found := await probe()) is None:
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not seen in 60s")
        await asyncio.sleep(0.05)
    return found


async def install(client: KubeClient, crds: list[Obj]) -> None:
    """Create the MultiKueue CRDs of ``crds`` and wait until they are Established."""
    for crd in crds:
        if crd["spec"]["names"]["plural"] not in KINDS:
            continue
        await client.create(CRD_API, "customresourcedefinitions", crd)
        name = crd["metadata"]["name"]

        async def established(name: str = name) -> bool | None:
            got = await client.get(CRD_API, "customresourcedefinitions", name)
            for cond in (got.get("status") or {}).get("conditions") or []:
                if cond["type"] == "Established" and cond["status"] == "True":
                    return True
            return None

        await until(established, f"CRD {name} Established")


@dataclass
class Clusters:
    """One API server with a cluster per CRD set, and one event loop (with a client per
    cluster) that every test of the module runs on."""

    server: RunningApiServer
    runner: asyncio.Runner
    clients: dict[str, KubeClient] = field(default_factory=dict)

    def run(self, work: Awaitable[T]) -> T:
        """Run ``work`` on the module's loop (bounded)."""
        return self.runner.run(asyncio.wait_for(work, 90))


@pytest.fixture(scope="module")
def clusters_of_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clusters]:
    """The module's server, loop and clients."""
    data = tmp_path_factory.mktemp("multikueue-validation") / "data"
    with (
        running_apiserver(data, clusters=("ours", "upstream")) as server,
        asyncio.Runner() as runner,
    ):
        shared = Clusters(server, runner)
        try:
            yield shared
        finally:
            for client in shared.clients.values():
                runner.run(client.close())


@dataclass(frozen=True)
class Target:
    """A test's cluster: its client and the loop to run on."""

    shared: Clusters
    client: KubeClient

    def run(self, work: Callable[[KubeClient], Awaitable[T]]) -> T:
        """Run ``work`` with this cluster's client."""
        return self.shared.run(work(self.client))


@pytest.fixture(params=crd_sets())
def cluster(request: pytest.FixtureRequest, clusters_of_module: Clusters) -> Target:
    """The cluster with the parameter's CRD set installed (on first use)."""
    which: str = request.param
    shared = clusters_of_module
    if which not in shared.clients:
        if which == "ours":
            crds = kueue_crds()
        else:
            kueue_dir: Path = request.getfixturevalue("kueue_dir")
            crds = [
                yaml.safe_load(p.read_text())
                for p in (kueue_dir / "crds").glob("kueue.x-k8s.io_multikueue*.yaml")
            ]
        client = KubeClient(load_kubeconfig(shared.server.cluster_kubeconfig(which)))
        shared.clients[which] = client
        shared.run(install(client, crds))
    return Target(shared, shared.clients[which])


def body(resource: str, spec: Obj) -> Obj:
    """A new object of ``resource`` with ``spec`` and a fresh name."""
    kind = "MultiKueueConfig" if resource == MKCONF else "MultiKueueCluster"
    name = f"{kind.lower()}-{next(_serial)}"
    return {"apiVersion": API, "kind": kind, "metadata": {"name": name}, "spec": spec}


async def create(client: KubeClient, resource: str, spec: Obj) -> Obj | ApiError:
    """The created object, or the refusal."""
    try:
        return await client.create(API, resource, body(resource, spec))
    except ApiError as err:
        return err


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a7_a8_create(case: Case, cluster: Target) -> None:
    got = cluster.run(lambda client: create(client, case.resource, case.spec))
    if case.refused is None:
        assert not isinstance(got, ApiError), got.message
        assert got["spec"] == case.spec
    else:
        assert isinstance(got, ApiError), f"accepted: {got}"
        assert got.code == 422, got.message
        assert case.refused in got.message


def test_a8_location_type_defaults_to_secret(cluster: Target) -> None:
    got = cluster.run(lambda client: create(client, MKC, kubeconfig("worker-secret", None)))
    assert not isinstance(got, ApiError), got.message
    assert got["spec"] == kubeconfig("worker-secret")
    stored = cluster.run(lambda client: client.get(API, MKC, got["metadata"]["name"]))
    assert stored["spec"]["clusterSource"]["kubeConfig"]["locationType"] == "Secret"


def conditions(count: int) -> list[Obj]:
    """``count`` distinct True conditions (upstream's ``makeConditions``)."""
    return [
        {
            "type": f"Condition{i}",
            "status": "True",
            "reason": f"TestReason{i}",
            "message": "test condition",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
        for i in range(count)
    ]


@pytest.mark.parametrize(("count", "accepted"), [(16, True), (17, False)], ids=["16", "17"])
def test_a8_status_conditions_at_most_16(count: int, accepted: bool, cluster: Target) -> None:
    async def work(client: KubeClient) -> Obj | ApiError:
        created = await client.create(API, MKC, body(MKC, kubeconfig("worker-secret")))
        created["status"] = {"conditions": conditions(count)}
        try:
            return await client.update(API, MKC, created, subresource="status")
        except ApiError as err:
            return err

    got = cluster.run(work)
    if accepted:
        assert not isinstance(got, ApiError), got.message
        assert len(got["status"]["conditions"]) == count
    else:
        assert isinstance(got, ApiError), "17 conditions accepted"
        assert got.code == 422, got.message
        assert "status.conditions: Too many: 17: must have at most 16 items" in got.message
