"""An informer, as client-go's shared informer does it for one resource: list (paginated), then
watch from the list's resourceVersion with bookmarks, keeping every object in an in-memory store
and telling handlers what was added, updated and deleted.

A watch that breaks is resumed from the last resourceVersion seen, after a backoff; a
resourceVersion the server compacted away (410 Gone) makes it list again, and the difference
between the store and the fresh list is delivered as adds, updates and deletes, so a handler sees
the same sequence of states it would have seen had the watch never broken (minus the
intermediate states the compaction erased).

Handlers are plain synchronous callables run in the event loop's thread, one event at a time, in
resourceVersion order: a handler must not block (controllers enqueue a key and return).
"""

from __future__ import annotations

import asyncio
import builtins
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError, KubeError

log = logging.getLogger(__name__)

Obj = dict[str, Any]


def object_key(obj: Obj) -> str:
    """``namespace/name``, or ``name`` for a cluster-scoped object (client-go's
    ``MetaNamespaceKeyFunc``)."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    name = str(meta.get("name") or "")
    return f"{namespace}/{name}" if namespace else name


def split_key(key: str) -> tuple[str, str]:
    """``(namespace, name)`` of an :func:`object_key` (namespace ``""`` when cluster-scoped)."""
    namespace, _, name = key.rpartition("/")
    return namespace, name


def _noop_add(obj: Obj) -> None:
    pass


def _noop_update(old: Obj, new: Obj) -> None:
    pass


@dataclass(frozen=True)
class EventHandler:
    """What to call when an object appears, changes or goes (client-go's
    ``ResourceEventHandlerFuncs``); each is optional."""

    on_add: Callable[[Obj], None] = _noop_add
    on_update: Callable[[Obj, Obj], None] = _noop_update
    on_delete: Callable[[Obj], None] = _noop_add


def _rv(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class Informer:
    """List+watch one resource into an in-memory store; relist on 410; reconnect with backoff."""

    def __init__(
        self,
        client: KubeClient,
        api_version: str,
        resource: str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
        backoff_initial: float = 0.8,
        backoff_max: float = 30.0,
        on_error: Callable[[KubeError], None] | None = None,
    ) -> None:
        self.client = client
        self.api_version = api_version
        self.resource = resource
        self.namespace = namespace
        self._label_selector = label_selector or ""
        self._field_selector = field_selector or ""
        self._page_size = page_size
        # client-go's reflector backs off 800ms doubling to 30s between failed list/watch calls.
        self._backoff_initial = backoff_initial
        self._backoff_max = backoff_max
        # Told of every failed list or watch (not of a 410, which only relists): what watches
        # a remote cluster uses it to see the connection drop (MultiKueue's "watch ended").
        self._on_error = on_error
        self._store: dict[str, Obj] = {}
        self._handlers: builtins.list[EventHandler] = []
        self._synced = asyncio.Event()
        self._rv = ""
        #: How many times the collection was listed (the first list, then one per 410).
        self.list_count = 0

    def add_handler(self, handler: EventHandler) -> None:
        """Call ``handler`` for every later event; objects already in the store are delivered to
        it as adds first (as client-go's ``AddEventHandler`` on a started informer)."""
        self._handlers.append(handler)
        for obj in builtins.list(self._store.values()):
            self._call(handler.on_add, obj)

    @property
    def synced(self) -> bool:
        """The first list has been delivered."""
        return self._synced.is_set()

    @property
    def resource_version(self) -> str:
        """The last resourceVersion seen (list, event or bookmark)."""
        return self._rv

    async def wait_synced(self) -> None:
        """Return once the first list has been delivered to the handlers."""
        await self._synced.wait()

    def get(self, namespace: str | None, name: str) -> Obj | None:
        """The stored object, or ``None``."""
        return self._store.get(f"{namespace}/{name}" if namespace else name)

    def get_by_key(self, key: str) -> Obj | None:
        """The stored object with :func:`object_key` ``key``, or ``None``."""
        return self._store.get(key)

    def list(self, namespace: str | None = None) -> builtins.list[Obj]:
        """Every stored object (in ``namespace`` only, when given)."""
        if namespace is None:
            return builtins.list(self._store.values())
        return [
            o
            for o in self._store.values()
            if (o.get("metadata") or {}).get("namespace") == namespace
        ]

    def keys(self) -> builtins.list[str]:
        """Every stored object's key."""
        return builtins.list(self._store)

    # ----- the loop -----

    async def run(self) -> None:
        """List and watch until cancelled."""
        backoff = self._backoff_initial
        while True:
            try:
                if not self._rv:
                    await self._relist()
                backoff = self._backoff_initial
                await self._watch()
            except ApiError as err:
                if err.is_gone:
                    # The resourceVersion was compacted away: list again now (no backoff; the
                    # server is answering), then watch from the new list.
                    log.info("%s: %s; listing again", self.resource, err.message)
                    self._rv = ""
                    continue
                log.warning("%s: list/watch failed: %s", self.resource, err)
                self._failed(err)
            except KubeError as err:
                log.info("%s: list/watch failed: %s", self.resource, err)
                self._failed(err)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self._backoff_max)

    def _failed(self, err: KubeError) -> None:
        if self._on_error is not None:
            try:
                self._on_error(err)
            except Exception:
                log.exception("%s: error handler failed", self.resource)

    async def _relist(self) -> None:
        items, rv = await self.client.list_all(
            self.api_version,
            self.resource,
            self.namespace,
            label_selector=self._label_selector,
            field_selector=self._field_selector,
            page_size=self._page_size,
        )
        self.list_count += 1
        self._replace(items)
        self._rv = rv
        self._synced.set()

    def _replace(self, items: builtins.list[Obj]) -> None:
        """Make the store the list ``items``, delivering the difference."""
        fresh = {object_key(o): o for o in items}
        for key, old in builtins.list(self._store.items()):
            if key not in fresh:
                del self._store[key]
                self._dispatch("delete", old, None)
        for key, obj in fresh.items():
            old_obj = self._store.get(key)
            self._store[key] = obj
            if old_obj is None:
                self._dispatch("add", obj, None)
            elif _rv(old_obj) != _rv(obj):
                self._dispatch("update", old_obj, obj)

    async def _watch(self) -> None:
        stream = self.client.watch(
            self.api_version,
            self.resource,
            self.namespace,
            resource_version=self._rv,
            label_selector=self._label_selector,
            field_selector=self._field_selector,
            allow_bookmarks=True,
            reconnect=True,
        )
        try:
            async for event in stream:
                obj = event.object
                rv = _rv(obj)
                if event.type == "BOOKMARK":
                    if rv:
                        self._rv = rv
                    continue
                key = object_key(obj)
                old = self._store.get(key)
                if event.type == "DELETED":
                    if old is not None:
                        del self._store[key]
                        self._dispatch("delete", obj, None)
                else:
                    self._store[key] = obj
                    if old is None:
                        self._dispatch("add", obj, None)
                    else:
                        self._dispatch("update", old, obj)
                if rv:
                    self._rv = rv
        finally:
            await stream.aclose()

    def _dispatch(self, kind: str, obj: Obj, new: Obj | None) -> None:
        for handler in self._handlers:
            if kind == "add":
                self._call(handler.on_add, obj)
            elif kind == "delete":
                self._call(handler.on_delete, obj)
            else:
                assert new is not None
                self._call(handler.on_update, obj, new)

    def _call(self, fn: Callable[..., None], *args: Obj) -> None:
        # A failing handler must not stop the informer (nor the other handlers): log and go on,
        # as client-go's processorListener does via utilruntime.HandleCrash.
        try:
            fn(*args)
        except Exception:
            log.exception("%s: event handler failed", self.resource)
