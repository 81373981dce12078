"""The resource handlers: what k8s.io/apiserver's ``handlers`` package does for create, get,
list, update, patch, delete, deletecollection and watch, over a logical cluster's REST verbs.

Each handler reads the request's options from the query (and the body), checks the body against
the endpoint (kind, apiVersion, name, namespace), calls the verb, and renders the result in the
negotiated form (the object, a ``Table``, partial metadata). Errors are raised as
:class:`~numaplane.apiserver.errors.StatusError` and rendered by the server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from numaplane.apiserver import errors
from numaplane.apiserver.auth.rbac import RBACAuthorizer
from numaplane.apiserver.errors import StatusError, bad_request
from numaplane.apiserver.http_clusters import refuse_escalation
from numaplane.apiserver.http_codec import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    RESOURCE_TARGETS,
    STRATEGIC_MERGE_PATCH,
    Negotiated,
    decode_object,
    media_type_of,
    negotiate,
    unsupported_media_type,
)
from numaplane.apiserver.http_options import (
    Query,
    WriteOptions,
    delete_dry_run,
    delete_options,
    first_value,
    manager_or_user_agent,
    parse_bool_param,
    parse_int_param,
    write_options,
)
from numaplane.apiserver.http_respond import include_object, respond
from numaplane.apiserver.http_watch import prime, stream_events, watch_timeout
from numaplane.apiserver.requestinfo import RequestInfo
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest import Cluster
from numaplane.apiserver.rest_common import RequestContext
from numaplane.apiserver.storage import ObjectKey
from numaplane.apiserver.table import build_table
from numaplane.apiserver.user import UserInfo

PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)
#: Custom resources have no patch strategy metadata, so upstream refuses strategic merge patch.
CUSTOM_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, APPLY_PATCH)
RBAC_GROUP = "rbac.authorization.k8s.io"


@dataclass
class Call:
    """One resource request being served."""

    request: web.Request
    cluster: Cluster
    ri: RequestInfo
    info: ResourceInfo
    user: UserInfo
    query: Query
    body: bytes
    shutting_down: asyncio.Event
    authorizer: RBACAuthorizer | None = None

    @property
    def namespace(self) -> str:
        """The namespace the request is in ("" for cluster-scoped resources)."""
        return self.ri.namespace if self.info.namespaced else ""

    @property
    def name_from_path(self) -> str:
        """The object name the path names (never one read from a field selector)."""
        parts = self.ri.parts
        return parts[1] if len(parts) >= 2 else ""

    def context(self, options: WriteOptions | None = None) -> RequestContext:
        """The REST context of this call."""
        if options is None:
            return RequestContext(user=self.user)
        return RequestContext(
            user=self.user,
            dry_run=options.dry_run,
            # Apply never gets here without one (422); other writes fall back to the agent.
            field_manager=manager_or_user_agent(
                options.field_manager, self.request.headers.get("User-Agent", "")
            ),
            field_validation=options.field_validation,
        )


async def _resolve(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _negotiate(call: Call) -> Negotiated:
    return negotiate(call.request.headers.get("Accept", ""), RESOURCE_TARGETS)


def _kind_known(call: Call) -> Any:
    registry = call.cluster.registry

    def known(group: str, version: str, kind: str) -> bool:
        return registry.by_kind(group, version, kind) is not None

    return known


def _subresource_kind(call: Call) -> str | None:
    """The kind a subresource's body must be, when the endpoint checks it (status bodies are
    the object itself); ``None`` when the subresource's strategy checks its own body."""
    sub = call.ri.subresource
    if not sub or sub == "status":
        return call.info.kind
    return None


def _decode_body(call: Call) -> dict[str, Any]:
    kind = _subresource_kind(call)
    content_type = call.request.headers.get("Content-Type", "")
    crd = not call.cluster.registry.is_builtin(call.info)
    return decode_object(
        call.body,
        content_type,
        group=call.info.group,
        version=call.info.version,
        kind=kind or call.info.kind,
        kind_known=_kind_known(call),
        check_kind=kind is not None and not crd,
    )


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    if not isinstance(meta, dict):
        raise bad_request("metadata must be an object")
    return meta


def _match_namespace(call: Call, obj: dict[str, Any]) -> None:
    """Upstream's ``EnsureObjectNamespaceMatchesRequestNamespace``."""
    meta = _metadata(obj)
    theirs = meta.get("namespace") or ""
    ours = call.namespace
    if theirs == ours:
        return
    if not theirs:
        meta["namespace"] = ours
    elif not ours:
        meta.pop("namespace", None)
    else:
        raise bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )


def _check_escalation(call: Call, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    """RBAC's escalation check on Roles, ClusterRoles and their bindings (upstream's RBAC
    storage runs it before the write)."""
    if call.info.group != RBAC_GROUP or call.authorizer is None or call.ri.subresource:
        return
    refuse_escalation(call.user, obj, call.authorizer, old)


async def handle_create(call: Call) -> web.Response:
    """POST: create (or a subresource's create: ``binding``, ``token``)."""
    negotiated = _negotiate(call)
    options = write_options(call.query, "CreateOptions")
    obj = _decode_body(call)
    _match_namespace(call, obj)
    _check_escalation(call, obj, None)
    result = await call.cluster.create(
        call.context(options),
        call.info,
        call.namespace,
        obj,
        subresource=call.ri.subresource,
        name=call.name_from_path,
    )
    return respond(call.info, call.query, result, negotiated)


async def handle_get(call: Call) -> web.Response:
    """GET of one object (or of its subresource)."""
    negotiated = _negotiate(call)
    result = await _resolve(
        call.cluster.get(
            call.context(),
            call.info,
            call.namespace,
            call.name_from_path,
            subresource=call.ri.subresource,
        )
    )
    return respond(call.info, call.query, result, negotiated)


def _list_args(call: Call) -> dict[str, Any]:
    query = call.query
    limit = parse_int_param(query, "limit") or 0
    return {
        "label_selector": first_value(query, "labelSelector"),
        "field_selector": _field_selector(call),
        "limit": max(limit, 0),
        "continue_": first_value(query, "continue"),
        "resource_version": first_value(query, "resourceVersion"),
        "resource_version_match": first_value(query, "resourceVersionMatch"),
    }


def _field_selector(call: Call) -> str:
    """The field selector, narrowed to the object the path names (upstream's ListResource)."""
    selector = first_value(call.query, "fieldSelector")
    name = call.name_from_path
    if not name:
        return selector
    if selector:
        pinned = [
            t.split("=")[-1]
            for t in selector.split(",")
            if t.replace("==", "=").startswith("metadata.name=")
        ]
        if pinned != [name]:
            raise bad_request("fieldSelector metadata.name doesn't match requested name")
        return selector
    return f"metadata.name={name}"


async def handle_list(call: Call) -> web.Response:
    """GET of a collection."""
    negotiated = _negotiate(call)
    result = await _resolve(
        call.cluster.list(call.context(), call.info, call.namespace, **_list_args(call))
    )
    return respond(call.info, call.query, result, negotiated)


async def handle_update(call: Call) -> web.Response:
    """PUT: replace (or create, where the resource allows create on update)."""
    negotiated = _negotiate(call)
    options = write_options(call.query, "UpdateOptions")
    obj = _decode_body(call)
    _match_namespace(call, obj)
    meta = _metadata(obj)
    name = call.name_from_path
    if meta.get("name", "") != name:
        raise bad_request(
            f"the name of the object ({meta.get('name', '')}) does not match the name on the URL "
            f"({name})"
        )
    old = call.cluster.store.get(ObjectKey(call.info.group_resource, call.namespace, name))
    _check_escalation(call, obj, old)
    result = await call.cluster.update(
        call.context(options),
        call.info,
        call.namespace,
        name,
        obj,
        subresource=call.ri.subresource,
    )
    return respond(call.info, call.query, result, negotiated)


async def handle_patch(call: Call) -> web.Response:
    """PATCH with one of the four patch types."""
    negotiated = _negotiate(call)
    patch_type = media_type_of(call.request.headers.get("Content-Type", ""))
    allowed = PATCH_TYPES if call.cluster.registry.is_builtin(call.info) else CUSTOM_PATCH_TYPES
    if patch_type not in allowed:
        raise unsupported_media_type(allowed)
    options = write_options(call.query, "PatchOptions", patch_type=patch_type)
    context = dataclasses.replace(
        call.context(options), admit_patch=lambda new, old: _check_escalation(call, new, old)
    )
    result = await call.cluster.patch(
        context,
        call.info,
        call.namespace,
        call.name_from_path,
        patch_type,
        call.body,
        subresource=call.ri.subresource,
        force=options.force,
    )
    return respond(call.info, call.query, result, negotiated)


def _delete_options(call: Call) -> dict[str, Any]:
    return delete_options(call.body, call.request.headers.get("Content-Type", ""), call.query)


def _delete_context(call: Call, options: dict[str, Any]) -> RequestContext:
    return RequestContext(user=call.user, dry_run=delete_dry_run(options))


async def handle_delete(call: Call) -> web.Response:
    """DELETE of one object."""
    negotiated = _negotiate(call)
    options = _delete_options(call)
    result = await call.cluster.delete(
        _delete_context(call, options), call.info, call.namespace, call.name_from_path, options
    )
    return respond(call.info, call.query, result, negotiated)


async def handle_delete_collection(call: Call) -> web.Response:
    """DELETE of a collection."""
    negotiated = _negotiate(call)
    options = _delete_options(call)
    result = await call.cluster.delete_collection(
        _delete_context(call, options),
        call.info,
        call.namespace,
        options,
        first_value(call.query, "labelSelector"),
        _field_selector(call),
    )
    return respond(call.info, call.query, result, negotiated)


async def handle_watch(call: Call) -> web.StreamResponse:
    """GET ``?watch=1`` (or ``/watch/...``): stream events."""
    negotiated = negotiate(
        call.request.headers.get("Accept", ""),
        {k: v for k, v in RESOURCE_TARGETS.items() if k[0] == "Table"},
        stream=True,
    )
    if negotiated.media_type != "application/json":
        raise errors.not_acceptable("application/json")
    timeout_s = watch_timeout(first_value(call.query, "timeoutSeconds"))
    include = include_object(call.query) if negotiated.target is not None else ""
    events = call.cluster.watch(
        call.context(),
        call.info,
        call.namespace,
        label_selector=first_value(call.query, "labelSelector"),
        field_selector=_field_selector(call),
        resource_version=first_value(call.query, "resourceVersion"),
        allow_bookmarks=parse_bool_param(call.query, "allowWatchBookmarks"),
        resource_version_match=first_value(call.query, "resourceVersionMatch"),
        # WatchList (client-go's streaming lists): absent, false and true differ upstream.
        send_initial_events=(
            parse_bool_param(call.query, "sendInitialEvents")
            if "sendInitialEvents" in call.query
            else None
        ),
    )
    first, done = await prime(events)
    if done and first.exception() is not None:
        exc = first.exception()
        # A request error (a bad selector, a bad resourceVersion) answers with its own status;
        # an expired resourceVersion is reported in the stream, as upstream's watch cache does.
        if isinstance(exc, StatusError) and exc.code != 410:
            raise exc
    target = negotiated.target
    sent_columns = False

    def as_table_row(event_type: str, obj: dict[str, Any]) -> dict[str, Any]:
        nonlocal sent_columns
        assert target is not None
        # Upstream sends the column definitions with the first event only.
        table = build_table(
            call.info.table,
            [obj],
            include,
            None,
            time.time(),
            no_headers=sent_columns,
            version=target.version,
        )
        sent_columns = True
        return table

    return await stream_events(
        call.request,
        events,
        first,
        timeout_s=timeout_s,
        shutting_down=call.shutting_down,
        transform=as_table_row if target is not None else None,
    )
