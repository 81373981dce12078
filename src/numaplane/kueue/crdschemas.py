"""The OpenAPI schemas of Kueue's kinds for numaplane's own CRDs (:mod:`numaplane.kueue.crds`
assembles the CRDs around them): the top-level ``spec`` fields typed, with upstream's enums and
the defaults the API server applies (queueing strategy, preemption and fungibility policies,
stop policy, podSet name and count, ``active``), everything below them kept as written
(``x-kubernetes-preserve-unknown-fields``). Upstream's CEL rules are not repeated — the
controllers read objects through :mod:`numaplane.kueue.api.parse`, which refuses what they
cannot use — except for the MultiKueue kinds, whose specs (and the MultiKueueCluster's condition
count) carry upstream's whole validation, its CEL rules included (scenarios A7, A8).

Each builder takes the served version (``v1beta1`` or ``v1beta2``): the two name some fields
differently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

Schema = dict[str, Any]


# --- schema builders ----------------------------------------------------------------------------


def string(enum: tuple[str, ...] = (), default: str | None = None) -> Schema:
    """A string, with its ``enum`` and ``default`` when given."""
    out: Schema = {"type": "string"}
    if enum:
        out["enum"] = list(enum)
    if default is not None:
        out["default"] = default
    return out


def integer(default: int | None = None, int32: bool = True) -> Schema:
    """An integer (int32 unless ``int32`` is False), with its ``default`` when given."""
    out: Schema = {"type": "integer", "format": "int32" if int32 else "int64"}
    if default is not None:
        out["default"] = default
    return out


def _boolean(default: bool | None = None) -> Schema:
    out: Schema = {"type": "boolean"}
    if default is not None:
        out["default"] = default
    return out


def open_object() -> Schema:
    """Any object, kept as written."""
    return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _open_list() -> Schema:
    return {"type": "array", "items": open_object()}


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


def cluster_queue_spec(version: str) -> Schema:
    """The ClusterQueue ``spec`` schema of ``version``."""
    fungibility_borrow: tuple[str, ...] = ("MayStopSearch", "TryNextFlavor")
    fungibility_preempt: tuple[str, ...] = ("MayStopSearch", "TryNextFlavor")
    properties: dict[str, Schema] = {
        "resourceGroups": _open_list(),
        "queueingStrategy": string(("StrictFIFO", "BestEffortFIFO"), "BestEffortFIFO"),
        "namespaceSelector": open_object(),
        "admissionChecksStrategy": open_object(),
        "admissionScope": open_object(),
        "fairSharing": _fair_sharing(),
        "stopPolicy": string(_STOP_POLICY, "None"),
        "preemption": _object(
            {
                "reclaimWithinCohort": string(("Never", "LowerPriority", "Any"), "Never"),
                "withinClusterQueue": string(
                    ("Never", "LowerPriority", "LowerOrNewerEqualPriority"), "Never"
                ),
                "borrowWithinCohort": _object(
                    {
                        "policy": string(("Never", "LowerPriority"), "Never"),
                        "maxPriorityThreshold": integer(),
                    },
                    default={},
                ),
            },
            default={},
        ),
    }
    if version == "v1beta1":
        properties["cohort"] = string()
        properties["admissionChecks"] = _strings()
        # v1beta1 also took the policies' old names.
        fungibility_borrow = (*fungibility_borrow, "Borrow")
        fungibility_preempt = (*fungibility_preempt, "Preempt")
    else:
        properties["cohortName"] = string()
        properties["concurrentAdmissionPolicy"] = open_object()
    properties["flavorFungibility"] = _object(
        {
            "whenCanBorrow": string(fungibility_borrow, "MayStopSearch"),
            "whenCanPreempt": string(fungibility_preempt, "TryNextFlavor"),
            "preference": string(("BorrowingOverPreemption", "PreemptionOverBorrowing")),
        },
        default={},
    )
    return _object(properties)


def cohort_spec(version: str) -> Schema:
    """The Cohort ``spec`` schema of ``version``."""
    del version
    return _object(
        {"parentName": string(), "resourceGroups": _open_list(), "fairSharing": _fair_sharing()}
    )


def local_queue_spec(version: str) -> Schema:
    """The LocalQueue ``spec`` schema of ``version``."""
    del version
    return _object(
        {
            "clusterQueue": string(),
            "stopPolicy": string(_STOP_POLICY, "None"),
            "fairSharing": _fair_sharing(),
        }
    )


def resource_flavor_spec(version: str) -> Schema:
    """The ResourceFlavor ``spec`` schema of ``version``."""
    del version
    return _object(
        {
            "nodeLabels": _string_map(),
            "nodeTaints": _open_list(),
            "tolerations": _open_list(),
            "topologyName": string(),
        }
    )


def admission_check_spec(version: str) -> Schema:
    """The AdmissionCheck ``spec`` schema of ``version``."""
    properties: dict[str, Schema] = {"controllerName": string(), "parameters": open_object()}
    if version == "v1beta1":
        properties["retryDelayMinutes"] = integer(default=15, int32=False)
    return _object(properties)


def workload_spec(version: str) -> Schema:
    """The Workload ``spec`` schema of ``version``."""
    pod_set = _object(
        {
            "name": string(default="main"),
            "count": integer(default=1),
            "minCount": integer(),
            "template": open_object(),
            "topologyRequest": open_object(),
        }
    )
    properties: dict[str, Schema] = {
        "podSets": {
            "type": "array",
            "items": pod_set,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
        },
        "queueName": string(),
        "priority": integer(),
        "active": _boolean(default=True),
        "maximumExecutionTimeSeconds": integer(),
    }
    if version == "v1beta1":
        properties["priorityClassName"] = string()
        properties["priorityClassSource"] = string(
            ("kueue.x-k8s.io/workloadpriorityclass", "scheduling.k8s.io/priorityclass", ""), ""
        )
    else:
        properties["priorityClassRef"] = open_object()
        properties["preemptionGates"] = _open_list()
    return _object(properties)


# The MultiKueue kinds carry upstream's validation (sizes, enums, the default locationType and
# the CEL rules): upstream enforces it only through its CRDs, so a user of ``numaplane up`` would
# otherwise get a duplicate or oversized cluster list, or no kubeconfig source, accepted.
_LOCATION_TYPES: Final = ("Secret", "Path")
_MKC_SOURCES: Final = "[kubeConfig clusterProfileRef]"


def _bounded(min_length: int | None = None, max_length: int | None = None) -> Schema:
    out = string()
    if min_length is not None:
        out["minLength"] = min_length
    if max_length is not None:
        out["maxLength"] = max_length
    return out


def multikueue_config_spec(version: str) -> Schema:
    """The MultiKueueConfig ``spec`` schema of ``version``."""
    clusters: Schema = {"type": "array", "minItems": 1, "maxItems": 20}
    if version == "v1beta1":
        clusters |= {"items": string(), "x-kubernetes-list-type": "set"}
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
        properties["quotaManagement"] = string(("Manual", "Automated"))
    return {**_object(properties), "required": ["clusters"]}


def multikueue_cluster_spec(version: str) -> Schema:
    """The MultiKueueCluster ``spec`` schema of ``version``."""
    profile = {
        **_object({"name": _bounded(1, 256)}, open_=False),
        "required": ["name"],
    }
    location_type = string(_LOCATION_TYPES, "Secret")
    if version == "v1beta1":
        kubeconfig = {
            **_object({"location": string(), "locationType": location_type}, open_=False),
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


def multikueue_cluster_status(version: str) -> Schema:
    """The MultiKueueCluster ``status`` schema of ``version`` (at most 16 conditions)."""
    if version == "v1beta1":
        return open_object()
    return _object({"conditions": {**_open_list(), "maxItems": 16}})


def topology_spec(version: str) -> Schema:
    """The Topology ``spec`` schema of ``version``."""
    del version
    return _object({"levels": _open_list()})


def provisioning_request_config_spec(version: str) -> Schema:
    """The ProvisioningRequestConfig ``spec`` schema of ``version``."""
    del version
    retry = {"backoffBaseSeconds": 60, "backoffLimitCount": 3, "backoffMaxSeconds": 1800}
    return _object(
        {
            "provisioningClassName": string(),
            "parameters": _string_map(),
            "managedResources": _strings(),
            "podSetMergePolicy": string(
                ("IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements")
            ),
            "podSetUpdates": open_object(),
            "retryStrategy": _object(
                {name: integer(default=value) for name, value in retry.items()}, default=retry
            ),
        }
    )
