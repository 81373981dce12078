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
)
from numaplane.apiserver.rest_core import ClusterCore
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
    """``(rv, start key)`` of a continue token, or 400 ``continue key is not valid``."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
    except (binascii.Error, ValueError) as error:
        raise errors.bad_request(f"continue key is not valid: {error}") from None
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
    """``ValidateListOptions`` of apimachinery (the non-watch rules)."""
    if match not in ("", "Exact", "NotOlderThan"):
        raise _list_options_invalid(
            [errors.not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""])]
        )
    if not match:
        return
    if continue_:
        why = "resourceVersionMatch is forbidden when continue is provided"
    elif not rv:
        why = "resourceVersionMatch is forbidden unless resourceVersion is provided"
    elif match == "Exact" and rv == "0":
        why = 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
    else:
        return
    raise _list_options_invalid([errors.forbidden_field("resourceVersionMatch", why)])


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
                items, list_rv = self.store.list(info.group_resource, scope)
            else:
                try:
                    items = self.store.list_at(info.group_resource, scope, token_rv)
                except errors.StatusError as error:
                    if error.code != 410:
                        raise
                    raise ExpiredContinue(encode_continue(-1, start_key)) from None
                list_rv = token_rv
        elif resource_version in ("", "0"):
            items, list_rv = self.store.list(info.group_resource, scope)
        else:
            wanted = _parse_rv(resource_version)
            if wanted > current:
                raise too_large_resource_version(wanted, current)
            if resource_version_match == "Exact":
                items = self.store.list_at(info.group_resource, scope, wanted)
                list_rv = wanted
            else:
                items, list_rv = self.store.list(info.group_resource, scope)
        if start is not None:
            items = [o for o in items if _sort_key(o) > start]
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
        served = [_strip_type(o) if builtin else as_served(o, info) for o in items]
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
        bookmark_interval_s: float = BOOKMARK_INTERVAL_S,
    ) -> AsyncIterator[tuple[str, Object]]:
        """The events of ``info`` objects in ``namespace`` ("" for all) matching the selectors:
        the current state as ``ADDED`` for resourceVersion "" or "0", else every change after
        it; a compacted resourceVersion is one ``ERROR`` event (410), as the watch cache
        answers. Bad selectors raise at once (400)."""
        del ctx
        matcher = build_matcher(info, label_selector, field_selector)
        from_rv = None if resource_version in ("", "0") else _parse_rv(resource_version)
        scope = namespace if info.namespaced and namespace else None
        try:
            watcher = self.store.watch(info.group_resource, scope, from_rv)
        except errors.StatusError as error:
            return _error_stream(error)
        start_rv = from_rv if from_rv is not None else self.store.current_rv()
        return _event_stream(info, watcher, matcher, start_rv, allow_bookmarks, bookmark_interval_s)


def _sort_key(obj: Object) -> tuple[str, str]:
    metadata = obj.get("metadata", {})
    return metadata.get("namespace", ""), metadata.get("name", "")


async def _error_stream(error: errors.StatusError) -> AsyncIterator[tuple[str, Object]]:
    yield "ERROR", error.status()


async def _event_stream(
    info: ResourceInfo,
    watcher: Watcher,
    matcher: Matcher | None,
    start_rv: int,
    allow_bookmarks: bool,
    bookmark_interval_s: float,
) -> AsyncIterator[tuple[str, Object]]:
    """Turn store events into watch events for ``info``'s version and the selectors."""
    last_rv = start_rv
    try:
        while True:
            try:
                event = await watcher.next(bookmark_interval_s if allow_bookmarks else None)
            except errors.StatusError as error:
                yield "ERROR", error.status()
                return
            if event is None:
                if watcher.closed:
                    # Ended by the store (too slow, or compacted past): the stream closes and
                    # the client lists again, as with upstream's watch cache.
                    return
                if allow_bookmarks:
                    yield (
                        "BOOKMARK",
                        {
                            "kind": info.kind,
                            "apiVersion": info.group_version,
                            "metadata": {"resourceVersion": str(last_rv)},
                        },
                    )
                continue
            last_rv = max(last_rv, event.resource_version)
            kind = _transition(event.type, event.object, event.prev_object, matcher)
            if kind is not None:
                yield kind, as_served(event.object, info)
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
