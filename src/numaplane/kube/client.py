"""An asyncio Kubernetes API client (aiohttp): get, list, create, update, patch, delete and
streaming watch of any resource, addressed as ``(api_version, resource)`` — ``("v1", "pods")``,
``("batch/v1", "jobs")`` — so custom resources need no generated code.

It speaks only the public HTTP API, so what uses it works against any conformant cluster.
Errors are :class:`~numaplane.kube.errors.ApiError` carrying the server's ``Status``.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, urlsplit

import aiohttp
import orjson

from numaplane.kube.config import KubeConfig
from numaplane.kube.errors import ApiError, KubeConnectionError

#: ``patch_type`` names and the Content-Type each sends.
PATCH_TYPES: Final = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}

_REASONS: Final = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


@dataclass(frozen=True)
class WatchEvent:
    """One event of a watch stream: ``type`` is ADDED, MODIFIED, DELETED or BOOKMARK."""

    type: str
    object: dict[str, Any]


def resource_path(
    api_version: str,
    resource: str,
    namespace: str | None = None,
    name: str | None = None,
    subresource: str = "",
) -> str:
    """The URL path of a collection or an object: ``/api/v1/namespaces/ns/pods/p/status``,
    ``/apis/batch/v1/jobs``."""
    root = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    parts = [root]
    if namespace:
        parts.append(f"namespaces/{quote(namespace, safe='')}")
    parts.append(resource)
    if name is not None:
        parts.append(quote(name, safe=""))
        if subresource:
            parts.append(subresource)
    return "/".join(parts)


def _status_from(code: int, body: bytes) -> dict[str, Any]:
    """The Status a failed response carries, or one built from its code and text."""
    try:
        doc = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        doc.setdefault("code", code)
        return doc
    text = body.decode("utf-8", "replace").strip()
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": text or f"the server responded with HTTP {code}",
        "reason": _REASONS.get(code, "Unknown"),
        "code": code,
    }


def _written(result: Any) -> dict[str, Any]:
    # The object a write answered, ``{}`` for an answer left undecoded.
    return result if isinstance(result, dict) else {}


def _query(**params: str | int | bool | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in params.items():
        if value is None or value == "" or value is False:
            continue
        out[name] = "true" if value is True else str(value)
    return out


class KubeClient:
    """A connection pool to one cluster. Use ``async with KubeClient(config) as client`` (or
    call :meth:`close`)."""

    def __init__(self, config: KubeConfig, *, max_connections: int = 0) -> None:
        self.config = config
        split = urlsplit(config.server)
        self._base = f"{split.scheme}://{split.netloc}"
        self._prefix = split.path.rstrip("/")
        self._headers = {"Accept": "application/json", "User-Agent": "numaplane-kube"}
        if config.token:
            self._headers["Authorization"] = f"Bearer {config.token}"
        self._ssl = config.ssl_context()
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                ssl=self._ssl if self._ssl is not None else False, limit=self._max_connections
            )
            self._session = aiohttp.ClientSession(
                base_url=self._base,
                connector=connector,
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=30),
                auto_decompress=True,
            )
        return self._session

    async def close(self) -> None:
        """Close every connection."""
        if self._session is not None:
            await self._session.close()
            self._session = None
            if self._ssl is not None:
                # aiohttp shuts TLS transports down after close() returns; without this pause
                # (aiohttp's documented graceful shutdown) a loop that ends right after leaves
                # them unclosed and Python warns.
                await asyncio.sleep(0.25)

    async def __aenter__(self) -> KubeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ----- requests -----

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        decode: bool = True,
    ) -> Any:
        """Send one request to ``path`` (below the server URL's prefix); the answer decoded from
        JSON, or its text when it is no JSON (``/healthz``); :class:`ApiError` for any non-2xx
        answer. With ``decode=False`` a successful answer is read but not decoded (``None``):
        decoding a written object the caller ignores costs about as much as the write's own
        client side."""
        headers = None
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else orjson.dumps(body)
            headers = {"Content-Type": content_type}
        url = self._prefix + path
        try:
            async with self._client().request(
                method,
                url,
                params=params,
                data=data,
                headers=headers,
                server_hostname=self.config.tls_server_name,
            ) as response:
                payload = await response.read()
                if response.status >= 300:
                    raise ApiError(_status_from(response.status, payload))
                if not decode:
                    return None
                is_json = "json" in response.content_type
        except aiohttp.ClientError as err:
            raise KubeConnectionError(f"{method} {self.config.server}{path}: {err}") from None
        if not is_json:
            return payload.decode("utf-8", "replace")
        return orjson.loads(payload) if payload else None

    async def get(
        self,
        api_version: str,
        resource: str,
        name: str,
        namespace: str | None = None,
        *,
        subresource: str = "",
    ) -> dict[str, Any]:
        """The object ``name``."""
        path = resource_path(api_version, resource, namespace, name, subresource)
        result: dict[str, Any] = await self.request("GET", path)
        return result

    async def list(
        self,
        api_version: str,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> dict[str, Any]:
        """One page of the collection (a ``<Kind>List``); all namespaces when ``namespace`` is
        ``None`` for a namespaced resource."""
        params = _query(
            labelSelector=label_selector,
            fieldSelector=field_selector,
            limit=limit or None,
            resourceVersion=resource_version,
            resourceVersionMatch=resource_version_match,
            **{"continue": continue_},
        )
        path = resource_path(api_version, resource, namespace)
        result: dict[str, Any] = await self.request("GET", path, params=params)
        return result

    async def list_all(
        self,
        api_version: str,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        page_size: int = 500,
    ) -> tuple[builtins.list[dict[str, Any]], str]:
        """Every item, following ``continue`` tokens; returns the items and the list's
        resourceVersion (where a watch resumes)."""
        items: builtins.list[dict[str, Any]] = []
        token = ""
        while True:
            page = await self.list(
                api_version,
                resource,
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=page_size,
                continue_=token,
            )
            items.extend(page.get("items") or [])
            meta = page.get("metadata") or {}
            token = meta.get("continue") or ""
            if not token:
                return items, str(meta.get("resourceVersion") or "")

    async def create(
        self,
        api_version: str,
        resource: str,
        body: dict[str, Any],
        namespace: str | None = None,
        *,
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str = "",
        decode: bool = True,
    ) -> dict[str, Any]:
        """Create ``body`` (POST to the collection, or to ``name/subresource``); the created
        object, or ``{}`` with ``decode=False``."""
        name = body.get("metadata", {}).get("name") if subresource else None
        path = resource_path(api_version, resource, namespace, name, subresource)
        params = _query(dryRun="All" if dry_run else None, fieldManager=field_manager)
        result = await self.request("POST", path, params=params, body=body, decode=decode)
        return _written(result)

    async def update(
        self,
        api_version: str,
        resource: str,
        body: dict[str, Any],
        namespace: str | None = None,
        *,
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str = "",
        decode: bool = True,
    ) -> dict[str, Any]:
        """Replace the object named in ``body`` (PUT); its ``metadata.resourceVersion``, when
        set, makes the write conditional (409 Conflict when stale). The object written, or
        ``{}`` with ``decode=False``."""
        name = str(body["metadata"]["name"])
        path = resource_path(api_version, resource, namespace, name, subresource)
        params = _query(dryRun="All" if dry_run else None, fieldManager=field_manager)
        result = await self.request("PUT", path, params=params, body=body, decode=decode)
        return _written(result)

    async def patch(
        self,
        api_version: str,
        resource: str,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: str = "merge",
        subresource: str = "",
        dry_run: bool = False,
        field_manager: str = "",
        force: bool = False,
        decode: bool = True,
    ) -> dict[str, Any]:
        """Patch ``name``: ``patch_type`` is ``merge``, ``json``, ``strategic`` or ``apply``
        (server-side apply; needs ``field_manager``). The patched object, or ``{}`` with
        ``decode=False``."""
        path = resource_path(api_version, resource, namespace, name, subresource)
        params = _query(
            dryRun="All" if dry_run else None, fieldManager=field_manager, force=force or None
        )
        result = await self.request(
            "PATCH",
            path,
            params=params,
            body=patch,
            content_type=PATCH_TYPES[patch_type],
            decode=decode,
        )
        return _written(result)

    async def delete(
        self,
        api_version: str,
        resource: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        precondition_rv: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Delete ``name``; answers the object (while finalizers hold it) or a Status."""
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation_policy is not None:
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if precondition_rv is not None:
            options["preconditions"] = {"resourceVersion": precondition_rv}
        if dry_run:
            options["dryRun"] = ["All"]
        path = resource_path(api_version, resource, namespace, name)
        result: dict[str, Any] = await self.request("DELETE", path, body=options)
        return result

    # ----- watch -----

    async def watch(
        self,
        api_version: str,
        resource: str,
        namespace: str | None = None,
        *,
        resource_version: str = "",
        label_selector: str = "",
        field_selector: str = "",
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
        reconnect: bool = True,
    ) -> AsyncGenerator[WatchEvent, None]:
        """Stream changes after ``resource_version`` (``""``: the current state as ADDED first).

        When the server ends the stream (its timeout) and ``reconnect`` is set, the watch
        resumes from the last resourceVersion it saw (bookmarks included), as client-go's
        reflector does. A compacted resourceVersion raises :class:`ApiError` with code 410
        (:attr:`ApiError.is_gone`): list again and watch from the list's resourceVersion.
        """
        rv = resource_version
        path = self._prefix + resource_path(api_version, resource, namespace)
        quiet = 0  # streams in a row that delivered nothing: back off before the next
        while True:
            delivered = False
            params = _query(
                watch=True,
                resourceVersion=rv,
                labelSelector=label_selector,
                fieldSelector=field_selector,
                timeoutSeconds=timeout_seconds,
                allowWatchBookmarks=allow_bookmarks,
            )
            try:
                async with self._client().get(
                    path, params=params, server_hostname=self.config.tls_server_name
                ) as response:
                    if response.status >= 300:
                        raise ApiError(_status_from(response.status, await response.read()))
                    async for event in _events(response):
                        if event.type == "ERROR":
                            raise ApiError(
                                _status_from(
                                    int(event.object.get("code") or 500), orjson.dumps(event.object)
                                )
                            )
                        seen = (event.object.get("metadata") or {}).get("resourceVersion")
                        if seen:
                            rv = str(seen)
                        delivered = True
                        yield event
            except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError):
                pass  # the stream broke: resume from what was seen, as a server timeout
            except aiohttp.ClientError as err:
                raise KubeConnectionError(f"GET {self.config.server}{path}: {err}") from None
            if not reconnect or timeout_seconds is not None:
                return
            quiet = 0 if delivered else quiet + 1
            await asyncio.sleep(min(1.0, 0.05 * quiet))


async def _events(response: aiohttp.ClientResponse) -> AsyncIterator[WatchEvent]:
    """The newline-delimited ``{"type": ..., "object": ...}`` frames of a watch response (read
    in chunks: one object may exceed aiohttp's line limit)."""
    buffer = b""
    async for chunk in response.content.iter_any():
        buffer += chunk
        if b"\n" not in chunk:
            continue
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if line.strip():
                frame = orjson.loads(line)
                yield WatchEvent(str(frame.get("type")), frame.get("object") or {})
    if buffer.strip():
        frame = orjson.loads(buffer)
        yield WatchEvent(str(frame.get("type")), frame.get("object") or {})
