"""Delete and deletecollection, as kube-apiserver's generic store and ``rest.BeforeDelete`` do
them: ``DeleteOptions`` (preconditions, ``gracePeriodSeconds``, ``propagationPolicy`` and the
legacy ``orphanDependents``), the garbage collector's ``orphan``/``foregroundDeletion``
finalizers, ``deletionTimestamp`` for objects with finalizers (they stay until the finalizers
are gone), graceful deletion of bound pods, the namespace's own two-step deletion and the
immortal namespaces of the NamespaceLifecycle admission plugin."""

from __future__ import annotations

import time
from typing import Any, Final

from numaplane.apiserver import errors
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest_common import (
    Object,
    RequestContext,
    RestResult,
    as_served,
    clone,
    forbidden_reason,
    meta,
    now_rfc3339,
    object_key,
    resource_version,
    rfc3339,
    storage_resource,
    success_status,
)
from numaplane.apiserver.rest_core import TERMINATING, ClusterCore
from numaplane.apiserver.rest_listopts import build_matcher
from numaplane.apiserver.storage import ObjectKey

ORPHAN: Final = "orphan"
FOREGROUND: Final = "foregroundDeletion"
POLICIES: Final = ("Foreground", "Background", "Orphan")
#: Namespaces the NamespaceLifecycle admission plugin never lets go.
IMMORTAL_NAMESPACES: Final = frozenset({"default", "kube-system", "kube-public"})
#: Resources whose delete answers with the object rather than a ``Status``
#: (their stores' ``ReturnDeletedObject``).
RETURNS_DELETED_OBJECT: Final = frozenset({"pods", "serviceaccounts", "namespaces"})
#: Pods wait this long to be deleted when neither the request nor the pod says otherwise.
DEFAULT_POD_GRACE_S: Final = 30


def validate_delete_options(options: Object) -> None:
    """``ValidateDeleteOptions``: a known propagation policy, not both it and
    ``orphanDependents``."""
    errs = []
    policy = options.get("propagationPolicy")
    if policy is not None and options.get("orphanDependents") is not None:
        errs.append(
            errors.invalid_value(
                "propagationPolicy",
                policy,
                "orphanDependents and deletionPropagation cannot be both set",
            )
        )
    if policy is not None and policy not in POLICIES:
        errs.append(errors.not_supported("propagationPolicy", policy, [*POLICIES, "nil"]))
    if errs:
        raise errors.invalid("meta.k8s.io", "DeleteOptions", "", errs)


def default_gc_policy(info: ResourceInfo) -> str:
    """The propagation a delete gets when it names none: batch/v1 Jobs orphan their pods (kept
    for compatibility upstream; kubectl always asks for Background), everything else deletes
    its dependents in the background."""
    if info.group == "batch" and info.version == "v1" and info.resource == "jobs":
        return "Orphan"
    return "Background"


def _should_orphan(info: ResourceInfo, finalizers: list[str], options: Object) -> bool:
    if options.get("orphanDependents") is not None:
        return bool(options["orphanDependents"])
    policy = options.get("propagationPolicy")
    if policy is not None:
        return bool(policy == "Orphan")
    for finalizer in finalizers:
        if finalizer == ORPHAN:
            return True
        if finalizer == FOREGROUND:
            return False
    return default_gc_policy(info) == "Orphan"


def _should_foreground(finalizers: list[str], options: Object) -> bool:
    if options.get("orphanDependents") is not None:
        return False
    policy = options.get("propagationPolicy")
    if policy is not None:
        return bool(policy == "Foreground")
    for finalizer in finalizers:
        if finalizer == FOREGROUND:
            return True
        if finalizer == ORPHAN:
            return False
    return False


def gc_finalizers(info: ResourceInfo, obj: Object, options: Object) -> tuple[bool, list[str]]:
    """``deletionFinalizersForGarbageCollection``: the object's finalizers with the garbage
    collector's two set as the options (then the existing ones, then the default) ask, and
    whether that changes them."""
    existing: list[str] = list(obj.get("metadata", {}).get("finalizers") or [])
    wanted = [f for f in existing if f not in (ORPHAN, FOREGROUND)]
    if _should_orphan(info, existing, options):
        wanted.append(ORPHAN)
    if _should_foreground(existing, options):
        wanted.append(FOREGROUND)
    if set(wanted) == set(existing):
        return False, existing
    return True, wanted


class PreconditionFailed(errors.StatusError):
    """A 409 for a ``DeleteOptions`` precondition that does not hold (never retried)."""


def _precondition_conflict(info: ResourceInfo, name: str, why: str) -> errors.StatusError:
    # rest.BeforeDelete names the kind, not the resource: `Operation cannot be fulfilled on
    # Job.batch "x": ...`.
    qualified = f"{info.kind}.{info.group}" if info.group else info.kind
    return PreconditionFailed(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified} "{name}": {why}',
        {"name": name, "group": info.group, "kind": info.kind},
    )


def _check_preconditions(info: ResourceInfo, obj: Object, options: Object) -> None:
    preconditions = options.get("preconditions") or {}
    metadata = obj.get("metadata", {})
    name = metadata.get("name", "")
    uid = preconditions.get("uid")
    if uid is not None and uid != metadata.get("uid"):
        raise _precondition_conflict(
            info,
            name,
            f"the UID in the precondition ({uid}) does not match the UID in record "
            f"({metadata.get('uid', '')}). The object might have been deleted and then recreated",
        )
    rv = preconditions.get("resourceVersion")
    if rv is not None and rv != metadata.get("resourceVersion"):
        raise _precondition_conflict(
            info,
            name,
            f"the ResourceVersion in the precondition ({rv}) does not match the "
            f"ResourceVersion in record ({metadata.get('resourceVersion', '')}). The object "
            "might have been modified",
        )


def _pod_grace(pod: Object, options: Object) -> int:
    """The pod strategy's ``CheckGracefulDelete``: the requested period, else the pod's
    ``terminationGracePeriodSeconds``; 0 for a pod never scheduled or already finished."""
    requested = options.get("gracePeriodSeconds")
    spec = pod.get("spec", {})
    if requested is not None:
        period = int(requested)
    else:
        period = int(spec.get("terminationGracePeriodSeconds", DEFAULT_POD_GRACE_S) or 0)
    if not spec.get("nodeName"):
        period = 0
    if pod.get("status", {}).get("phase") in ("Failed", "Succeeded"):
        period = 0
    return period


def _before_delete(info: ResourceInfo, obj: Object, options: Object) -> tuple[bool, bool]:
    """``rest.BeforeDelete`` on ``obj`` (changed in place): ``(graceful, pending)``, where
    graceful means a grace period was set now and pending that one already runs."""
    _check_preconditions(info, obj, options)
    grace = options.get("gracePeriodSeconds")
    if grace is not None and int(grace) < 0:
        options["gracePeriodSeconds"] = 1
    if info.group_resource != "pods":
        return False, False
    metadata = meta(obj)
    if metadata.get("deletionTimestamp"):
        current = metadata.get("deletionGracePeriodSeconds")
        if not current:
            return False, False
        requested = options.get("gracePeriodSeconds")
        if requested is None or int(requested) >= int(current):
            return False, True
        started = _epoch(metadata["deletionTimestamp"]) - int(current)
        metadata["deletionTimestamp"] = rfc3339(started + int(requested))
        metadata["deletionGracePeriodSeconds"] = int(requested)
        options["gracePeriodSeconds"] = int(requested)
        return True, False
    period = _pod_grace(obj, options)
    options["gracePeriodSeconds"] = period
    metadata["deletionTimestamp"] = rfc3339(time.time() + period)
    metadata["deletionGracePeriodSeconds"] = period
    if metadata.get("generation"):
        metadata["generation"] = int(metadata["generation"]) + 1
    return True, False


def _epoch(timestamp: str) -> float:
    return time.mktime(time.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone


def _mark_deleting(obj: Object) -> None:
    """``markAsDeleting``: deletion requested now, no grace period, generation bumped once."""
    metadata = meta(obj)
    if not metadata.get("deletionTimestamp") and metadata.get("generation"):
        metadata["generation"] = int(metadata["generation"]) + 1
    now = now_rfc3339()
    if not metadata.get("deletionTimestamp") or metadata["deletionTimestamp"] > now:
        metadata["deletionTimestamp"] = now
    metadata["deletionGracePeriodSeconds"] = 0


class DeleteVerbs(ClusterCore):
    """``delete`` and ``deletecollection`` of one cluster."""

    def _deleted_answer(self, info: ResourceInfo, obj: Object) -> RestResult:
        """``finalizeDelete``: the object or a success ``Status``."""
        if info.group_resource in RETURNS_DELETED_OBJECT:
            return RestResult(as_served(obj, info))
        metadata = obj.get("metadata", {})
        return RestResult(success_status(info, metadata.get("name", ""), metadata.get("uid", "")))

    async def delete(
        self, ctx: RequestContext, info: ResourceInfo, namespace: str, name: str, options: Object
    ) -> RestResult:
        """Delete ``name`` as ``options`` (a ``DeleteOptions``) ask: at once, or by setting
        ``deletionTimestamp`` while finalizers or a pod's grace period remain."""
        if "delete" not in info.verbs:
            raise errors.method_not_supported(info.group_resource, "delete")
        options = dict(options or {})
        validate_delete_options(options)
        if info.group_resource == "namespaces" and name in IMMORTAL_NAMESPACES:
            raise forbidden_reason("namespaces", name, "this namespace may not be deleted")
        key = object_key(info, namespace, name)
        for _ in range(16):
            current = self.store.get_latest(key)
            if current is None:
                raise errors.not_found(info.group_resource, name)
            try:
                return await self._delete_once(ctx, info, key, current, options)
            except PreconditionFailed:
                raise
            except errors.StatusError as error:
                if error.reason != "Conflict":
                    raise
                if (options.get("preconditions") or {}).get("resourceVersion") is not None:
                    raise
        raise errors.conflict(info.group_resource, name)

    async def _delete_once(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        key: ObjectKey,
        current: Object,
        options: Object,
    ) -> RestResult:
        obj = clone(current)
        rv = resource_version(current)
        if info.group_resource == "namespaces":
            started = await self._start_namespace_deletion(ctx, info, key, obj, options, rv)
            if started is not None:
                return started
        graceful, pending = _before_delete(info, obj, options)
        if pending:
            return RestResult(as_served(current, info))
        metadata = meta(obj)
        pending_finalizers = bool(metadata.get("finalizers"))
        changed, finalizers = gc_finalizers(info, obj, options)
        if graceful or pending_finalizers or changed:
            if changed:
                metadata["finalizers"] = finalizers
            pending_finalizers = bool(metadata.get("finalizers"))
            if not graceful and not pending_finalizers:
                return self._deleted_answer(info, await self._delete_stored(ctx, info, key, rv))
            if not graceful:
                _mark_deleting(obj)
            if ctx.dry_run or obj == current:
                # Nothing changed (a repeated delete): etcd3 writes nothing either.
                written = current if obj == current else obj
            else:
                written = await self.store.update(key, obj, rv)
                self._after_delete_write(info, written)
            if pending_finalizers or int(options.get("gracePeriodSeconds") or 0) > 0:
                return RestResult(as_served(written, info))
            rv = resource_version(written)
        return self._deleted_answer(info, await self._delete_stored(ctx, info, key, rv))

    def _after_delete_write(self, info: ResourceInfo, written: Object) -> None:
        """Tell the registry a CRD started terminating (creates of its objects stop)."""
        if info.group_resource == "customresourcedefinitions.apiextensions.k8s.io":
            self.registry.set_crd(written)

    async def _start_namespace_deletion(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        key: ObjectKey,
        ns: Object,
        options: Object,
        rv: int,
    ) -> RestResult | None:
        """The namespace REST's first step: ``deletionTimestamp``, phase ``Terminating`` and
        the GC finalizers; the namespace controller empties it and deletes it for good. None
        once ``spec.finalizers`` is empty (the ordinary deletion follows)."""
        _check_preconditions(info, ns, options)
        metadata = meta(ns)
        if not metadata.get("deletionTimestamp"):
            metadata["deletionTimestamp"] = now_rfc3339()
            metadata["deletionGracePeriodSeconds"] = 0
            ns.setdefault("status", {})["phase"] = TERMINATING
            changed, finalizers = gc_finalizers(info, ns, options)
            if changed:
                metadata["finalizers"] = finalizers
            written = ns if ctx.dry_run else await self.store.update(key, ns, rv)
            return RestResult(as_served(written, info))
        if ns.get("spec", {}).get("finalizers"):
            return RestResult(as_served(ns, info))
        return None

    async def _delete_stored(
        self, ctx: RequestContext, info: ResourceInfo, key: ObjectKey, expect_rv: int | None
    ) -> Object:
        """Remove the object from the store (or pretend to, for ``dryRun``); a CRD stops being
        served."""
        if ctx.dry_run:
            found = self.store.get_latest(key)
            if found is None:
                raise errors.not_found(info.group_resource, key.name)
            return found
        try:
            gone = await self.store.delete(key, expect_rv)
        except errors.StatusError as error:
            if error.reason == "NotFound":
                raise errors.not_found(info.group_resource, key.name) from None
            raise
        if info.group_resource == "customresourcedefinitions.apiextensions.k8s.io":
            self.registry.remove_crd(key.name)
        return gone

    async def delete_collection(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        namespace: str,
        options: Object,
        label_selector: str = "",
        field_selector: str = "",
    ) -> RestResult:
        """Delete every object the selectors match in ``namespace`` ("" for all), each as
        :meth:`delete` would; answers the list of what was matched."""
        if "deletecollection" not in info.verbs:
            raise errors.method_not_supported(info.group_resource, "deletecollection")
        validate_delete_options(dict(options or {}))
        matcher = build_matcher(info, label_selector, field_selector)
        scope = namespace if info.namespaced and namespace else None
        items, list_rv = self.store.list(storage_resource(info), scope)
        served = [as_served(o, info) for o in items]
        matched = [o for o in served if matcher is None or matcher(o)]
        for obj in matched:
            metadata: dict[str, Any] = obj.get("metadata", {})
            try:
                await self.delete(
                    ctx, info, metadata.get("namespace", ""), metadata["name"], dict(options or {})
                )
            except errors.StatusError as error:
                if error.code != 404:
                    raise
        body: Object = {
            "kind": info.list_kind,
            "apiVersion": info.group_version,
            "metadata": {"resourceVersion": str(list_rv)},
            "items": matched,
        }
        return RestResult(body)
