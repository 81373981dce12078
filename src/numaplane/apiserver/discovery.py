"""API discovery documents as kube-apiserver 1.32 serves them, built from ``list[ResourceInfo]``.

Two shapes exist upstream (k8s.io/apiserver ``pkg/endpoints/discovery``):

- the legacy documents: ``/api`` (``APIVersions``), ``/apis`` (``APIGroupList``), ``/apis/G``
  (``APIGroup``), ``/api/v1`` and ``/apis/G/V`` (``APIResourceList``);
- the aggregated ones (``apidiscovery.k8s.io`` ``v2`` and ``v2beta1`` ``APIGroupDiscoveryList``)
  that kubectl 1.32 asks for first at ``/api`` and ``/apis`` through its ``Accept`` header.

Groups are ordered as the aggregator orders them (its group priorities; CustomResourceDefinition
groups get 1000 and sort by name), versions by Kubernetes' version ordering (``v1`` > ``v1beta2`` >
``v1beta1`` > ``v1alpha1`` > other strings). Everything here is pure; the HTTP layer sets the
``ETag`` (quoted :func:`document_hash`), ``Vary: Accept`` and ``Cache-Control: public`` headers.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from numaplane.apiserver.resource import ResourceInfo

#: ``Accept`` value kubectl 1.32 sends to ``/api`` and ``/apis``, for reference and tests.
KUBECTL_DISCOVERY_ACCEPT: Final = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)

#: The aggregator's ``GroupPriorityMinimum`` of the built-in groups (kube-apiserver 1.32's
#: default APIService priorities); a group not listed (a CRD's) gets 1000, as upstream.
GROUP_PRIORITY: Final[dict[str, int]] = {
    "": 18000,
    "apiregistration.k8s.io": 18000,
    "apps": 17800,
    "events.k8s.io": 17750,
    "authentication.k8s.io": 17700,
    "authorization.k8s.io": 17600,
    "autoscaling": 17500,
    "batch": 17400,
    "certificates.k8s.io": 17300,
    "networking.k8s.io": 17200,
    "policy": 17100,
    "rbac.authorization.k8s.io": 17000,
    "storage.k8s.io": 16800,
    "admissionregistration.k8s.io": 16700,
    "apiextensions.k8s.io": 16700,
    "scheduling.k8s.io": 16600,
    "coordination.k8s.io": 16500,
    "node.k8s.io": 16300,
    "discovery.k8s.io": 16200,
    "flowcontrol.apiserver.k8s.io": 16100,
    "internal.apiserver.k8s.io": 16000,
    "resource.k8s.io": 15900,
    "storagemigration.k8s.io": 15800,
}
CUSTOM_GROUP_PRIORITY: Final = 1000


@dataclass(frozen=True)
class SubresourceKind:
    """What a subresource answers with: ``group``/``version`` empty when it is the parent's."""

    kind: str  # empty: the parent's kind; "{kind}" is replaced by it
    verbs: tuple[str, ...]
    group: str = ""
    version: str = ""

    def kind_of(self, parent: str) -> str:
        """The kind answered below an object of kind ``parent``."""
        return self.kind.replace("{kind}", parent) if self.kind else parent


#: The subresources upstream serves, with the kind they return and their verbs
#: (``pods/binding`` is a ``Binding``, ``serviceaccounts/token`` a TokenRequest, ``*/scale`` an
#: ``autoscaling/v1`` Scale, ``pods/proxy`` a PodProxyOptions; ``status`` and ``log`` return the
#: parent's kind).
SUBRESOURCES: Final[dict[str, SubresourceKind]] = {
    "status": SubresourceKind("", ("get", "patch", "update")),
    "scale": SubresourceKind("Scale", ("get", "patch", "update"), "autoscaling", "v1"),
    "binding": SubresourceKind("Binding", ("create",)),
    "eviction": SubresourceKind("Eviction", ("create",), "policy", "v1"),
    "token": SubresourceKind("TokenRequest", ("create",), "authentication.k8s.io", "v1"),
    "log": SubresourceKind("", ("get",)),
    "exec": SubresourceKind("PodExecOptions", ("create", "get")),
    "attach": SubresourceKind("PodAttachOptions", ("create", "get")),
    "portforward": SubresourceKind("PodPortForwardOptions", ("create", "get")),
    "proxy": SubresourceKind("{kind}ProxyOptions", ("create", "delete", "get", "patch", "update")),
    "ephemeralcontainers": SubresourceKind("", ("get", "patch", "update")),
    "resize": SubresourceKind("", ("get", "patch", "update")),
    "approval": SubresourceKind("", ("get", "patch", "update")),
    "finalize": SubresourceKind("", ("update",)),
}

_KUBE_VERSION = re.compile(r"^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$")
_STABILITY_RANK: Final = {None: 2, "beta": 1, "alpha": 0}


def version_sort_key(version: str) -> tuple[int, int, int, int, str]:
    """A key ordering versions as apimachinery's ``CompareKubeAwareVersionStrings`` does, most
    preferred first when sorted ascending: GA before beta before alpha, higher numbers first,
    and strings that are not Kubernetes versions last, alphabetically."""
    match = _KUBE_VERSION.match(version)
    if match is None:
        return (1, 0, 0, 0, version)
    major, stability, minor = match.groups()
    return (0, -_STABILITY_RANK[stability], -int(major), -int(minor or 0), "")


def group_priority(group: str) -> int:
    """The aggregator's priority of ``group`` (higher is listed first)."""
    return GROUP_PRIORITY.get(group, CUSTOM_GROUP_PRIORITY)


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """``storageVersionHash`` of a resource kept at ``group/version`` as ``kind``: upstream's
    base64 of the first 8 bytes of the SHA-256 of ``group/version/kind``."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode("ascii")


def document_hash(doc: Any) -> str:
    """The ETag value (unquoted) of a discovery or OpenAPI document: upstream's upper-case hex
    SHA-512 of the document's compact JSON."""
    data = doc if isinstance(doc, bytes) else orjson.dumps(doc)
    return hashlib.sha512(data).hexdigest().upper()


# --- grouping -------------------------------------------------------------------------------


def groups_in_order(infos: Iterable[ResourceInfo]) -> list[str]:
    """The non-core groups of ``infos`` in discovery order (priority, then name)."""
    names = {info.group for info in infos if info.group}
    return sorted(names, key=lambda g: (-group_priority(g), g))


def versions_in_order(infos: Iterable[ResourceInfo], group: str) -> list[str]:
    """The versions served for ``group``, most preferred first."""
    found = {info.version for info in infos if info.group == group}
    return sorted(found, key=version_sort_key)


def preferred_version(infos: Iterable[ResourceInfo], group: str) -> str:
    """The preferred version of ``group`` (empty when it is not served)."""
    versions = versions_in_order(infos, group)
    return versions[0] if versions else ""


def _group_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


# --- legacy documents -----------------------------------------------------------------------


def api_versions(server_address: str = "") -> dict[str, Any]:
    """``GET /api``: the core group's versions, as ``APIVersions``.

    ``server_address`` (``host:port`` clients reach this server at) fills
    ``serverAddressByClientCIDRs`` the way kube-apiserver does for ``0.0.0.0/0``.
    """
    doc: dict[str, Any] = {"kind": "APIVersions", "versions": ["v1"]}
    if server_address:
        doc["serverAddressByClientCIDRs"] = [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ]
    return doc


def _api_group(infos: Sequence[ResourceInfo], group: str) -> dict[str, Any]:
    versions = [
        {"groupVersion": _group_version(group, v), "version": v}
        for v in versions_in_order(infos, group)
    ]
    return {"name": group, "versions": versions, "preferredVersion": versions[0]}


def api_group_list(infos: Iterable[ResourceInfo]) -> dict[str, Any]:
    """``GET /apis``: every non-core group, as ``APIGroupList``."""
    served = list(infos)
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_api_group(served, g) for g in groups_in_order(served)],
    }


def api_group(infos: Iterable[ResourceInfo], group: str) -> dict[str, Any] | None:
    """``GET /apis/G``: one group as ``APIGroup``, or None when it is not served (404)."""
    served = list(infos)
    if not group or not any(info.group == group for info in served):
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_api_group(served, group)}


def _subresource_entry(info: ResourceInfo, sub: str) -> dict[str, Any]:
    spec = SUBRESOURCES.get(sub, SubresourceKind("", ("get",)))
    entry: dict[str, Any] = {
        "name": f"{info.resource}/{sub}",
        "singularName": "",
        "namespaced": info.namespaced,
    }
    if spec.group or spec.version:
        entry["group"] = spec.group
        entry["version"] = spec.version
    entry["kind"] = spec.kind_of(info.kind)
    entry["verbs"] = list(spec.verbs)
    return entry


def _has_storage(info: ResourceInfo) -> bool:
    # Create-only review resources (SelfSubjectAccessReview, ...) are never stored, and
    # upstream gives them no storageVersionHash.
    return "get" in info.verbs


def _resource_entry(info: ResourceInfo) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": info.resource,
        "singularName": info.singular_name,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": sorted(info.verbs),
    }
    if info.short_names:
        entry["shortNames"] = list(info.short_names)
    if info.categories:
        entry["categories"] = list(info.categories)
    if _has_storage(info):
        entry["storageVersionHash"] = storage_version_hash(
            info.group, info.storage_version or info.version, info.kind
        )
    return entry


def _in_version(infos: Iterable[ResourceInfo], group: str, version: str) -> list[ResourceInfo]:
    chosen = [i for i in infos if i.group == group and i.version == version]
    return sorted(chosen, key=lambda i: i.resource)


def api_resource_list(
    infos: Iterable[ResourceInfo], group: str, version: str
) -> dict[str, Any] | None:
    """``GET /api/v1`` (``group`` empty) or ``/apis/G/V``: ``APIResourceList`` with every
    resource and subresource in name order, or None when the group-version is not served."""
    chosen = _in_version(infos, group, version)
    if not chosen:
        return None
    resources: list[dict[str, Any]] = []
    for info in chosen:
        resources.append(_resource_entry(info))
        resources.extend(_subresource_entry(info, sub) for sub in sorted(info.subresources))
    resources.sort(key=lambda r: str(r["name"]))
    doc: dict[str, Any] = {"kind": "APIResourceList"}
    if group:
        # The core group's list carries no apiVersion upstream; the others say v1.
        doc["apiVersion"] = "v1"
    doc["groupVersion"] = _group_version(group, version)
    doc["resources"] = resources
    return doc


# --- aggregated documents -------------------------------------------------------------------

AGGREGATED_VERSIONS: Final = ("v2", "v2beta1")


def aggregated_content_type(version: str) -> str:
    """The ``Content-Type`` of an aggregated discovery response of ``version``."""
    return f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def _aggregated_resource(info: ResourceInfo) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": info.resource,
        "responseKind": _gvk("", "", info.kind),
        "scope": "Namespaced" if info.namespaced else "Cluster",
        "singularResource": info.singular_name,
        "verbs": sorted(info.verbs),
    }
    if info.short_names:
        entry["shortNames"] = list(info.short_names)
    if info.categories:
        entry["categories"] = list(info.categories)
    subresources = []
    for sub in sorted(info.subresources):
        spec = SUBRESOURCES.get(sub, SubresourceKind("", ("get",)))
        subresources.append(
            {
                "subresource": sub,
                "responseKind": _gvk(spec.group, spec.version, spec.kind_of(info.kind)),
                "verbs": list(spec.verbs),
            }
        )
    if subresources:
        entry["subresources"] = subresources
    return entry


def _aggregated_group(infos: Sequence[ResourceInfo], group: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": group} if group else {}
    metadata["creationTimestamp"] = None
    versions = [
        {
            "version": version,
            "resources": [_aggregated_resource(i) for i in _in_version(infos, group, version)],
            "freshness": "Current",
        }
        for version in versions_in_order(infos, group)
    ]
    return {"metadata": metadata, "versions": versions}


def aggregated_discovery(
    infos: Iterable[ResourceInfo], *, core: bool, version: str = "v2"
) -> dict[str, Any]:
    """The aggregated ``APIGroupDiscoveryList`` of ``/api`` (``core``) or ``/apis``, in
    ``apidiscovery.k8s.io/<version>`` (``v2`` or ``v2beta1``: the same fields)."""
    if version not in AGGREGATED_VERSIONS:
        raise ValueError(f"unknown aggregated discovery version {version!r}")
    served = list(infos)
    if core:
        items = [_aggregated_group(served, "")] if any(not i.group for i in served) else []
    else:
        items = [_aggregated_group(served, g) for g in groups_in_order(served)]
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{version}",
        "metadata": {},
        "items": items,
    }


# --- Accept negotiation ---------------------------------------------------------------------


@dataclass(frozen=True)
class MediaRange:
    """One entry of an ``Accept`` header: ``type/subtype`` and its parameters (lower-cased
    names), in the client's order."""

    mime: str
    params: dict[str, str]

    @property
    def quality(self) -> float:
        """The ``q`` parameter (1 when absent or unreadable)."""
        try:
            return float(self.params.get("q", "1"))
        except ValueError:
            return 1.0

    def is_json(self) -> bool:
        """Whether a JSON body satisfies the media type (``application/json``, ``*/*``, ...)."""
        return self.mime in ("application/json", "application/*", "*/*")


def parse_accept(accept: str) -> list[MediaRange]:
    """The ranges of an ``Accept`` header, best first (by ``q``, keeping the client's order on
    ties, as Go's ``goautoneg`` does); an empty header accepts anything."""
    ranges: list[MediaRange] = []
    for part in (accept or "*/*").split(","):
        pieces = [p.strip() for p in part.split(";")]
        if not pieces[0]:
            continue
        params: dict[str, str] = {}
        for piece in pieces[1:]:
            name, _, value = piece.partition("=")
            if name:
                params[name.strip().lower()] = value.strip().strip('"')
        ranges.append(MediaRange(pieces[0].lower(), params))
    ordered = sorted(enumerate(ranges), key=lambda p: (-p[1].quality, p[0]))
    return [r for _, r in ordered if r.quality > 0]


def negotiate_discovery(accept: str) -> str | None:
    """The aggregated discovery version (``v2`` or ``v2beta1``) the ``Accept`` header prefers,
    or None for the legacy document (plain JSON)."""
    for media in parse_accept(accept):
        if not media.is_json():
            continue
        if "as" not in media.params and "g" not in media.params:
            return None
        if (
            media.params.get("as") == "APIGroupDiscoveryList"
            and media.params.get("g") == "apidiscovery.k8s.io"
            and media.params.get("v") in AGGREGATED_VERSIONS
        ):
            return media.params["v"]
    return None
