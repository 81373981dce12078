"""What Kueue's own Python examples (``site/static/examples/python/`` upstream) do, with the
official ``kubernetes`` client against ``numaplane up`` (host node): install the queues, submit
the sample Job (``sample-job.py``: generateName ``sample-job-``, the queue-name label, one CPU
and 200Mi per pod, parallelism 1, completions 3, created suspended, the perf-tests sleep image),
then list LocalQueues and Jobs as ``sample-queue-control.py`` does, reading the same fields.

The install example applies Kueue's release manifests from GitHub (the CRDs and the controller);
``numaplane up`` has both already, so the queues of the quick start are created instead, with
the custom-objects API. The sleep is ``1s`` instead of the example's default ``30s`` (the
example takes it as ``--args``). Upstream's queue-control example reads the LocalQueue field
``flavorUsage`` through ``v1beta2``, where it is named ``flavorsUsage`` (the v1beta1 name stayed
in the example): this test reads the v1beta2 name."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config

from numaplane.testing.cluster import RunningCluster, running_cluster
from tests.agent.conftest import cgroup_unusable
from tests.apiserver.e2e.conftest import KUBECTL, Kubectl
from tests.kueue.acceptance.test_quickstart import wait_kueue_served

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow, pytest.mark.root, pytest.mark.cgroup]

WAIT_S = 300.0
PLURALS = {
    "ResourceFlavor": "resourceflavors",
    "ClusterQueue": "clusterqueues",
    "LocalQueue": "localqueues",
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCluster]:
    """``numaplane up --node host`` (Kueue included) for the module."""
    if KUBECTL is None:
        pytest.skip("kubectl not installed")
    why = cgroup_unusable()
    if why is not None:
        pytest.skip(why)
    work = tmp_path_factory.mktemp("kueue-pyclient")
    with running_cluster(work / "data", node="host", extra_args=("--node-name", "py-host")) as up:
        up.wait_nodes_ready(1)
        wait_kueue_served(Kubectl(up.kubeconfig), up)
        yield up


@pytest.fixture(scope="module")
def api(cluster: RunningCluster) -> Iterator[Any]:
    """An ApiClient from the admin kubeconfig, as ``config.load_kube_config`` builds one."""
    make: Any = config.new_client_from_config
    with make(config_file=str(cluster.kubeconfig)) as api_client:
        yield api_client


def sample_job(image: str, args: list[str]) -> Any:
    """The Job ``sample-job.py`` builds (it passes plain dicts where the models are typed)."""
    k8s: Any = client
    container = k8s.V1Container(
        image=image,
        name="dummy-job",
        args=args,
        # The example writes ``"cpu": 1``; the installed client's models (pydantic) take
        # quantities as strings only.
        resources={"requests": {"cpu": "1", "memory": "200Mi"}},
    )
    return k8s.V1Job(
        api_version="batch/v1",
        kind="Job",
        metadata=k8s.V1ObjectMeta(
            generate_name="sample-job-", labels={"kueue.x-k8s.io/queue-name": "user-queue"}
        ),
        spec=k8s.V1JobSpec(
            parallelism=1,
            completions=3,
            suspend=True,
            template={"spec": {"containers": [container], "restartPolicy": "Never"}},
        ),
    )


def test_the_python_examples(api: Any, cluster: RunningCluster, kueue_dir: Path) -> None:
    crd: Any = client.CustomObjectsApi(api)
    setup = kueue_dir / "examples" / "getting-started" / "quick-start-setup.yaml"
    for doc in yaml.safe_load_all(setup.read_text()):
        group, version = doc["apiVersion"].split("/")
        plural = PLURALS[doc["kind"]]
        namespace = doc["metadata"].get("namespace")
        if namespace:
            crd.create_namespaced_custom_object(group, version, namespace, plural, doc)
        else:
            crd.create_cluster_custom_object(group, version, plural, doc)

    batch: Any = client.BatchV1Api(api)
    image = "gcr.io/k8s-staging-perf-tests/sleep:v0.1.0"
    created = batch.create_namespaced_job("default", sample_job(image, ["1s"]))
    name = created.metadata.name
    assert name.startswith("sample-job-")
    assert created.spec.suspend is True

    deadline = time.monotonic() + WAIT_S
    while not (batch.read_namespaced_job_status(name, "default").status.succeeded or 0) >= 3:
        assert time.monotonic() < deadline, cluster.all_logs()
        time.sleep(0.5)

    # sample-queue-control.py: the LocalQueues of the namespace, then its Jobs, as dicts (the
    # LocalQueue's counts follow the workload's Finished condition shortly: read until they do).
    def local_queues() -> Any:
        return crd.list_namespaced_custom_object(
            group="kueue.x-k8s.io", version="v1beta2", namespace="default", plural="localqueues"
        )

    while (queues := local_queues())["items"][0].get("status", {}).get("admittedWorkloads") != 0:
        assert time.monotonic() < deadline, cluster.all_logs()
        time.sleep(0.5)
    assert [q["metadata"]["name"] for q in queues["items"]] == ["user-queue"]
    status = queues["items"][0]["status"]
    assert status["admittedWorkloads"] == 0
    assert status["pendingWorkloads"] == 0
    usage = {f["name"]: f["resources"] for f in status["flavorsUsage"]}
    assert set(usage) == {"default-flavor"}
    assert {r["name"]: r["total"] for r in usage["default-flavor"]} == {"cpu": "0", "memory": "0"}

    jobs = crd.list_namespaced_custom_object(
        group="batch", version="v1", namespace="default", plural="jobs"
    )
    assert [j["metadata"]["name"] for j in jobs["items"]] == [name]
    job_status = jobs["items"][0]["status"]
    assert job_status["succeeded"] == 3
    assert job_status["ready"] == 0
