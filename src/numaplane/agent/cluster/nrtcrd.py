"""The ``noderesourcetopologies.topology.node.k8s.io`` CustomResourceDefinition, built here, and
``ensure_nrt_crd``, which installs it in a cluster that lacks it.

The schema is the one NFD's topology-updater and the scheduler-plugins read
(``k8stopologyawareschedwg/noderesourcetopology-api``): versions ``v1alpha1`` (served) and
``v1alpha2`` (served, stored); zones with costs, attributes and per-resource
capacity/allocatable/available as int-or-string quantities. It is composed from small builders
below rather than kept as a document, so each shared part (a resource's quantities, an
attribute list) is written once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Final

from numaplane.agent.cluster.nrt import NRT_GROUP, NRT_KIND, NRT_RESOURCE
from numaplane.kube import ApiError, KubeClient, KubeError

__all__ = ["NRT_CRD_NAME", "NrtCrdError", "ensure_nrt_crd", "nrt_crd"]

_log = logging.getLogger(__name__)

NRT_CRD_NAME: Final = f"{NRT_RESOURCE}.{NRT_GROUP}"
CRD_API_VERSION: Final = "apiextensions.k8s.io/v1"

# The API server refuses a CRD in a *.k8s.io group without a link to its API review.
_APPROVAL: Final = "https://github.com/kubernetes/enhancements/pull/1870"

# The quantity grammar of apimachinery (resource.Quantity's OpenAPI pattern).
_QUANTITY_PATTERN: Final = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


class NrtCrdError(KubeError):
    """The CRD could not be installed, or did not become Established in time."""


def _string(description: str = "") -> dict[str, Any]:
    return {"type": "string", **({"description": description} if description else {})}


def _object(
    properties: dict[str, Any], required: list[str], description: str = ""
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if description:
        schema["description"] = description
    return schema


def _array(items: dict[str, Any], description: str = "") -> dict[str, Any]:
    return {
        "type": "array",
        "items": items,
        **({"description": description} if description else {}),
    }


def _quantity(description: str) -> dict[str, Any]:
    return {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": _QUANTITY_PATTERN,
        "x-kubernetes-int-or-string": True,
        "description": description,
    }


def _attributes() -> dict[str, Any]:
    attribute = _object(
        {"name": _string(), "value": _string()},
        ["name", "value"],
        "One named attribute (a string value).",
    )
    return _array(attribute, "Attributes, as name/value pairs.")


def _zones() -> dict[str, Any]:
    cost = _object(
        {"name": _string(), "value": {"type": "integer", "format": "int64"}},
        ["name", "value"],
        "The distance from this zone to the zone named.",
    )
    resource = _object(
        {
            "name": _string("The resource's name."),
            "capacity": _quantity("How much of the resource the zone has."),
            "allocatable": _quantity("How much of it pods may use (as node allocatable)."),
            "available": _quantity("How much of the allocatable amount no pod holds now."),
        },
        ["allocatable", "available", "capacity", "name"],
        "One resource of a zone.",
    )
    zone = _object(
        {
            "attributes": _attributes(),
            "costs": _array(cost, "Distances to the zones."),
            "name": _string(),
            "parent": _string(),
            "resources": _array(resource, "The zone's resources."),
            "type": _string(),
        },
        ["name", "type"],
        "A topology zone: a NUMA node, a socket, a die or a core.",
    )
    return _array(zone, "The node's zones.")


def _type_meta() -> dict[str, Any]:
    return {
        "apiVersion": _string("The versioned schema of this object."),
        "kind": _string("The REST resource this object represents."),
        "metadata": {"type": "object"},
    }


def _version(name: str, *, storage: bool) -> dict[str, Any]:
    properties = {**_type_meta(), "zones": _zones()}
    policies = {"type": "array", "items": {"type": "string"}}
    if name == "v1alpha1":
        properties["topologyPolicies"] = policies
        required = ["topologyPolicies", "zones"]
    else:
        properties["topologyPolicies"] = {
            **policies,
            "description": "Deprecated: the top-level attributes say the same.",
        }
        properties["attributes"] = _attributes()
        required = ["zones"]
    schema = _object(properties, required, "A node's resources per topology zone.")
    return {
        "name": name,
        "served": True,
        "storage": storage,
        "schema": {"openAPIV3Schema": schema},
    }


def nrt_crd() -> dict[str, Any]:
    """The NodeResourceTopology CRD (``apiextensions.k8s.io/v1``)."""
    return {
        "apiVersion": CRD_API_VERSION,
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": NRT_CRD_NAME,
            "annotations": {"api-approved.kubernetes.io": _APPROVAL},
        },
        "spec": {
            "group": NRT_GROUP,
            "names": {
                "kind": NRT_KIND,
                "listKind": f"{NRT_KIND}List",
                "plural": NRT_RESOURCE,
                "singular": "noderesourcetopology",
                "shortNames": ["node-res-topo"],
            },
            "scope": "Cluster",
            "versions": [_version("v1alpha1", storage=False), _version("v1alpha2", storage=True)],
        },
    }


def _established(crd: dict[str, Any]) -> bool:
    for condition in (crd.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Established" and condition.get("status") == "True":
            return True
    return False


async def ensure_nrt_crd(client: KubeClient, *, timeout: float = 30.0) -> None:
    """Create the CRD when the cluster has none (another one already there is kept, as NFD's
    may be), then wait until it is Established; ``NrtCrdError`` after ``timeout`` seconds."""
    try:
        crd = await client.get(CRD_API_VERSION, "customresourcedefinitions", NRT_CRD_NAME)
    except ApiError as err:
        if not err.is_not_found:
            raise
        try:
            crd = await client.create(CRD_API_VERSION, "customresourcedefinitions", nrt_crd())
            _log.info("created CustomResourceDefinition %s", NRT_CRD_NAME)
        except ApiError as created:
            if created.code != 409:
                raise
            crd = await client.get(CRD_API_VERSION, "customresourcedefinitions", NRT_CRD_NAME)
    deadline = time.monotonic() + timeout
    delay = 0.05
    while not _established(crd):
        if time.monotonic() > deadline:
            raise NrtCrdError(f"CustomResourceDefinition {NRT_CRD_NAME} not Established")
        await asyncio.sleep(delay)
        delay = min(delay * 2, 1.0)
        crd = await client.get(CRD_API_VERSION, "customresourcedefinitions", NRT_CRD_NAME)
