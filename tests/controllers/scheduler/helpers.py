"""Builders of Node and Pod API objects for the scheduler's tests."""

from __future__ import annotations

from typing import Any

from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.testing.kubeletconfigs import static_single_numa_config
from numaplane.topology.model import Machine


def node_obj(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    """A Node with that allocatable, labels, taints."""
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
        },
    }


def pod_obj(
    name: str,
    *,
    cpu: str | None = "1",
    memory: str | None = "1Gi",
    guaranteed: bool = True,
    containers: int = 1,
    node_selector: dict[str, str] | None = None,
    affinity: dict[str, Any] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    scheduler_name: str | None = None,
    namespace: str = "default",
) -> dict[str, Any]:
    """A pod whose every container requests ``cpu`` and ``memory`` (as limits too when
    ``guaranteed``)."""
    amounts = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    resources: dict[str, Any] = {}
    if amounts:
        resources = {"requests": amounts, **({"limits": amounts} if guaranteed else {})}
    spec: dict[str, Any] = {
        "containers": [
            {"name": f"c{i}", "image": "sleep", "resources": resources} for i in range(containers)
        ]
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    if tolerations:
        spec["tolerations"] = tolerations
    if scheduler_name:
        spec["schedulerName"] = scheduler_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"},
        "spec": spec,
    }


def single_numa_config(machine: Machine, *, scope: str = "container") -> KubeletConfiguration:
    """Static CPU and memory managers, CPU 0 and 1124Mi reserved, single-numa-node."""
    return static_single_numa_config(machine, topologyManagerScope=scope)
