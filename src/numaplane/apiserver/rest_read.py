"""Get, list and watch, as kube-apiserver serves them: label and field selectors, pagination with
opaque continue tokens, the ``resourceVersion``/``resourceVersionMatch`` rules of
``ListOptions`` and of the watch cache, and watches that turn selector transitions into
``ADDED``/``DELETED`` events and send bookmarks."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import AsyncIterator, Callable, Mapping
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
from numaplane.apiserver.rest_sub import scale_paths, to_scale
from numaplane.apiserver.storage import Watcher, too_large_resource_version

CONTINUE_EXPIRED: Final = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)
#: How often an idle watch that allows bookmarks gets one (the watch cache's frequency).
BOOKMARK_INTERVAL_S: Final = 60.0
#: The ``v`` of a continue token, as upstream encodes it.
CONTINUE_VERSION: Final = "meta.k8s.io/v1"
_URL_BASE64: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

Matcher = Callable[[Object], bool]


class ExpiredContinue(errors.StatusError):
    """410 Expired for a continue token whose snapshot was compacted; its ``metadata.continue``
    carries an inconsistent token that resumes at the latest state, as upstream's."""

    def __init__(self, token: str) -> None:
        super().__init__(410, "Expired", CONTINUE_EXPIRED)
        self.token = token

    def status(self) -> dict[str, Any]:
        """The ``Status`` with the fresh continue token in its list metadata."""
        body = super().status()
        body["metadata"] = {"continue": self.token}
        return body


def encode_continue(rv: int, start: str) -> str:
    """An opaque continue token: unpadded URL-safe base64 of ``{"v","rv","start"}``."""
    raw = json.dumps({"v": CONTINUE_VERSION, "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    """``(rv, start key)`` of a continue token, or 400 ``continue key is not valid`` with Go's
    words for what does not decode."""
    bad = next((i for i, c in enumerate(token) if c not in _URL_BASE64), None)
    if bad is None and len(token) % 4 == 1:
        bad = len(token) - 1
    if bad is not None:
        raise errors.bad_request(
            f"continue key is not valid: illegal base64 data at input byte {bad}"
        )
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError):
        raise errors.bad_request(
            "continue key is not valid: invalid character looking for beginning of value"
        ) from None
    if not isinstance(data, dict) or data.get("v") != CONTINUE_VERSION:
        raise errors.bad_request(
            "continue key is not valid: server does not recognize this encoded version"
        )
    rv = data.get("rv")
    start = data.get("start")
    if not isinstance(rv, int) or rv == 0:
        raise errors.bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion "
            "(version meta.k8s.io/v1)"
        )
    if not isinstance(start, str) or not start:
        raise errors.bad_request("continue key is not valid: encoded start key empty")
    return rv, start


def _start_key(info: ResourceInfo, namespace: str, obj: Object) -> str:
    """The key after which the next page starts, relative to the listed prefix."""
    metadata = obj.get("metadata", {})
    if info.namespaced and not namespace:
        return f"{metadata.get('namespace', '')}/{metadata.get('name', '')}\x00"
    return f"{metadata.get('name', '')}\x00"


def _after_start(info: ResourceInfo, namespace: str, start: str) -> tuple[str, str]:
    """The ``(namespace, name)`` a start key points just past."""
    start = start.rstrip("\x00")
    if info.namespaced and not namespace:
        ns, _, name = start.partition("/")
        return ns, name
    return namespace, start


def _parse_rv(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise errors.bad_request(f"invalid resource version: {text}") from None
    if value < 0:
        raise errors.bad_request(f"invalid resource version: {text}")
    return value


def _list_options_invalid(errs: list[errors.FieldError]) -> errors.StatusError:
    return errors.invalid("meta.k8s.io", "ListOptions", "", errs)


def _validate_list_options(rv: str, match: str, continue_: str) -> None:
    """``ValidateListOptions`` of apimachinery for a list: every broken rule, in its order."""
    errs: list[errors.FieldError] = []
    if match:
        if not rv:
            errs.append(
                errors.forbidden_field(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                )
            )
        if continue_:
            errs.append(
                errors.forbidden_field(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )
            )
        if match not in ("Exact", "NotOlderThan"):
            errs.append(
                errors.not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""])
            )
        if match == "Exact" and rv == "0":
            errs.append(
                errors.forbidden_field(
                    "resourceVersionMatch",
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
    if errs:
        raise _list_options_invalid(errs)


def _validate_watch_options(match: str, send_initial_events: bool | None) -> None:
    """``validateWatchOptions`` of apimachinery (the WatchList feature is on)."""
    errs: list[errors.FieldError] = []
    if send_initial_events is not None and match != "NotOlderThan":
        errs.append(
            errors.forbidden_field(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )
        )
    if match:
        if send_initial_events is None:
            errs.append(
                errors.forbidden_field(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                    "provided",
                )
            )
        if match != "NotOlderThan":
            errs.append(errors.not_supported("resourceVersionMatch", match, ["NotOlderThan"]))
    if errs:
        raise _list_options_invalid(errs)


def build_matcher(info: ResourceInfo, label_selector: str, field_selector: str) -> Matcher | None:
    """A predicate for the selectors (None when both are empty); bad selectors and unknown
    field labels are refused with 400 as upstream's list and watch handlers do."""
    if not label_selector and not field_selector:
        return None
    from numaplane.api.selectors import SelectorError, parse_field_selector, parse_label_selector

    try:
        labels = parse_label_selector(label_selector) if label_selector else None
        fields = parse_field_selector(field_selector) if field_selector else None
    except SelectorError as error:
        raise errors.bad_request(str(error)) from None
    if fields is not None:
        known = _field_labels(info)
        for requirement in fields.requirements:
            if requirement.field not in known:
                raise errors.bad_request(f"field label not supported: {requirement.field}")

    def matches(obj: Object) -> bool:
        if labels is not None:
            obj_labels: Mapping[str, str] = obj.get("metadata", {}).get("labels") or {}
            if not labels.matches(obj_labels):
                return False
        return fields is None or fields.matches(info.field_set(obj))

    return matches


def _field_labels(info: ResourceInfo) -> set[str]:
    """The field labels ``info`` supports, read from its field set of a bare object."""
    skeleton: Object = {"metadata": {"name": "", "namespace": ""}, "spec": {}, "status": {}}
    try:
        return set(info.field_set(skeleton)) | {"metadata.name", "metadata.namespace"}
    except (KeyError, TypeError, AttributeError):
        return {"metadata.name", "metadata.namespace"}


def _strip_type(obj: Object) -> Object:
    """A list item of a built-in kind, which carries no ``kind``/``apiVersion`` of its own."""
    return {k: v for k, v in obj.items() if k != "kind" and k != "apiVersion"}


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
        _validate_list_options(resource_version, resource_version_match, continue_)
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
            token_rv, start_key = decode_continue(continue_)
            start = _after_start(info, namespace, start_key)
            paginate = limit > 0
            if token_rv < 0:
                items, list_rv = self.store.list(resource, scope)
            else:
                try:
                    items = self.store.list_at(resource, scope, token_rv)
                except errors.StatusError as error:
                    if error.code != 410:
                        raise
                    raise ExpiredContinue(encode_continue(-1, start_key)) from None
                list_rv = token_rv
        elif resource_version in ("", "0"):
            items, list_rv = self.store.list(resource, scope)
        else:
            wanted = _parse_rv(resource_version)
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
            list_meta["continue"] = encode_continue(list_rv, _start_key(info, namespace, items[-1]))
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
        _validate_watch_options(resource_version_match, send_initial_events)
        matcher = build_matcher(info, label_selector, field_selector)
        wanted = 0 if resource_version in ("", "0") else _parse_rv(resource_version)
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
