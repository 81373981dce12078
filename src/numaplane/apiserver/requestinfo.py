"""What a request asks for, read from its method, path and query the way k8s.io/apiserver's
``RequestInfoFactory`` reads them: resource requests (``/api/v1/...``, ``/apis/G/V/...``) get a
verb, API group and version, namespace, resource, subresource and name; everything else is a
non-resource request whose verb is the lower-cased HTTP method.

Beyond upstream (as kcp does), a path may start with ``/clusters/NAME``: the logical cluster it
addresses. :func:`split_cluster` takes that prefix off before the path is parsed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

API_PREFIXES = frozenset({"api", "apis"})
#: Prefixes whose next segment is the version, not an API group (the core group).
GROUPLESS_API_PREFIXES = frozenset({"api"})
#: Path segments that name the verb themselves (``/api/v1/watch/pods``), as upstream.
SPECIAL_VERBS = frozenset({"proxy", "watch"})
#: Special verbs after which the third part of the path is no subresource.
SPECIAL_VERBS_NO_SUBRESOURCES = frozenset({"proxy"})
#: What may follow ``/namespaces/NAME`` and still be about the Namespace object itself.
NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})

CLUSTERS_PREFIX = "clusters"

_METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}


class RequestInfoError(ValueError):
    """A resource path too short to say what it is about (upstream answers 500 with this text;
    the server answers 404, since nothing is served there)."""


@dataclass(frozen=True)
class RequestInfo:
    """One request, as upstream's ``request.RequestInfo``.

    ``parts`` are the path segments from the resource on (``["pods", "p", "status"]``), kept for
    handlers that need what follows the subresource. ``path`` is the path without any
    ``/clusters/NAME`` prefix.
    """

    is_resource_request: bool
    path: str
    verb: str
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    parts: tuple[str, ...] = field(default=())


def split_path(path: str) -> list[str]:
    """The non-empty segments of ``path`` (``/api//v1/`` -> ``["api", "v1"]`` keeps upstream's
    trimming of the leading and trailing slash only, so inner empty segments stay)."""
    trimmed = path.strip("/")
    return trimmed.split("/") if trimmed else []


def split_cluster(path: str) -> tuple[str | None, str]:
    """``/clusters/NAME/rest`` -> ``("NAME", "/rest")``; any other path -> ``(None, path)``.

    ``/clusters/NAME`` alone addresses the cluster's root (``"/"``).
    """
    parts = split_path(path)
    if len(parts) >= 2 and parts[0] == CLUSTERS_PREFIX:
        rest = "/" + "/".join(parts[2:])
        if path.endswith("/") and len(parts) > 2:
            rest += "/"
        return parts[1], rest
    return None, path


def _parse_bool(value: str) -> bool | None:
    """Go's ``strconv.ParseBool``: ``None`` for anything it refuses."""
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def wants_watch(query: Mapping[str, Sequence[str]]) -> bool:
    """Whether ``?watch=`` asks for a watch, as upstream decodes it: a value Go's ParseBool
    refuses still means a watch unless it reads ``false`` or ``0`` in any case."""
    values = query.get("watch") or []
    if not values:
        return False
    parsed = _parse_bool(values[0])
    if parsed is not None:
        return parsed
    return values[0].lower() not in ("false", "0")


def _exact_name(field_selector: str) -> str:
    """The name a field selector pins with ``metadata.name=X`` / ``metadata.name==X``, or "".

    Upstream authorizes a list or watch narrowed this way as a request for that one name (so
    ``resourceNames`` rules apply to informers on a single object).
    """
    for term in _split_terms(field_selector):
        for op in ("==", "="):
            key, sep, value = term.partition(op)
            if sep and key.strip() == "metadata.name" and not key.endswith("!"):
                value = value.strip()
                return value if _valid_path_segment(value) else ""
    return ""


def _split_terms(selector: str) -> list[str]:
    """Split a field selector on unescaped commas (``\\,`` is a literal comma)."""
    terms: list[str] = []
    current: list[str] = []
    escaped = False
    for ch in selector:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append("".join(current))
            current = []
        else:
            current.append(ch)
    terms.append("".join(current))
    return [t for t in terms if t]


def _valid_path_segment(name: str) -> bool:
    """Upstream's ``path.IsValidPathSegmentName``: not ``.``/``..``, no ``/`` or ``%``."""
    return bool(name) and name not in (".", "..") and "/" not in name and "%" not in name


def parse_request_info(
    method: str, path: str, query: Mapping[str, Sequence[str]] | None = None
) -> RequestInfo:
    """Read ``method`` ``path`` ``?query`` as upstream's ``RequestInfoFactory.NewRequestInfo``.

    ``path`` carries no ``/clusters/NAME`` prefix (see :func:`split_cluster`). Raises
    :class:`RequestInfoError` for ``/api/v1/watch`` and the like (a special verb with nothing
    after it).
    """
    query = query or {}
    method = method.upper()
    non_resource = RequestInfo(is_resource_request=False, path=path, verb=method.lower())
    parts = split_path(path)
    if len(parts) < 3 or parts[0] not in API_PREFIXES:
        return non_resource
    prefix = parts[0]
    parts = parts[1:]
    group = ""
    if prefix not in GROUPLESS_API_PREFIXES:
        if len(parts) < 3:
            return non_resource
        group = parts[0]
        parts = parts[1:]
    version = parts[0]
    parts = parts[1:]

    if parts[0] in SPECIAL_VERBS:
        if len(parts) < 2:
            raise RequestInfoError(f"unable to determine kind and namespace from url {path}")
        verb = parts[0]
        parts = parts[1:]
    else:
        verb = _METHOD_VERBS.get(method, "")

    namespace = ""
    if parts[0] == "namespaces" and len(parts) > 1:
        namespace = parts[1]
        # ``/namespaces/NS/pods/...`` is about pods; ``/namespaces/NS[/status]`` is about the
        # Namespace object itself.
        if len(parts) > 2 and parts[2] not in NAMESPACE_SUBRESOURCES:
            parts = parts[2:]

    resource = parts[0]
    name = parts[1] if len(parts) >= 2 else ""
    subresource = parts[2] if len(parts) >= 3 and verb not in SPECIAL_VERBS_NO_SUBRESOURCES else ""

    if not name and verb == "get":
        verb = "watch" if wants_watch(query) else "list"
        selectors = query.get("fieldSelector") or []
        if selectors:
            name = _exact_name(selectors[0])
    if not name and verb == "delete":
        verb = "deletecollection"

    return RequestInfo(
        is_resource_request=True,
        path=path,
        verb=verb,
        api_prefix=prefix,
        api_group=group,
        api_version=version,
        namespace=namespace,
        resource=resource,
        subresource=subresource,
        name=name,
        parts=tuple(parts),
    )
