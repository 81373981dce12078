"""Get, list and watch, as kube-apiserver serves them: label and field selectors, pagination with
opaque continue tokens, the ``resourceVersion``/``resourceVersionMatch`` rules of
``ListOptions`` and of the watch cache, and watches that turn selector transitions into
``ADDED``/``DELETED`` events and send bookmarks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Final

from numaplane.apiserver import errors
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest_common import (
    Object,
    RequestContext,
    RestResult,
    as_served,
    object_key,
    storage_resource,
)
from numaplane.apiserver.rest_core import ClusterCore
from numaplane.apiserver.rest_listopts import (
    ExpiredContinue,
    Matcher,
    after_start,
    build_matcher,
    decode_continue,
    encode_continue,
    parse_rv,
    start_key,
    validate_list_options,
    validate_watch_options,
)
from numaplane.apiserver.rest_sub import scale_paths, to_scale
from numaplane.apiserver.storage import Watcher, too_large_resource_version

#: How often an idle watch that allows bookmarks gets one (the watch cache's frequency).
BOOKMARK_INTERVAL_S: Final = 60.0


def _strip_type(obj: Object) -> Object:
    """A list item of a built-in kind, which carries no ``kind``/``apiVersion`` of its own."""
    stripped = dict(obj)
    stripped.pop("kind", None)
    stripped.pop("apiVersion", None)
    return stripped


class ReadVerbs(ClusterCore):
    """``get``, ``list`` and ``watch`` of one cluster."""

    def get(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        namespace: str,
        name: str,
        subresource: str = "",
    ) -> RestResult:
        """The object ``name`` (its ``status`` subresource is the same object)."""
        del ctx
        if "get" not in info.verbs:
            raise errors.method_not_supported(info.group_resource, "get")
        if subresource and subresource not in info.subresources:
            raise errors.StatusError(
                404, "NotFound", "the server could not find the requested resource"
            )
        obj = self.store.get(object_key(info, namespace, name))
        if obj is None:
            raise errors.not_found(info.group_resource, name)
        if subresource == "scale":
            return RestResult(to_scale(obj, scale_paths(info)))
        return RestResult(as_served(obj, info))

    def list(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        namespace: str,
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> RestResult:
        """A ``<Kind>List`` of the objects in ``namespace`` ("" for all) that match the
        selectors, paginated by ``limit``/``continue_``."""
        del ctx
        if "list" not in info.verbs:
            raise errors.method_not_supported(info.group_resource, "list")
        validate_list_options(resource_version, resource_version_match, continue_)
        matcher = build_matcher(info, label_selector, field_selector)
        scope = namespace if info.namespaced and namespace else None
        resource = storage_resource(info)
        start: tuple[str, str] | None = None
        paginate = limit > 0 and resource_version != "0"
        current = self.store.current_rv()
        if continue_:
            if resource_version not in ("", "0"):
                raise errors.bad_request(
                    "specifying resource version is not allowed when using continue"
                )
            token_rv, token_start = decode_continue(continue_)
            start = after_start(info, namespace, token_start)
            paginate = limit > 0
            if token_rv < 0:
                items, list_rv = self.store.list(resource, scope)
            else:
                try:
                    items = self.store.list_at(resource, scope, token_rv)
                except errors.StatusError as error:
                    if error.code != 410:
                        raise
                    raise ExpiredContinue(encode_continue(-1, token_start)) from None
                list_rv = token_rv
        elif resource_version in ("", "0"):
            items, list_rv = self.store.list(resource, scope)
        else:
            wanted = parse_rv(resource_version)
            if wanted > current:
                raise too_large_resource_version(wanted, current)
            if resource_version_match == "Exact":
                items = self.store.list_at(resource, scope, wanted)
                list_rv = wanted
            else:
                items, list_rv = self.store.list(resource, scope)
        if start is not None:
            items = [o for o in items if _sort_key(o) > start]
        items = [as_served(o, info) for o in items]
        if matcher is not None:
            items = [o for o in items if matcher(o)]
        list_meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
        if paginate and len(items) > limit:
            remaining = len(items) - limit
            items = items[:limit]
            list_meta["continue"] = encode_continue(list_rv, start_key(info, namespace, items[-1]))
            if matcher is None:
                list_meta["remainingItemCount"] = remaining
        builtin = self.registry.is_builtin(info)
        served = [_strip_type(o) for o in items] if builtin else items

        body: Object = {
            "kind": info.list_kind,
            "apiVersion": info.group_version,
            "metadata": list_meta,
            "items": served,
        }
        return RestResult(body)

    def watch(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        namespace: str,
        *,
        label_selector: str = "",
        field_selector: str = "",
        resource_version: str = "",
        allow_bookmarks: bool = False,
        resource_version_match: str = "",
        send_initial_events: bool | None = None,
        bookmark_interval_s: float = BOOKMARK_INTERVAL_S,
    ) -> AsyncIterator[tuple[str, Object]]:
        """The events of ``info`` objects in ``namespace`` ("" for all) matching the selectors:
        the current state as ``ADDED`` for resourceVersion "" or "0" (or with
        ``send_initial_events``, then a bookmark annotated ``k8s.io/initial-events-end``),
        else every change after it; a compacted resourceVersion is one ``ERROR`` event (410),
        as the watch cache answers. Bad options and selectors raise at once (400, 422)."""
        del ctx
        if "watch" not in info.verbs:
            raise errors.method_not_supported(info.group_resource, "watch")
        validate_watch_options(resource_version_match, send_initial_events)
        matcher = build_matcher(info, label_selector, field_selector)
        wanted = 0 if resource_version in ("", "0") else parse_rv(resource_version)
        from_rv: int | None = wanted or None
        if send_initial_events:
            if wanted > self.store.current_rv():
                raise too_large_resource_version(wanted, self.store.current_rv())
            from_rv = None
        scope = namespace if info.namespaced and namespace else None
        start_rv = from_rv if from_rv is not None else self.store.current_rv()
        try:
            watcher = self.store.watch(storage_resource(info), scope, from_rv)
        except errors.StatusError as error:
            return _error_stream(error)
        return _event_stream(
            info,
            watcher,
            matcher,
            start_rv,
            allow_bookmarks,
            bookmark_interval_s,
            bool(send_initial_events) and allow_bookmarks,
        )


def _sort_key(obj: Object) -> tuple[str, str]:
    metadata = obj.get("metadata", {})
    return metadata.get("namespace", ""), metadata.get("name", "")


async def _error_stream(error: errors.StatusError) -> AsyncIterator[tuple[str, Object]]:
    yield "ERROR", error.status()


def _bookmark(info: ResourceInfo, rv: int, initial_end: bool = False) -> Object:
    metadata: Object = {"resourceVersion": str(rv)}
    if initial_end:
        metadata["annotations"] = {"k8s.io/initial-events-end": "true"}
    return {"kind": info.kind, "apiVersion": info.group_version, "metadata": metadata}


async def _event_stream(
    info: ResourceInfo,
    watcher: Watcher,
    matcher: Matcher | None,
    start_rv: int,
    allow_bookmarks: bool,
    bookmark_interval_s: float,
    mark_initial_end: bool,
) -> AsyncIterator[tuple[str, Object]]:
    """Turn store events into watch events for ``info``'s version and the selectors."""
    last_rv = start_rv
    try:
        while True:
            if mark_initial_end:
                # The synthetic state comes first and at once: the first event not ready
                # now, or newer than the snapshot, ends it.
                event = await watcher.next(0)
                if event is None or event.resource_version > start_rv:
                    mark_initial_end = False
                    yield "BOOKMARK", _bookmark(info, start_rv, initial_end=True)
                if event is None:
                    continue
            else:
                event = await watcher.next(bookmark_interval_s if allow_bookmarks else None)
            if event is None:
                if watcher.closed:
                    # Ended by the store (too slow, or compacted past): the stream closes and
                    # the client lists again, as with upstream's watch cache.
                    return
                if allow_bookmarks:
                    yield "BOOKMARK", _bookmark(info, last_rv)
                continue
            last_rv = max(last_rv, event.resource_version)
            obj = as_served(event.object, info)
            prev = event.prev_object
            if matcher is not None and prev is not None:
                prev = as_served(prev, info)
            kind = _transition(event.type, obj, prev, matcher)
            if kind == "DELETED" and event.type == "MODIFIED" and prev is not None:
                # Leaving the selection: the watch cache sends the last state that matched,
                # at the event's resourceVersion.
                obj = {**prev, "metadata": {**prev.get("metadata", {})}}
                obj["metadata"]["resourceVersion"] = str(event.resource_version)
            if kind is not None:
                yield kind, obj
    finally:
        watcher.close()


def _transition(kind: str, obj: Object, prev: Object | None, matcher: Matcher | None) -> str | None:
    """The event a watcher with ``matcher`` sees for a store event: a modification that
    enters the selection is ``ADDED``, one that leaves it ``DELETED`` (the watch cache's
    rule), one outside it nothing."""
    if matcher is None:
        return kind
    if kind == "MODIFIED":
        now_in = matcher(obj)
        was_in = prev is not None and matcher(prev)
        if now_in and was_in:
            return "MODIFIED"
        if now_in:
            return "ADDED"
        if was_in:
            return "DELETED"
        return None
    return kind if matcher(obj) else None
