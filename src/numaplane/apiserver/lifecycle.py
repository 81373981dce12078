"""The lifecycle controllers of one cluster, run by
:class:`~numaplane.apiserver.garbagecollector.Controllers`:

- the system namespaces (``default``, ``kube-system``, ``kube-public``, ``kube-node-lease``)
  and PriorityClasses (``system-node-critical``, ``system-cluster-critical``), created at
  start as kube-apiserver's bootstrap controllers do;
- the namespace controller (``pkg/controller/namespace``): a Terminating namespace is emptied
  (its content deleted in the background), its ``status.conditions`` say what remains, then
  its ``kubernetes`` finalizer is removed and the namespace deleted;
- the service-account controller: a ``default`` ServiceAccount in every live namespace;
- the expiry of Events an hour after their last write (kube-apiserver's ``--event-ttl``,
  which etcd leases enforce upstream);
- the apiextensions finalizer: a deleted CRD is marked Terminating, its objects are deleted,
  then its ``customresourcecleanup`` finalizer is removed.

Each step reads the latest state and writes through the REST verbs, so it may run any number
of times.
"""

from __future__ import annotations

import calendar
import contextlib
import time
from typing import Any, Final

from numaplane.apiserver import errors
from numaplane.apiserver.kinds.scheduling import SYSTEM_PRIORITY_CLASSES
from numaplane.apiserver.registry import CRD_RESOURCE
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest_common import Object, RequestContext, clone, meta, now_rfc3339
from numaplane.apiserver.rest_core import TERMINATING, ClusterCore
from numaplane.apiserver.storage import ObjectKey
from numaplane.apiserver.user import UserInfo

SYSTEM_NAMESPACES: Final = ("default", "kube-system", "kube-public", "kube-node-lease")
NAMESPACE_FINALIZER: Final = "kubernetes"
PRIORITY_CLASSES: Final = "priorityclasses.scheduling.k8s.io"
#: kube-apiserver's default ``--event-ttl``.
EVENT_TTL_S: Final = 3600.0
_EVENT_TIMES: Final = ("lastTimestamp", "eventTime", "firstTimestamp")
CRD_CLEANUP_FINALIZER: Final = "customresourcecleanup.apiextensions.k8s.io"
#: Who the controllers act as (the verbs do not authorize; the name is for the record).
CONTROLLER: Final = RequestContext(
    UserInfo("system:kube-controller-manager", ("system:authenticated",))
)


def deleting(obj: Object) -> bool:
    """Whether ``obj`` has a ``deletionTimestamp``."""
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))


def finalizers_of(obj: Object) -> list[str]:
    """``obj``'s ``metadata.finalizers``."""
    return list(obj.get("metadata", {}).get("finalizers") or ())


def served_info(cluster: ClusterCore, resource: str) -> ResourceInfo | None:
    """A served version of the stored group-resource ``resource``, or None."""
    served = cluster.registry.versions_of(resource)
    return served[0] if served else None


async def remove_finalizer(cluster: ClusterCore, key: ObjectKey, finalizer: str) -> None:
    """Take ``finalizer`` off the object at ``key`` with an update (which deletes the object
    when it was the last one of an object being deleted)."""
    info = served_info(cluster, key.resource)
    if info is None:
        return
    for _ in range(8):
        obj = cluster.store.get_latest(key)
        if obj is None or finalizer not in finalizers_of(obj):
            return
        new = clone(obj)
        meta(new)["finalizers"] = [f for f in finalizers_of(obj) if f != finalizer]
        try:
            await cluster.update(CONTROLLER, info, key.namespace, key.name, new)
            return
        except errors.StatusError as error:
            if error.reason != "Conflict":
                raise


def _epoch(text: object) -> float | None:
    """An RFC 3339 time (``metav1.Time`` or ``MicroTime``) as epoch seconds, or None."""
    if not isinstance(text, str) or len(text) < 19:
        return None
    try:
        parsed = time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    return calendar.timegm(parsed)


def event_last_write(event: Object) -> float | None:
    """When an Event was last written, as far as the object tells: the newest of its times
    (``lastTimestamp``, ``eventTime``, ``series.lastObservedTime``, the managed-fields times,
    ``creationTimestamp``)."""
    metadata = event.get("metadata", {})
    texts: list[object] = [event.get(field) for field in _EVENT_TIMES]
    texts.append((event.get("series") or {}).get("lastObservedTime"))
    texts.extend(m.get("time") for m in metadata.get("managedFields") or () if isinstance(m, dict))
    texts.append(metadata.get("creationTimestamp"))
    times = [t for t in map(_epoch, texts) if t is not None]
    return max(times) if times else None


def _condition(kind: str, remaining: bool, reason: str, message: str, now: str) -> Object:
    return {
        "type": kind,
        "status": "True" if remaining else "False",
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def namespace_conditions(
    counts: dict[str, int], finalizers: dict[str, int], now: str
) -> list[Object]:
    """The deletion conditions the namespace controller reports: what content and which
    content finalizers remain (``counts``: group-resource -> objects left; ``finalizers``:
    finalizer -> objects holding it)."""
    content = ", ".join(f"{gr} has {n} resource instances" for gr, n in sorted(counts.items()))
    held = ", ".join(f"{f} in {n} resource instances" for f, n in sorted(finalizers.items()))
    return [
        _condition(
            "NamespaceDeletionDiscoveryFailure",
            False,
            "ResourcesDiscovered",
            "All resources successfully discovered",
            now,
        ),
        _condition(
            "NamespaceDeletionGroupVersionParsingFailure",
            False,
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
            now,
        ),
        _condition(
            "NamespaceDeletionContentFailure",
            False,
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization",
            now,
        ),
        _condition(
            "NamespaceContentRemaining",
            bool(counts),
            "SomeResourcesRemain" if counts else "ContentRemoved",
            f"Some resources are remaining: {content}"
            if counts
            else "All content successfully removed",
            now,
        ),
        _condition(
            "NamespaceFinalizersRemaining",
            bool(finalizers),
            "SomeFinalizersRemain" if finalizers else "ContentHasNoFinalizers",
            f"Some content in the namespace has finalizers remaining: {held}"
            if finalizers
            else "All content-preserving finalizers finished",
            now,
        ),
    ]


class Lifecycle:
    """The lifecycle steps of one cluster (see the module docstring)."""

    def __init__(self, cluster: ClusterCore) -> None:
        self.cluster = cluster
        self.store = cluster.store

    async def bootstrap(self) -> None:
        """What kube-apiserver creates at every start when missing: the system namespaces and
        the system PriorityClasses."""
        for name in SYSTEM_NAMESPACES:
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            await self._ensure("namespaces", body)
        for priority_class in SYSTEM_PRIORITY_CLASSES:
            await self._ensure(PRIORITY_CLASSES, clone(priority_class))

    async def _ensure(self, resource: str, body: Object) -> None:
        """Create the cluster-scoped ``body`` of ``resource`` if it does not exist."""
        if self.store.get_latest(ObjectKey(resource, "", body["metadata"]["name"])) is not None:
            return
        info = served_info(self.cluster, resource)
        if info is None:
            return
        with contextlib.suppress(errors.StatusError):
            await self.cluster.create(CONTROLLER, info, "", body)

    async def sync_namespace(self, name: str) -> None:
        """The service-account controller for a live namespace, the namespace controller for
        a terminating one."""
        ns = self.store.get_latest(ObjectKey("namespaces", "", name))
        if ns is None:
            return
        if not deleting(ns):
            await self._ensure_default_service_account(name)
            return
        if ns.get("status", {}).get("phase") != TERMINATING:
            return
        counts: dict[str, int] = {}
        held: dict[str, int] = {}
        for info in self.cluster.registry.storage_resources():
            if not info.namespaced:
                continue
            for obj in self.store.list(info.group_resource, name)[0]:
                obj_name = obj.get("metadata", {}).get("name", "")
                if not deleting(obj):
                    with contextlib.suppress(errors.StatusError):
                        await self.cluster.delete(
                            CONTROLLER, info, name, obj_name, {"propagationPolicy": "Background"}
                        )
                left = self.store.get_latest(ObjectKey(info.group_resource, name, obj_name))
                if left is not None:
                    counts[info.group_resource] = counts.get(info.group_resource, 0) + 1
                    for finalizer in finalizers_of(left):
                        held[finalizer] = held.get(finalizer, 0) + 1
        await self._report(name, counts, held)
        if not counts:
            await self._finalize_namespace(name)

    async def _report(self, name: str, counts: dict[str, int], held: dict[str, int]) -> None:
        """Write the deletion conditions when what they say changed."""
        key = ObjectKey("namespaces", "", name)
        ns = self.store.get_latest(key)
        if ns is None:
            return
        now = now_rfc3339()
        wanted = namespace_conditions(counts, held, now)
        current = ns.get("status", {}).get("conditions") or []

        def said(conditions: list[Object]) -> list[tuple[Any, ...]]:
            return [(c.get("type"), c.get("status"), c.get("message")) for c in conditions]

        if said(current) == said(wanted):
            return
        old_times = {c.get("type"): c for c in current}
        for condition in wanted:
            before = old_times.get(condition["type"])
            if before is not None and before.get("status") == condition["status"]:
                condition["lastTransitionTime"] = before.get("lastTransitionTime", now)
        new = clone(ns)
        new.setdefault("status", {})["conditions"] = wanted
        with contextlib.suppress(errors.StatusError):
            await self.store.update(key, new, int(ns["metadata"]["resourceVersion"]))

    async def _finalize_namespace(self, name: str) -> None:
        """Remove the ``kubernetes`` finalizer (the ``namespaces/finalize`` step), then delete
        the emptied namespace."""
        key = ObjectKey("namespaces", "", name)
        ns = self.store.get_latest(key)
        info = served_info(self.cluster, "namespaces")
        if ns is None or info is None:
            return
        spec_finalizers = list(ns.get("spec", {}).get("finalizers") or ())
        if spec_finalizers:
            new = clone(ns)
            new["spec"]["finalizers"] = [f for f in spec_finalizers if f != NAMESPACE_FINALIZER]
            if not new["spec"]["finalizers"]:
                del new["spec"]["finalizers"]
            await self.store.update(key, new, int(ns["metadata"]["resourceVersion"]))
        with contextlib.suppress(errors.StatusError):
            await self.cluster.delete(CONTROLLER, info, "", name, {})

    async def _ensure_default_service_account(self, namespace: str) -> None:
        if self.store.get_latest(ObjectKey("serviceaccounts", namespace, "default")) is not None:
            return
        info = served_info(self.cluster, "serviceaccounts")
        if info is None:
            return
        body = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": namespace},
        }
        with contextlib.suppress(errors.StatusError):
            await self.cluster.create(CONTROLLER, info, namespace, body)

    async def sync_crd(self, name: str) -> None:
        """A deleted CRD: its Terminating condition, its objects deleted, then the CRD."""
        key = ObjectKey(CRD_RESOURCE, "", name)
        crd = self.store.get_latest(key)
        if crd is None or not deleting(crd):
            return
        await self._mark_crd_terminating(key, crd)
        resource = self.cluster.registry.crd_resource(crd)
        served = self.cluster.registry.versions_of(resource)
        items, _ = self.store.list(resource, None)
        if items and served:
            for obj in items:
                if deleting(obj):
                    continue
                metadata = obj.get("metadata", {})
                with contextlib.suppress(errors.StatusError):
                    await self.cluster.delete(
                        CONTROLLER,
                        served[0],
                        metadata.get("namespace", ""),
                        metadata.get("name", ""),
                        {},
                    )
            return
        for obj in items:
            # Not served (never Established): nothing can hold these back.
            metadata = obj.get("metadata", {})
            with contextlib.suppress(errors.StatusError):
                await self.store.delete(
                    ObjectKey(resource, metadata.get("namespace", ""), metadata.get("name", "")),
                    None,
                )
        await remove_finalizer(self.cluster, key, CRD_CLEANUP_FINALIZER)

    async def _mark_crd_terminating(self, key: ObjectKey, crd: Object) -> None:
        conditions = crd.get("status", {}).get("conditions") or []
        if any(c.get("type") == "Terminating" for c in conditions):
            return
        new = clone(crd)
        new.setdefault("status", {}).setdefault("conditions", []).append(
            {
                "type": "Terminating",
                "status": "True",
                "lastTransitionTime": now_rfc3339(),
                "reason": "InstanceDeletionInProgress",
                "message": "CustomResource deletion is in progress",
            }
        )
        with contextlib.suppress(errors.StatusError):
            written = await self.store.update(key, new, int(crd["metadata"]["resourceVersion"]))
            self.cluster.registry.set_crd(written)

    async def expire_events(self, now: float, ttl_s: float = EVENT_TTL_S) -> int:
        """Delete the Events last written more than ``ttl_s`` before ``now``; how many."""
        expired = 0
        for obj in self.store.list("events")[0]:
            written = event_last_write(obj)
            if written is None or written > now - ttl_s:
                continue
            metadata = obj.get("metadata", {})
            key = ObjectKey("events", metadata.get("namespace", ""), metadata.get("name", ""))
            with contextlib.suppress(errors.StatusError):
                await self.store.delete(key, int(metadata.get("resourceVersion", "0")))
                expired += 1
        return expired
