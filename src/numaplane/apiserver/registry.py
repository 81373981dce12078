"""What one logical cluster serves: the built-in resources plus one resource per served version of
every Established CustomResourceDefinition, as kube-apiserver's handler chain and the
apiextensions server together expose them.

The registry is plain data kept current by :class:`numaplane.apiserver.rest.Cluster`: it is
filled from the stored CRDs when a cluster opens and changed after every write to a CRD (create,
update, the end of its deletion), so a CRD is served as soon as its create returns, as
upstream's establishing controller does within a moment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from numaplane.apiserver.patchmeta import Schema, builtin_schema, custom_resource_schema
from numaplane.apiserver.resource import ResourceInfo

#: The group-resource under which CustomResourceDefinitions are stored.
CRD_RESOURCE = "customresourcedefinitions.apiextensions.k8s.io"

#: Builds the served resources of one CRD (``numaplane.apiserver.crd.crd_resource_infos``).
CrdInfos = Callable[[dict[str, Any]], list[ResourceInfo]]

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """A sort key putting ``version`` in Kubernetes' version priority order (lowest first is
    best): GA before beta before alpha, higher numbers first, then any other name by
    alphabet, as apimachinery's ``CompareKubeAwareVersionStrings``."""
    match = _KUBE_VERSION.match(version)
    if match is None:
        return (3, 0, 0, version)
    major = int(match.group(1))
    stage = {None: 0, "beta": 1, "alpha": 2}[match.group(2)]
    minor = int(match.group(3) or 0)
    return (stage, -major, -minor, "")


def crd_is_established(crd: dict[str, Any]) -> bool:
    """Whether ``crd``'s ``Established`` condition is ``True`` (only then are its versions
    served)."""
    for condition in crd.get("status", {}).get("conditions") or ():
        if condition.get("type") == "Established":
            return bool(condition.get("status") == "True")
    return False


def crd_is_terminating(crd: dict[str, Any]) -> bool:
    """Whether ``crd`` is being deleted (its custom resources are being removed)."""
    return bool(crd.get("metadata", {}).get("deletionTimestamp"))


class Registry:
    """The resources one cluster serves, looked up by group/version/resource or kind."""

    def __init__(self, builtins: Sequence[ResourceInfo], crd_infos: CrdInfos | None = None):
        self._builtins = tuple(builtins)
        self._crd_infos = crd_infos
        # CRD name -> (CRD object, its served ResourceInfos)
        self._crds: dict[str, tuple[dict[str, Any], list[ResourceInfo]]] = {}
        self._rebuild()

    def _rebuild(self) -> None:
        infos = list(self._builtins)
        for _, served in self._crds.values():
            infos.extend(served)
        self._all = infos
        self._by_gvr = {(i.group, i.version, i.resource): i for i in infos}
        self._by_gvk = {(i.group, i.version, i.kind): i for i in infos}
        self._builtin_resources = {i.group_resource for i in self._builtins}
        self._crd_by_gr = {
            served[0].group_resource: crd for crd, served in self._crds.values() if served
        }
        self._schemas: dict[tuple[str, str, str], Schema] = {}

    def patch_schema(self, info: ResourceInfo) -> Schema:
        """The list and map semantics patches and managed fields follow for ``info``: the
        built-in kind's patch metadata, or the CRD version's schema."""
        key = (info.group, info.version, info.kind)
        found = self._schemas.get(key)
        if found is None:
            if info.group_resource in self._builtin_resources:
                found = builtin_schema(info.group, info.kind)
            else:
                found = custom_resource_schema(info.extra.get("schema"))
            self._schemas[key] = found
        return found

    def lookup(self, group: str, version: str, resource: str) -> ResourceInfo | None:
        """The resource served at ``/apis/group/version/resource``, or None."""
        return self._by_gvr.get((group, version, resource))

    def by_kind(self, group: str, version: str, kind: str) -> ResourceInfo | None:
        """The resource of ``kind`` in ``group/version``, or None."""
        return self._by_gvk.get((group, version, kind))

    def kind_in_group(self, group: str, kind: str) -> ResourceInfo | None:
        """Any served version of ``kind`` in ``group`` (an ownerReference names a version that
        may no longer be served; objects of a group-kind are the same objects at any version)."""
        for info in self._all:
            if info.group == group and info.kind == kind:
                return info
        return None

    def all(self) -> list[ResourceInfo]:
        """Every served resource, built-ins first."""
        return list(self._all)

    def versions_of(self, group_resource: str) -> list[ResourceInfo]:
        """Every served version of ``group_resource`` (one for most built-ins)."""
        return [i for i in self._all if i.group_resource == group_resource]

    def storage_resources(self) -> list[ResourceInfo]:
        """One resource per stored group-resource (the first served version), for whoever walks
        everything stored: the garbage collector and the namespace controller."""
        seen: set[str] = set()
        out = []
        for info in self._all:
            if info.group_resource not in seen:
                seen.add(info.group_resource)
                out.append(info)
        return out

    def preferred_version(self, group: str) -> str:
        """The version discovery prefers for ``group``: the first listed for built-in groups,
        the highest-priority served version for a CRD group."""
        for info in self._builtins:
            if info.group == group:
                return info.version
        versions = {i.version for i in self._all if i.group == group}
        if not versions:
            return ""
        return min(versions, key=version_priority)

    def is_builtin(self, info: ResourceInfo) -> bool:
        """Whether ``info`` is a built-in resource (not defined by a CRD)."""
        return info.group_resource in self._builtin_resources

    def crd_for(self, group_resource: str) -> dict[str, Any] | None:
        """The CRD that defines ``group_resource``, or None for a built-in."""
        return self._crd_by_gr.get(group_resource)

    def crd_resource(self, crd: dict[str, Any]) -> str:
        """The group-resource ``crd``'s objects are stored under
        (``clusterqueues.kueue.x-k8s.io``)."""
        spec = crd.get("spec", {})
        return f"{spec.get('names', {}).get('plural', '')}.{spec.get('group', '')}"

    def set_crd(self, crd: dict[str, Any]) -> None:
        """Serve ``crd``'s versions if it is Established (or stop serving them if not)."""
        name = crd.get("metadata", {}).get("name", "")
        if self._crd_infos is None or not crd_is_established(crd):
            self._crds.pop(name, None)
        else:
            self._crds[name] = (crd, self._crd_infos(crd))
        self._rebuild()

    def remove_crd(self, name: str) -> None:
        """Stop serving the CRD called ``name``."""
        if self._crds.pop(name, None) is not None:
            self._rebuild()

    def load_crds(self, crds: Iterable[dict[str, Any]]) -> None:
        """Serve every Established CRD of ``crds`` (a cluster opening)."""
        for crd in crds:
            if self._crd_infos is not None and crd_is_established(crd):
                name = crd.get("metadata", {}).get("name", "")
                self._crds[name] = (crd, self._crd_infos(crd))
        self._rebuild()
