"""The controllers kube-controller-manager and kube-apiserver run over one cluster's objects,
here inside the server process, reading the store's events and writing through the REST verbs:

- the garbage collector (``pkg/controller/garbagecollector``): ``ownerReferences`` with
  background deletion of dependents whose owners are all gone, foreground deletion (dependents
  first, the owner's ``foregroundDeletion`` finalizer removed once no dependent with
  ``blockOwnerDeletion`` remains) and orphaning (references removed, then the ``orphan``
  finalizer);
- the namespace controller: a Terminating namespace is emptied, then its ``kubernetes``
  finalizer removed and the namespace deleted;
- the service-account controller: a ``default`` ServiceAccount in every namespace;
- the system namespaces (``default``, ``kube-system``, ``kube-public``, ``kube-node-lease``);
- the apiextensions finalizer: a deleted CRD's objects go first, then the CRD.

The work is level-triggered: an event only names what to look at, and each step reads the
latest state, so a step that finds nothing to do is harmless and a missed step is redone on the
next event or at the resync when the controllers start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Final

from numaplane.apiserver import errors
from numaplane.apiserver.registry import CRD_RESOURCE
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest_common import Object, RequestContext, clone, meta, now_rfc3339
from numaplane.apiserver.rest_core import TERMINATING, ClusterCore
from numaplane.apiserver.storage import ObjectKey, WatchEvent
from numaplane.apiserver.user import UserInfo

LOG = logging.getLogger(__name__)

SYSTEM_NAMESPACES: Final = ("default", "kube-system", "kube-public", "kube-node-lease")
ORPHAN: Final = "orphan"
FOREGROUND: Final = "foregroundDeletion"
NAMESPACE_FINALIZER: Final = "kubernetes"
CRD_CLEANUP_FINALIZER: Final = "customresourcecleanup.apiextensions.k8s.io"
CONTROLLER = RequestContext(
    UserInfo("system:kube-controller-manager", ("system:authenticated",)), field_manager=""
)

Work = tuple[str, Any]


def _owner_uids(obj: Object | None) -> set[str]:
    if obj is None:
        return set()
    refs = obj.get("metadata", {}).get("ownerReferences") or ()
    return {ref.get("uid", "") for ref in refs}


def _finalizers(obj: Object) -> list[str]:
    return list(obj.get("metadata", {}).get("finalizers") or ())


def _deleting(obj: Object) -> bool:
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))


def _key_of(obj: Object, resource: str) -> ObjectKey:
    metadata = obj.get("metadata", {})
    return ObjectKey(resource, metadata.get("namespace", ""), metadata.get("name", ""))


class Controllers:
    """The in-process controllers of one cluster (see the module docstring)."""

    def __init__(self, cluster: ClusterCore) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self._queue: asyncio.Queue[Work] = asyncio.Queue()
        self._queued: set[Work] = set()
        self._dependents: dict[str, set[ObjectKey]] = {}
        self._owners_of: dict[ObjectKey, set[str]] = {}
        self._by_uid: dict[str, ObjectKey] = {}
        self._seen_rv = 0
        self._busy = False
        self._changed = asyncio.Condition()
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Create the system namespaces, resync everything, then follow the store."""
        for name in SYSTEM_NAMESPACES:
            await self._ensure_namespace(name)
        rv = self._resync()
        self._tasks = [
            asyncio.create_task(self._follow(rv), name="controllers-watch"),
            asyncio.create_task(self._work(), name="controllers-work"),
        ]

    async def stop(self) -> None:
        """Stop following the store and working."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def settle(self) -> None:
        """Return once every write so far has been seen and no work is left (tests and
        shutdown use it; a controller step's own writes are followed too)."""
        async with self._changed:
            while True:
                done = (
                    self._seen_rv >= self.store.current_rv()
                    and self._queue.empty()
                    and not self._busy
                )
                if done:
                    return
                await self._changed.wait()

    async def _ensure_namespace(self, name: str) -> None:
        if self.store.get_latest(ObjectKey("namespaces", "", name)) is not None:
            return
        info = self._info("namespaces")
        if info is None:
            return
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        with contextlib.suppress(errors.StatusError):
            await self.cluster.create(CONTROLLER, info, "", body)

    def _resync(self) -> int:
        """Index every stored object and queue whatever may need work; the rv it read at."""
        rv = self.store.current_rv()
        for info in self.cluster.registry.storage_resources():
            items, _ = self.store.list(info.group_resource, None)
            for obj in items:
                self._observe(info.group_resource, obj, None, "ADDED")
        self._seen_rv = rv
        return rv

    async def _follow(self, rv: int) -> None:
        while True:
            watcher = self.store.watch(None, None, rv)
            try:
                while True:
                    event = await watcher.next(None)
                    if event is None:
                        if watcher.closed:
                            break
                        continue
                    self._on_event(event)
                    rv = event.resource_version
                    async with self._changed:
                        self._seen_rv = max(self._seen_rv, rv)
                        self._changed.notify_all()
            except errors.StatusError:
                pass
            finally:
                watcher.close()
            # The watch ended (too slow, or compacted past us): start over from the state.
            rv = self._resync()

    def _on_event(self, event: WatchEvent) -> None:
        self._observe(event.key.resource, event.object, event.prev_object, event.type)

    def _observe(self, resource: str, obj: Object, prev: Object | None, kind: str) -> None:
        """Update the owner index from one object's state and queue the work it implies."""
        key = _key_of(obj, resource)
        uid = obj.get("metadata", {}).get("uid", "")
        if kind == "DELETED":
            self._by_uid.pop(uid, None)
            for owner in self._owners_of.pop(key, set()):
                self._dependents.get(owner, set()).discard(key)
                self._enqueue(("owner-uid", owner))
            for dependent in self._dependents.pop(uid, set()):
                self._enqueue(("dependent", dependent))
            if key.namespace:
                self._enqueue(("namespace", key.namespace))
            if resource == "serviceaccounts" and key.name == "default":
                self._enqueue(("namespace", key.namespace))
            crd = self.cluster.registry.crd_for(resource)
            if crd is not None:
                self._enqueue(("crd", crd.get("metadata", {}).get("name", "")))
            return
        self._by_uid[uid] = key
        owners = _owner_uids(obj)
        previous = self._owners_of.get(key, set())
        for owner in previous - owners:
            self._dependents.get(owner, set()).discard(key)
        for owner in owners:
            self._dependents.setdefault(owner, set()).add(key)
        if owners:
            self._owners_of[key] = owners
            self._enqueue(("dependent", key))
        else:
            self._owners_of.pop(key, None)
        if _deleting(obj) and {ORPHAN, FOREGROUND} & set(_finalizers(obj)):
            self._enqueue(("owner", key))
        if resource == "namespaces" and (kind == "ADDED" or _deleting(obj)):
            self._enqueue(("namespace", key.name))
        if resource == CRD_RESOURCE and _deleting(obj):
            self._enqueue(("crd", key.name))
        del prev

    def _enqueue(self, work: Work) -> None:
        if work not in self._queued:
            self._queued.add(work)
            self._queue.put_nowait(work)

    async def _work(self) -> None:
        while True:
            work = await self._queue.get()
            self._queued.discard(work)
            self._busy = True
            try:
                await self._step(work)
            except errors.StatusError as error:
                LOG.debug("controller step %s: %s", work, error)
            except Exception:  # a bug must not stop every later step of the cluster
                LOG.exception("controller step %s failed", work)
            finally:
                self._busy = False
                async with self._changed:
                    self._changed.notify_all()

    async def _step(self, work: Work) -> None:
        kind, what = work
        if kind == "dependent":
            await self._attempt_dependent(what)
        elif kind == "owner":
            await self._process_owner(what)
        elif kind == "owner-uid":
            key = self._by_uid.get(what)
            if key is not None:
                await self._process_owner(key)
        elif kind == "namespace":
            await self._sync_namespace(what)
        elif kind == "crd":
            await self._sync_crd(what)

    def _info(self, resource: str) -> ResourceInfo | None:
        served = self.cluster.registry.versions_of(resource)
        return served[0] if served else None

    def _owner_state(self, obj: Object, ref: dict[str, Any]) -> str:
        """``solid``, ``dangling`` or ``waiting`` (deleting its dependents in the
        foreground) for one ownerReference of ``obj``."""
        group, _, _ = str(ref.get("apiVersion", "")).rpartition("/")
        info = self.cluster.registry.kind_in_group(group, str(ref.get("kind", "")))
        if info is None:
            return "solid"  # a kind not served cannot be checked; never delete on a guess
        namespace = obj.get("metadata", {}).get("namespace", "") if info.namespaced else ""
        owner = self.store.get_latest(
            ObjectKey(info.group_resource, namespace, str(ref.get("name", "")))
        )
        if owner is None or owner.get("metadata", {}).get("uid") != ref.get("uid"):
            return "dangling"
        if _deleting(owner) and FOREGROUND in _finalizers(owner):
            return "waiting"
        return "solid"

    async def _attempt_dependent(self, key: ObjectKey) -> None:
        """``attemptToDeleteItem``: delete a dependent whose owners are gone or waiting for
        it, or drop its references to them while another owner holds it."""
        obj = self.store.get_latest(key)
        info = self._info(key.resource)
        if obj is None or info is None:
            return
        if _deleting(obj) and FOREGROUND not in _finalizers(obj):
            return
        refs = obj.get("metadata", {}).get("ownerReferences") or []
        if not refs:
            return
        states = {ref.get("uid", ""): self._owner_state(obj, ref) for ref in refs}
        solid = [uid for uid, state in states.items() if state == "solid"]
        gone = {uid for uid, state in states.items() if state != "solid"}
        if solid:
            if gone:
                await self._drop_owner_refs(info, key, gone)
            return
        if "waiting" in states.values() and self._dependents.get(
            obj.get("metadata", {}).get("uid", "")
        ):
            policy = "Foreground"
        elif ORPHAN in _finalizers(obj):
            policy = "Orphan"
        elif FOREGROUND in _finalizers(obj):
            policy = "Foreground"
        else:
            policy = "Background"
        options = {
            "propagationPolicy": policy,
            "preconditions": {"uid": obj.get("metadata", {}).get("uid", "")},
        }
        with contextlib.suppress(errors.StatusError):
            await self.cluster.delete(CONTROLLER, info, key.namespace, key.name, options)

    async def _drop_owner_refs(self, info: ResourceInfo, key: ObjectKey, uids: set[str]) -> None:
        for _ in range(8):
            obj = self.store.get_latest(key)
            if obj is None:
                return
            refs = obj.get("metadata", {}).get("ownerReferences") or []
            kept = [ref for ref in refs if ref.get("uid") not in uids]
            if len(kept) == len(refs):
                return
            new = clone(obj)
            if kept:
                meta(new)["ownerReferences"] = kept
            else:
                meta(new).pop("ownerReferences", None)
            try:
                await self.cluster.update(CONTROLLER, info, key.namespace, key.name, new)
                return
            except errors.StatusError as error:
                if error.reason != "Conflict":
                    raise

    async def _remove_finalizer(self, key: ObjectKey, finalizer: str) -> None:
        info = self._info(key.resource)
        if info is None:
            return
        for _ in range(8):
            obj = self.store.get_latest(key)
            if obj is None or finalizer not in _finalizers(obj):
                return
            new = clone(obj)
            meta(new)["finalizers"] = [f for f in _finalizers(obj) if f != finalizer]
            try:
                await self.cluster.update(CONTROLLER, info, key.namespace, key.name, new)
                return
            except errors.StatusError as error:
                if error.reason != "Conflict":
                    raise

    async def _process_owner(self, key: ObjectKey) -> None:
        """An owner being deleted: orphan its dependents, or wait for the blocking ones."""
        obj = self.store.get_latest(key)
        if obj is None or not _deleting(obj):
            return
        uid = obj.get("metadata", {}).get("uid", "")
        dependents = sorted(self._dependents.get(uid, set()))
        finalizers = _finalizers(obj)
        if ORPHAN in finalizers:
            for dependent in dependents:
                info = self._info(dependent.resource)
                if info is not None:
                    await self._drop_owner_refs(info, dependent, {uid})
            await self._remove_finalizer(key, ORPHAN)
            return
        if FOREGROUND not in finalizers:
            return
        blocking = False
        for dependent in dependents:
            dep = self.store.get_latest(dependent)
            if dep is None:
                continue
            for ref in dep.get("metadata", {}).get("ownerReferences") or ():
                if ref.get("uid") == uid and ref.get("blockOwnerDeletion"):
                    blocking = True
            if not _deleting(dep):
                self._enqueue(("dependent", dependent))
        if not blocking:
            await self._remove_finalizer(key, FOREGROUND)

    async def _sync_namespace(self, name: str) -> None:
        """The service-account controller for a live namespace, the namespace controller for a
        terminating one."""
        ns = self.store.get_latest(ObjectKey("namespaces", "", name))
        if ns is None:
            return
        if not _deleting(ns):
            await self._ensure_default_service_account(name)
            return
        if ns.get("status", {}).get("phase") != TERMINATING:
            return
        remaining = 0
        for info in self.cluster.registry.storage_resources():
            if not info.namespaced:
                continue
            items, _ = self.store.list(info.group_resource, name)
            for obj in items:
                remaining += 1
                if _deleting(obj):
                    continue
                metadata = obj.get("metadata", {})
                with contextlib.suppress(errors.StatusError):
                    await self.cluster.delete(
                        CONTROLLER,
                        info,
                        name,
                        metadata.get("name", ""),
                        {"propagationPolicy": "Background"},
                    )
        if remaining:
            return
        await self._finalize_namespace(name)

    async def _finalize_namespace(self, name: str) -> None:
        """Remove the ``kubernetes`` finalizer (the ``namespaces/finalize`` step), then delete
        the emptied namespace."""
        key = ObjectKey("namespaces", "", name)
        ns = self.store.get_latest(key)
        info = self._info("namespaces")
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
        info = self._info("serviceaccounts")
        if info is None:
            return
        body = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": namespace},
        }
        with contextlib.suppress(errors.StatusError):
            await self.cluster.create(CONTROLLER, info, namespace, body)

    async def _sync_crd(self, name: str) -> None:
        """A deleted CRD: its Terminating condition, its objects deleted, then the CRD."""
        key = ObjectKey(CRD_RESOURCE, "", name)
        crd = self.store.get_latest(key)
        if crd is None or not _deleting(crd):
            return
        await self._mark_crd_terminating(key, crd)
        resource = self.cluster.registry.crd_resource(crd)
        served = self.cluster.registry.versions_of(resource)
        items, _ = self.store.list(resource, None)
        if items and served:
            for obj in items:
                if _deleting(obj):
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
        if items:
            # Not served any more (never Established): nothing can hold them back.
            for obj in items:
                with contextlib.suppress(errors.StatusError):
                    await self.store.delete(_key_of(obj, resource), None)
        await self._remove_finalizer(key, CRD_CLEANUP_FINALIZER)

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
