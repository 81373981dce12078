"""(Over 400 lines: eleven kinds' schemas and columns, one small builder each.)

numaplane's own CustomResourceDefinitions for Kueue's kinds (``kueue.x-k8s.io``), which
``numaplane up`` installs as Kueue's installation installs upstream's.

Users and tools see what upstream's CRDs give them: the same names, short names, scope, served
versions (``v1beta1`` and ``v1beta2``, stored as ``v1beta2``), ``status`` subresources and
printer columns, so ``kubectl get cq,lq,workloads`` prints upstream's columns. The schemas are
written here: the top-level ``spec`` fields are typed, with upstream's enums and the defaults
the API server applies (queueing strategy, preemption and fungibility policies, stop policy,
podSet name and count, ``active``), and everything below them is kept as written
(``x-kubernetes-preserve-unknown-fields``). Upstream's CEL rules are not repeated: the
controllers read objects through :mod:`numaplane.kueue.api.parse`, which refuses what they
cannot use. The MultiKueue kinds are the exception: their specs (and the MultiKueueCluster's
condition count) carry upstream's whole validation, its CEL rules included (scenarios A7, A8).

No conversion webhook runs, so an object written as ``v1beta1`` is stored with its ``v1beta1``
field names; the parser reads both.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from numaplane.kueue.constants import GROUP

__all__ = ["CRD_API_VERSION", "KUEUE_KINDS", "KindInfo", "kueue_crd", "kueue_crds"]

CRD_API_VERSION: Final = "apiextensions.k8s.io/v1"
_VERSIONS: Final = ("v1beta1", "v1beta2")
_STORAGE: Final = "v1beta2"

Schema = dict[str, Any]


# --- schema builders ----------------------------------------------------------------------------


def _string(enum: tuple[str, ...] = (), default: str | None = None) -> Schema:
    out: Schema = {"type": "string"}
    if enum:
        out["enum"] = list(enum)
    if default is not None:
        out["default"] = default
    return out


def _integer(default: int | None = None, int32: bool = True) -> Schema:
    out: Schema = {"type": "integer", "format": "int32" if int32 else "int64"}
    if default is not None:
        out["default"] = default
    return out


def _boolean(default: bool | None = None) -> Schema:
    out: Schema = {"type": "boolean"}
    if default is not None:
        out["default"] = default
    return out


def _open() -> Schema:
    """Any object, kept as written."""
    return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _open_list() -> Schema:
    return {"type": "array", "items": _open()}


def _strings() -> Schema:
    return {"type": "array", "items": {"type": "string"}}


def _string_map() -> Schema:
    return {"type": "object", "additionalProperties": {"type": "string"}}


def _quantity(default: int | None = None) -> Schema:
    out: Schema = {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
    }
    if default is not None:
        out["default"] = default
    return out


def _object(properties: Mapping[str, Schema], default: Any = None, open_: bool = True) -> Schema:
    out: Schema = {"type": "object", "properties": dict(properties)}
    if open_:
        # Fields this schema does not type (newer upstream fields among them) are kept.
        out["x-kubernetes-preserve-unknown-fields"] = True
    if default is not None:
        out["default"] = default
    return out


def _fair_sharing() -> Schema:
    return _object({"weight": _quantity(default=1)})


_STOP_POLICY: Final = ("None", "Hold", "HoldAndDrain")


# --- the kinds' spec schemas --------------------------------------------------------------------


def _cluster_queue_spec(version: str) -> Schema:
    fungibility_borrow: tuple[str, ...] = ("MayStopSearch", "TryNextFlavor")
    fungibility_preempt: tuple[str, ...] = ("MayStopSearch", "TryNextFlavor")
    properties: dict[str, Schema] = {
        "resourceGroups": _open_list(),
        "queueingStrategy": _string(("StrictFIFO", "BestEffortFIFO"), "BestEffortFIFO"),
        "namespaceSelector": _open(),
        "admissionChecksStrategy": _open(),
        "admissionScope": _open(),
        "fairSharing": _fair_sharing(),
        "stopPolicy": _string(_STOP_POLICY, "None"),
        "preemption": _object(
            {
                "reclaimWithinCohort": _string(("Never", "LowerPriority", "Any"), "Never"),
                "withinClusterQueue": _string(
                    ("Never", "LowerPriority", "LowerOrNewerEqualPriority"), "Never"
                ),
                "borrowWithinCohort": _object(
                    {
                        "policy": _string(("Never", "LowerPriority"), "Never"),
                        "maxPriorityThreshold": _integer(),
                    },
                    default={},
                ),
            },
            default={},
        ),
    }
    if version == "v1beta1":
        properties["cohort"] = _string()
        properties["admissionChecks"] = _strings()
        # v1beta1 also took the policies' old names.
        fungibility_borrow = (*fungibility_borrow, "Borrow")
        fungibility_preempt = (*fungibility_preempt, "Preempt")
    else:
        properties["cohortName"] = _string()
        properties["concurrentAdmissionPolicy"] = _open()
    properties["flavorFungibility"] = _object(
        {
            "whenCanBorrow": _string(fungibility_borrow, "MayStopSearch"),
            "whenCanPreempt": _string(fungibility_preempt, "TryNextFlavor"),
            "preference": _string(("BorrowingOverPreemption", "PreemptionOverBorrowing")),
        },
        default={},
    )
    return _object(properties)


def _cohort_spec(version: str) -> Schema:
    del version
    return _object(
        {"parentName": _string(), "resourceGroups": _open_list(), "fairSharing": _fair_sharing()}
    )


def _local_queue_spec(version: str) -> Schema:
    del version
    return _object(
        {
            "clusterQueue": _string(),
            "stopPolicy": _string(_STOP_POLICY, "None"),
            "fairSharing": _fair_sharing(),
        }
    )


def _resource_flavor_spec(version: str) -> Schema:
    del version
    return _object(
        {
            "nodeLabels": _string_map(),
            "nodeTaints": _open_list(),
            "tolerations": _open_list(),
            "topologyName": _string(),
        }
    )


def _admission_check_spec(version: str) -> Schema:
    properties: dict[str, Schema] = {"controllerName": _string(), "parameters": _open()}
    if version == "v1beta1":
        properties["retryDelayMinutes"] = _integer(default=15, int32=False)
    return _object(properties)


def _workload_spec(version: str) -> Schema:
    pod_set = _object(
        {
            "name": _string(default="main"),
            "count": _integer(default=1),
            "minCount": _integer(),
            "template": _open(),
            "topologyRequest": _open(),
        }
    )
    properties: dict[str, Schema] = {
        "podSets": {
            "type": "array",
            "items": pod_set,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
        },
        "queueName": _string(),
        "priority": _integer(),
        "active": _boolean(default=True),
        "maximumExecutionTimeSeconds": _integer(),
    }
    if version == "v1beta1":
        properties["priorityClassName"] = _string()
        properties["priorityClassSource"] = _string(
            ("kueue.x-k8s.io/workloadpriorityclass", "scheduling.k8s.io/priorityclass", ""), ""
        )
    else:
        properties["priorityClassRef"] = _open()
        properties["preemptionGates"] = _open_list()
    return _object(properties)


# The MultiKueue kinds carry upstream's validation (sizes, enums, the default locationType and
# the CEL rules): upstream enforces it only through its CRDs, so a user of ``numaplane up`` would
# otherwise get a duplicate or oversized cluster list, or no kubeconfig source, accepted.
_LOCATION_TYPES: Final = ("Secret", "Path")
_MKC_SOURCES: Final = "[kubeConfig clusterProfileRef]"


def _bounded(min_length: int | None = None, max_length: int | None = None) -> Schema:
    out = _string()
    if min_length is not None:
        out["minLength"] = min_length
    if max_length is not None:
        out["maxLength"] = max_length
    return out


def _multikueue_config_spec(version: str) -> Schema:
    clusters: Schema = {"type": "array", "minItems": 1, "maxItems": 20}
    if version == "v1beta1":
        clusters |= {"items": _string(), "x-kubernetes-list-type": "set"}
    else:
        clusters |= {
            "items": _bounded(max_length=256),
            "x-kubernetes-list-type": "atomic",
            "x-kubernetes-validations": [
                {
                    "rule": "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0",
                    "message": "must be unique",
                }
            ],
        }
    properties: dict[str, Schema] = {"clusters": clusters}
    if version == "v1beta2":
        properties["quotaManagement"] = _string(("Manual", "Automated"))
    return {**_object(properties), "required": ["clusters"]}


def _multikueue_cluster_spec(version: str) -> Schema:
    profile = {
        **_object({"name": _bounded(1, 256)}, open_=False),
        "required": ["name"],
    }
    location_type = _string(_LOCATION_TYPES, "Secret")
    if version == "v1beta1":
        kubeconfig = {
            **_object({"location": _string(), "locationType": location_type}, open_=False),
            "required": ["location", "locationType"],
        }
        spec = _object({"kubeConfig": kubeconfig, "clusterProfileRef": profile})
        return {**spec, "required": ["kubeConfig"]}
    kubeconfig = {
        **_object({"location": _bounded(1, 256), "locationType": location_type}, open_=False),
        "required": ["location"],
    }
    source = _object({"kubeConfig": kubeconfig, "clusterProfileRef": profile}, open_=False)
    source["x-kubernetes-validations"] = [
        {
            "rule": "[has(self.kubeConfig),has(self.clusterProfileRef)]"
            ".filter(x,x==true).size() == 1",
            "message": f"exactly one of the fields in {_MKC_SOURCES} must be set",
        }
    ]
    return {**_object({"clusterSource": source}), "required": ["clusterSource"]}


def _multikueue_cluster_status(version: str) -> Schema:
    if version == "v1beta1":
        return _open()
    return _object({"conditions": {**_open_list(), "maxItems": 16}})


def _topology_spec(version: str) -> Schema:
    del version
    return _object({"levels": _open_list()})


def _provisioning_request_config_spec(version: str) -> Schema:
    del version
    retry = {"backoffBaseSeconds": 60, "backoffLimitCount": 3, "backoffMaxSeconds": 1800}
    return _object(
        {
            "provisioningClassName": _string(),
            "parameters": _string_map(),
            "managedResources": _strings(),
            "podSetMergePolicy": _string(
                ("IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements")
            ),
            "podSetUpdates": _open(),
            "retryStrategy": _object(
                {name: _integer(default=value) for name, value in retry.items()}, default=retry
            ),
        }
    )


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
        "resourceflavors", ("flavor", "flavors", "rf"), False, False, _resource_flavor_spec
    ),
    "ClusterQueue": KindInfo(
        "clusterqueues", ("cq",), False, True, _cluster_queue_spec, _cq_columns
    ),
    "Cohort": KindInfo("cohorts", ("co",), False, True, _cohort_spec),
    "LocalQueue": KindInfo(
        "localqueues", ("queue", "queues", "lq"), True, True, _local_queue_spec, _lq_columns
    ),
    "Workload": KindInfo(
        "workloads",
        ("kwl", "kueueworkload", "kueueworkloads"),
        True,
        True,
        _workload_spec,
        _workload_columns,
    ),
    "WorkloadPriorityClass": KindInfo(
        "workloadpriorityclasses", ("wpc",), False, False, None, _wpc_columns
    ),
    "AdmissionCheck": KindInfo("admissionchecks", ("ac",), False, True, _admission_check_spec),
    "MultiKueueConfig": KindInfo(
        "multikueueconfigs", ("mkconf",), False, False, _multikueue_config_spec
    ),
    "MultiKueueCluster": KindInfo(
        "multikueueclusters",
        ("mkc",),
        False,
        True,
        _multikueue_cluster_spec,
        _mkc_columns,
        _multikueue_cluster_status,
    ),
    "Topology": KindInfo("topologies", ("topo",), False, False, _topology_spec),
    "ProvisioningRequestConfig": KindInfo(
        "provisioningrequestconfigs", ("prc",), False, False, _provisioning_request_config_spec
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
        properties["value"] = _integer()
        properties["description"] = _string()
        return {
            "type": "object",
            "description": f"Kueue {kind}.",
            "properties": properties,
            "required": ["value"],
        }
    assert info.spec is not None
    properties["spec"] = info.spec(version)
    properties["status"] = _open() if info.status_schema is None else info.status_schema(version)
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
