"""The objects of the MultiKueue fault tests: the queues on every cluster, the manager's
MultiKueue objects and the Jobs."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

NS = "default"
API = "kueue.x-k8s.io/v1beta2"
CHECK = "mk-faults"
JOB_SECONDS = "1s"
#: A quarter CPU: a 12-CPU simulated node and a 12-CPU worker quota run 48 at once.
JOB_CPU = "250m"


def flavor() -> Obj:
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}}


def cluster_queue(cpus: int, checks: list[str]) -> Obj:
    spec: Obj = {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory"],
                "flavors": [
                    {
                        "name": "default-flavor",
                        "resources": [
                            {"name": "cpu", "nominalQuota": cpus},
                            {"name": "memory", "nominalQuota": "1000Gi"},
                        ],
                    }
                ],
            }
        ],
    }
    if checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": n} for n in checks]}
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": spec}


def local_queue() -> Obj:
    return {
        "apiVersion": API,
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": NS},
        "spec": {"clusterQueue": "cq"},
    }


def job(name: str) -> Obj:
    """A one-pod batch Job on the manager's queue that runs ``JOB_SECONDS`` on a simulated
    node."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
        },
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "backoffLimit": 0,
            "template": {
                "metadata": {"annotations": {"numaplane.io/simulated-duration": JOB_SECONDS}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": JOB_CPU, "memory": "64Mi"}},
                        }
                    ],
                },
            },
        },
    }
