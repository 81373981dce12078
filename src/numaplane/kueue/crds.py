"""numaplane's own CustomResourceDefinitions for Kueue's kinds (``kueue.x-k8s.io``), which
``numaplane up`` installs as Kueue's installation installs upstream's.

Users and tools see what upstream's CRDs give them: the same names, short names, scope, served
versions (``v1beta1`` and ``v1beta2``, stored as ``v1beta2``), ``status`` subresources and
printer columns, so ``kubectl get cq,lq,workloads`` prints upstream's columns. The kinds'
schemas are :mod:`numaplane.kueue.crdschemas`.

No conversion webhook runs, so an object written as ``v1beta1`` is stored with its ``v1beta1``
field names; the parser reads both.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from numaplane.kueue.constants import GROUP
from numaplane.kueue.crdschemas import (
    Schema,
    admission_check_spec,
    cluster_queue_spec,
    cohort_spec,
    integer,
    local_queue_spec,
    multikueue_cluster_spec,
    multikueue_cluster_status,
    multikueue_config_spec,
    open_object,
    provisioning_request_config_spec,
    resource_flavor_spec,
    string,
    topology_spec,
    workload_spec,
)

__all__ = ["CRD_API_VERSION", "KUEUE_KINDS", "KindInfo", "kueue_crd", "kueue_crds"]

CRD_API_VERSION: Final = "apiextensions.k8s.io/v1"
_VERSIONS: Final = ("v1beta1", "v1beta2")
_STORAGE: Final = "v1beta2"


# --- the kinds ----------------------------------------------------------------------------------


_AGE: Final = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}


def _cq_columns(version: str) -> list[Schema]:
    cohort = ".spec.cohort" if version == "v1beta1" else ".spec.cohortName"
    return [
        {"name": "Cohort", "type": "string", "jsonPath": cohort,
         "description": "The cohort the ClusterQueue belongs to."},
        {"name": "Strategy", "type": "string", "jsonPath": ".spec.queueingStrategy",
         "description": "The queueing strategy.", "priority": 1},
        {"name": "Pending Workloads", "type": "integer", "jsonPath": ".status.pendingWorkloads",
         "description": "Workloads waiting for quota."},
        {"name": "Admitted Workloads", "type": "integer",
         "jsonPath": ".status.admittedWorkloads",
         "description": "Workloads admitted and not finished.", "priority": 1},
    ]  # fmt: skip


def _lq_columns(version: str) -> list[Schema]:
    del version
    return [
        {"name": "ClusterQueue", "type": "string", "jsonPath": ".spec.clusterQueue",
         "description": "The ClusterQueue the LocalQueue sends its workloads to."},
        {"name": "Pending Workloads", "type": "integer", "jsonPath": ".status.pendingWorkloads",
         "description": "Workloads waiting for quota."},
        {"name": "Admitted Workloads", "type": "integer",
         "jsonPath": ".status.admittedWorkloads",
         "description": "Workloads admitted and not finished."},
    ]  # fmt: skip


def _workload_columns(version: str) -> list[Schema]:
    del version
    return [
        {"name": "Queue", "type": "string", "jsonPath": ".spec.queueName",
         "description": "The LocalQueue of the workload."},
        {"name": "Reserved in", "type": "string", "jsonPath": ".status.admission.clusterQueue",
         "description": "The ClusterQueue that reserved quota for it."},
        {"name": "Admitted", "type": "string",
         "jsonPath": ".status.conditions[?(@.type=='Admitted')].status",
         "description": "Whether it is admitted."},
        {"name": "Finished", "type": "string",
         "jsonPath": ".status.conditions[?(@.type=='Finished')].status",
         "description": "Whether it has finished."},
        dict(_AGE),
    ]  # fmt: skip


def _wpc_columns(version: str) -> list[Schema]:
    del version
    return [
        {"name": "Value", "type": "integer", "jsonPath": ".value",
         "description": "The priority of workloads of this class."}
    ]  # fmt: skip


def _mkc_columns(version: str) -> list[Schema]:
    del version
    return [
        {"name": "Connected", "type": "string",
         "jsonPath": ".status.conditions[?(@.type=='Active')].status",
         "description": "Whether the worker cluster is connected."},
        dict(_AGE),
    ]  # fmt: skip


@dataclass(frozen=True, slots=True)
class KindInfo:
    """What a Kueue kind's CRD is made of."""

    plural: str
    short_names: tuple[str, ...]
    namespaced: bool
    status: bool
    spec: Callable[[str], Schema] | None
    columns: Callable[[str], list[Schema]] | None = None
    #: The ``status`` schema by version (None: any object).
    status_schema: Callable[[str], Schema] | None = None


#: Every Kueue kind numaplane defines, by kind.
KUEUE_KINDS: Final[Mapping[str, KindInfo]] = {
    "ResourceFlavor": KindInfo(
        "resourceflavors", ("flavor", "flavors", "rf"), False, False, resource_flavor_spec
    ),
    "ClusterQueue": KindInfo(
        "clusterqueues", ("cq",), False, True, cluster_queue_spec, _cq_columns
    ),
    "Cohort": KindInfo("cohorts", ("co",), False, True, cohort_spec),
    "LocalQueue": KindInfo(
        "localqueues", ("queue", "queues", "lq"), True, True, local_queue_spec, _lq_columns
    ),
    "Workload": KindInfo(
        "workloads",
        ("kwl", "kueueworkload", "kueueworkloads"),
        True,
        True,
        workload_spec,
        _workload_columns,
    ),
    "WorkloadPriorityClass": KindInfo(
        "workloadpriorityclasses", ("wpc",), False, False, None, _wpc_columns
    ),
    "AdmissionCheck": KindInfo("admissionchecks", ("ac",), False, True, admission_check_spec),
    "MultiKueueConfig": KindInfo(
        "multikueueconfigs", ("mkconf",), False, False, multikueue_config_spec
    ),
    "MultiKueueCluster": KindInfo(
        "multikueueclusters",
        ("mkc",),
        False,
        True,
        multikueue_cluster_spec,
        _mkc_columns,
        multikueue_cluster_status,
    ),
    "Topology": KindInfo("topologies", ("topo",), False, False, topology_spec),
    "ProvisioningRequestConfig": KindInfo(
        "provisioningrequestconfigs", ("prc",), False, False, provisioning_request_config_spec
    ),
}


def _root_schema(kind: str, version: str, info: KindInfo) -> Schema:
    properties: dict[str, Schema] = {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
    }
    if kind == "WorkloadPriorityClass":
        # Like PriorityClass, its fields are top-level.
        properties["value"] = integer()
        properties["description"] = string()
        return {
            "type": "object",
            "description": f"Kueue {kind}.",
            "properties": properties,
            "required": ["value"],
        }
    assert info.spec is not None
    properties["spec"] = info.spec(version)
    properties["status"] = (
        open_object() if info.status_schema is None else info.status_schema(version)
    )
    return {"type": "object", "description": f"Kueue {kind}.", "properties": properties}


def kueue_crd(kind: str) -> dict[str, Any]:
    """The CRD (``apiextensions.k8s.io/v1``) of Kueue kind ``kind``."""
    info = KUEUE_KINDS[kind]
    versions: list[dict[str, Any]] = []
    for version in _VERSIONS:
        entry: dict[str, Any] = {
            "name": version,
            "served": True,
            "storage": version == _STORAGE,
            "schema": {"openAPIV3Schema": _root_schema(kind, version, info)},
        }
        if info.status:
            entry["subresources"] = {"status": {}}
        if info.columns is not None:
            entry["additionalPrinterColumns"] = info.columns(version)
        versions.append(entry)
    return {
        "apiVersion": CRD_API_VERSION,
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{info.plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": info.plural,
                "singular": kind.lower(),
                "shortNames": list(info.short_names),
            },
            "scope": "Namespaced" if info.namespaced else "Cluster",
            "versions": versions,
        },
    }


def kueue_crds() -> list[dict[str, Any]]:
    """Every Kueue CRD numaplane installs (fresh copies: callers may change them)."""
    return [copy.deepcopy(kueue_crd(kind)) for kind in KUEUE_KINDS]
