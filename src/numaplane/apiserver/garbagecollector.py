"""The garbage collector (``pkg/controller/garbagecollector``) of one cluster, inside the server
process, and the loop that runs it with the lifecycle controllers (:mod:`.lifecycle`) over the
store's events, writing through the REST verbs.

It also runs the root CA publisher and the tokens controller's cleanup (:mod:`.rootca`).

The garbage collector follows ``ownerReferences``: dependents whose owners are all gone are
deleted (in the background, or in the foreground when an owner waits for them), references to
gone owners are dropped while another owner lives; an owner deleted in the foreground keeps its
``foregroundDeletion`` finalizer until no dependent with ``blockOwnerDeletion`` remains, and
one deleted with ``orphan`` has its dependents' references removed, then that finalizer.

The work is level-triggered: an event only names what to look at, and each step reads the
latest state, so a step that finds nothing to do is harmless and a missed step is redone on the
next event or at the resync when the controllers start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any, Final

from numaplane.apiserver import errors
from numaplane.apiserver.lifecycle import (
    CONTROLLER,
    Lifecycle,
    deleting,
    finalizers_of,
    remove_finalizer,
    served_info,
)
from numaplane.apiserver.registry import CRD_RESOURCE
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest_common import Object, clone, meta, storage_resource
from numaplane.apiserver.rest_core import TERMINATING, ClusterCore
from numaplane.apiserver.rootca import ROOT_CA_CONFIGMAP, RootCAAndTokens, token_secret_account
from numaplane.apiserver.storage import ObjectKey, WatchEvent

LOG = logging.getLogger(__name__)

#: How often Events past their TTL are looked for.
EVENT_SWEEP_S: Final = 60.0
ORPHAN: Final = "orphan"
FOREGROUND: Final = "foregroundDeletion"

Work = tuple[str, Any]


def _owner_uids(obj: Object | None) -> set[str]:
    if obj is None:
        return set()
    refs = obj.get("metadata", {}).get("ownerReferences") or ()
    return {ref.get("uid", "") for ref in refs}


def _key_of(obj: Object, resource: str) -> ObjectKey:
    metadata = obj.get("metadata", {})
    return ObjectKey(resource, metadata.get("namespace", ""), metadata.get("name", ""))


class Controllers:
    """The in-process controllers of one cluster (see the module docstring)."""

    def __init__(self, cluster: ClusterCore, root_ca: bytes | None = None) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.lifecycle = Lifecycle(cluster)
        self.rootca_tokens = RootCAAndTokens(cluster, root_ca)
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
        """Create the system objects, resync everything, then follow the store."""
        await self.lifecycle.bootstrap()
        # Publish the CA in the namespaces there already are before serving, as the system
        # namespaces are created before serving: a client of a server just started finds
        # them complete (new namespaces get theirs from the work queue, as upstream).
        for ns in self.store.list("namespaces")[0]:
            if not deleting(ns):
                await self.rootca_tokens.publish_root_ca(ns["metadata"]["name"])
        rv = self._resync()
        self._tasks = [
            asyncio.create_task(self._follow(rv), name="controllers-watch"),
            asyncio.create_task(self._work(), name="controllers-work"),
            asyncio.create_task(self._expire_events(), name="controllers-event-ttl"),
        ]

    async def _expire_events(self) -> None:
        while True:
            await asyncio.sleep(EVENT_SWEEP_S)
            try:
                await self.lifecycle.expire_events(time.time())
            except Exception:  # a bug must not stop the sweeps
                LOG.exception("event expiry failed")

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
        if not self._tasks:
            return  # not running: nothing will catch up
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
            try:
                watcher = self.store.watch(None, None, rv)
            except errors.StatusError:
                rv = self._resync()  # compacted past us while starting: from the state
                await asyncio.sleep(0)
                continue
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
            if resource == "serviceaccounts":
                self._enqueue(("sa-tokens", (key.namespace, key.name, uid)))
            if resource == "configmaps" and key.name == ROOT_CA_CONFIGMAP:
                self._enqueue(("root-ca", key.namespace))
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
        if deleting(obj) and {ORPHAN, FOREGROUND} & set(finalizers_of(obj)):
            self._enqueue(("owner", key))
        if resource == "namespaces" and (kind == "ADDED" or deleting(obj)):
            self._enqueue(("namespace", key.name))
        if resource == CRD_RESOURCE and deleting(obj):
            self._enqueue(("crd", key.name))
        self._observe_rootca_tokens(resource, key, obj, kind)
        del prev

    def _observe_rootca_tokens(self, resource: str, key: ObjectKey, obj: Object, kind: str) -> None:
        """The publisher's triggers (a namespace added, or updated while Active; its
        ConfigMap changed) and the tokens controller's (a token Secret written)."""
        if resource == "namespaces":
            active = obj.get("status", {}).get("phase", "Active") != TERMINATING
            if kind == "ADDED" or (active and not deleting(obj)):
                self._enqueue(("root-ca", key.name))
        elif resource == "configmaps" and key.name == ROOT_CA_CONFIGMAP:
            self._enqueue(("root-ca", key.namespace))
        elif resource == "secrets" and token_secret_account(obj) is not None:
            self._enqueue(("token-secret", key))

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
            await self.lifecycle.sync_namespace(what)
        elif kind == "crd":
            await self.lifecycle.sync_crd(what)
        elif kind == "root-ca":
            await self.rootca_tokens.publish_root_ca(what)
        elif kind == "token-secret":
            await self.rootca_tokens.sync_token_secret(what)
        elif kind == "sa-tokens":
            await self.rootca_tokens.delete_tokens_of(*what)

    def _info(self, resource: str) -> ResourceInfo | None:
        return served_info(self.cluster, resource)

    def _owner_state(self, obj: Object, ref: dict[str, Any]) -> str:
        """``solid``, ``dangling`` or ``waiting`` (deleting its dependents in the
        foreground) for one ownerReference of ``obj``."""
        group, _, _ = str(ref.get("apiVersion", "")).rpartition("/")
        info = self.cluster.registry.kind_in_group(group, str(ref.get("kind", "")))
        if info is None:
            return "solid"  # a kind not served cannot be checked; never delete on a guess
        namespace = obj.get("metadata", {}).get("namespace", "") if info.namespaced else ""
        owner = self.store.get_latest(
            ObjectKey(storage_resource(info), namespace, str(ref.get("name", "")))
        )
        if owner is None or owner.get("metadata", {}).get("uid") != ref.get("uid"):
            return "dangling"
        if deleting(owner) and FOREGROUND in finalizers_of(owner):
            return "waiting"
        return "solid"

    async def _attempt_dependent(self, key: ObjectKey) -> None:
        """``attemptToDeleteItem``: delete a dependent whose owners are gone or waiting for
        it, or drop its references to them while another owner holds it."""
        obj = self.store.get_latest(key)
        info = self._info(key.resource)
        if obj is None or info is None:
            return
        if deleting(obj) and FOREGROUND not in finalizers_of(obj):
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
        elif ORPHAN in finalizers_of(obj):
            policy = "Orphan"
        elif FOREGROUND in finalizers_of(obj):
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

    async def _process_owner(self, key: ObjectKey) -> None:
        """An owner being deleted: orphan its dependents, or wait for the blocking ones."""
        obj = self.store.get_latest(key)
        if obj is None or not deleting(obj):
            return
        uid = obj.get("metadata", {}).get("uid", "")
        dependents = sorted(self._dependents.get(uid, set()))
        finalizers = finalizers_of(obj)
        if ORPHAN in finalizers:
            for dependent in dependents:
                info = self._info(dependent.resource)
                if info is not None:
                    await self._drop_owner_refs(info, dependent, {uid})
            await remove_finalizer(self.cluster, key, ORPHAN)
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
            if not deleting(dep):
                self._enqueue(("dependent", dependent))
        if not blocking:
            await remove_finalizer(self.cluster, key, FOREGROUND)
