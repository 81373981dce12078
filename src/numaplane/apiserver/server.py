"""(Over 400 lines: the filter chain, and the start and stop of the process that runs it.)

The API server process: an aiohttp application over TLS serving one or more logical clusters.

A request goes through what kube-apiserver's filter chain does, in the same order: the logical
cluster is taken from a ``/clusters/NAME`` prefix (the default cluster is served at ``/``),
the user is authenticated (client certificate, static token, ServiceAccount token; anonymous
requests get 401), the request info is parsed, RBAC authorizes it (403 with upstream's wording),
and it is served: health and version endpoints, discovery and OpenAPI documents, or a resource
handler. :func:`start_server` returns a :class:`ServerHandle` (tests, ``numaplane up``); the
``numaplane apiserver`` command runs one until SIGINT/SIGTERM.
"""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from numaplane.apiserver import errors
from numaplane.apiserver.auth.authn import Authenticator, load_token_file
from numaplane.apiserver.auth.impersonation import impersonate, impersonation_requested
from numaplane.apiserver.auth.pki import Pki, ensure_pki, server_ssl_context, write_kubeconfig
from numaplane.apiserver.auth.rbac import Attributes, Decision, RBACAuthorizer
from numaplane.apiserver.auth.serviceaccount import TokenSigner
from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.http_clusters import open_cluster
from numaplane.apiserver.http_codec import encode, negotiate
from numaplane.apiserver.http_health import (
    HEALTH_ENDPOINTS,
    HealthCheck,
    health,
    version_info,
)
from numaplane.apiserver.http_options import method_not_allowed, not_found_route, read_body
from numaplane.apiserver.http_resource import (
    Call,
    handle_create,
    handle_delete,
    handle_delete_collection,
    handle_get,
    handle_list,
    handle_patch,
    handle_update,
    handle_watch,
)
from numaplane.apiserver.http_routes import serve_discovery
from numaplane.apiserver.podlog import serve_pod_log
from numaplane.apiserver.requestinfo import (
    RequestInfo,
    RequestInfoError,
    parse_request_info,
    split_cluster,
)
from numaplane.apiserver.rest import Cluster
from numaplane.apiserver.storage import ObjectKey
from numaplane.apiserver.user import UserInfo
from numaplane.errors import NumaplaneError

log = logging.getLogger("numaplane.apiserver")

DEFAULT_CLUSTER = "default"
#: How long a verified client certificate's user is remembered, and how many are.
CERT_CACHE_TTL_S = 10.0
CERT_CACHE_SIZE = 4096
#: A logical cluster's name is a DNS-1123 label (it is a URL segment and a file name).
CLUSTER_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_CLUSTER_NAME = 63

_VERB_HANDLERS = {
    "create": handle_create,
    "get": handle_get,
    "list": handle_list,
    "update": handle_update,
    "patch": handle_patch,
    "delete": handle_delete,
    "deletecollection": handle_delete_collection,
}


class ServerError(NumaplaneError):
    """The server cannot start: a bad flag value, an unusable data directory or port."""


def check_cluster_name(name: str) -> str:
    """``name`` if it may name a logical cluster, else a one-line :class:`ServerError`."""
    if len(name) > MAX_CLUSTER_NAME or not CLUSTER_NAME.match(name):
        raise ServerError(
            f"cluster name {name!r}: must be a DNS-1123 label (lower-case letters, digits and "
            f"'-', starting and ending with a letter or digit, at most {MAX_CLUSTER_NAME})"
        )
    if name == DEFAULT_CLUSTER:
        raise ServerError(f"cluster name {name!r}: reserved for the cluster served at /")
    return name


@dataclass(frozen=True)
class ServerConfig:
    """How to run a server: where its data lives, where it listens, which logical clusters it
    serves besides the default one, the static token file, and whether Kueue's Job webhook
    runs in the create path (``kueue_job_defaulting``: a new Job with a queue name is
    suspended)."""

    data_dir: Path
    bind: str = "127.0.0.1"
    port: int = 6443
    clusters: tuple[str, ...] = ()
    token_auth_file: Path | None = None
    kueue_job_defaulting: bool = False


@dataclass
class _ClusterEntry:
    cluster: Cluster
    authorizer: RBACAuthorizer


@dataclass
class ServerHandle:
    """A running server: its URL, data directory and kubeconfigs; :meth:`stop` shuts it down
    (closing watches, flushing every cluster's store)."""

    url: str
    port: int
    data_dir: Path
    kubeconfig: Path
    cluster_kubeconfigs: dict[str, Path]
    _app: ApiServer
    _runner: web.AppRunner
    _stopped: bool = field(default=False)

    def cluster(self, name: str = DEFAULT_CLUSTER) -> Cluster:
        """The logical cluster ``name`` this server serves (in-process users: tests, compaction
        on demand, ``numaplane up``)."""
        return self._app.clusters[name].cluster

    async def stop(self) -> None:
        """Stop accepting requests, end the watches, close the clusters."""
        if self._stopped:
            return
        self._stopped = True
        self._app.shutting_down.set()
        await self._runner.cleanup()
        await self._app.close()


def _lookup(cluster: Cluster) -> Callable[[str, str, str], dict[str, Any] | None]:
    def lookup(group_resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        return cluster.store.get(ObjectKey(group_resource, namespace, name))

    return lookup


def _peer_cert(request: web.Request) -> bytes | None:
    transport = request.transport
    if transport is None:
        return None
    ssl_object = transport.get_extra_info("ssl_object")
    if ssl_object is None:
        return None
    der: bytes | None = ssl_object.getpeercert(binary_form=True)
    return der


def forbidden(attrs: Attributes, reason: str) -> StatusError:
    """Upstream's 403 for a request RBAC refused."""
    if not attrs.resource_request:
        return errors.forbidden_path(attrs.user.name, attrs.verb, attrs.path, reason)
    return errors.forbidden(
        attrs.user.name,
        attrs.verb,
        attrs.resource,
        attrs.api_group,
        attrs.namespace,
        attrs.name,
        attrs.subresource,
        reason,
    )


class ApiServer:
    """The request handling of one server process over its logical clusters."""

    def __init__(
        self,
        pki: Pki,
        clusters: Mapping[str, tuple[Cluster, RBACAuthorizer]],
        authenticator: Authenticator,
    ) -> None:
        self.pki = pki
        self.authenticator = authenticator
        self.shutting_down = asyncio.Event()
        self.clusters = {
            name: _ClusterEntry(cluster, authorizer)
            for name, (cluster, authorizer) in clusters.items()
        }
        self._closed = False
        self._cert_users: dict[bytes, tuple[UserInfo, float]] = {}

    async def close(self) -> None:
        """Close every cluster (flushing its store)."""
        if self._closed:
            return
        self._closed = True
        for entry in self.clusters.values():
            await entry.cluster.close()

    def health_checks(self, endpoint: str) -> list[HealthCheck]:
        """The checks behind ``/healthz``, ``/livez`` and ``/readyz``."""
        checks = [
            HealthCheck("ping", lambda: None),
            HealthCheck("log", lambda: None),
            HealthCheck("etcd", self._storage_check),
        ]
        if endpoint == "readyz":
            checks.append(HealthCheck("shutdown", self._shutdown_check))
        return checks

    def _storage_check(self) -> str | None:
        return "closed" if self._closed else None

    def _shutdown_check(self) -> str | None:
        return "process is shutting down" if self.shutting_down.is_set() else None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Serve one request; every error becomes a ``Status`` (never an unhandled 500)."""
        try:
            response = await self._handle(request)
        except StatusError as err:
            response = self._error(request, err)
        except (ConnectionError, asyncio.CancelledError):
            raise
        except Exception as exc:
            log.exception("internal error serving %s %s", request.method, request.path)
            response = self._error(request, errors.internal_error(f"{type(exc).__name__}: {exc}"))
        if not response.prepared:
            # Upstream's WithCacheControl: API answers are never cached unless they say so.
            response.headers.setdefault("Cache-Control", "no-cache, private")
        return response

    def _authenticate(
        self, request: web.Request, cluster_name: str, cluster: Cluster
    ) -> UserInfo | None:
        """The request's user. A client certificate's verification (a signature check) is
        remembered for a short while: the same certificate comes with every request of a
        connection, and verifying it each time would cost more than serving the request."""
        der = _peer_cert(request)
        if der is not None:
            now = time.monotonic()
            cached = self._cert_users.get(der)
            if cached is not None and cached[1] > now:
                return cached[0]
            user = self.authenticator.authenticate(der, None, cluster_name, _lookup(cluster))
            if user is not None:
                if len(self._cert_users) >= CERT_CACHE_SIZE:
                    self._cert_users.clear()
                self._cert_users[der] = (user, now + CERT_CACHE_TTL_S)
                return user
        return self.authenticator.authenticate(
            der, request.headers.get("Authorization"), cluster_name, _lookup(cluster)
        )

    def _error(self, request: web.Request, err: StatusError) -> web.Response:
        try:
            media_type = negotiate(request.headers.get("Accept", "")).media_type
        except StatusError:
            media_type = "application/json"
        return web.Response(
            body=encode(err.status(), media_type), status=err.code, content_type=media_type
        )

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        cluster_name, path = split_cluster(request.path)
        entry = self.clusters.get(cluster_name or DEFAULT_CLUSTER)
        if entry is None:
            raise not_found_route()
        user = self._authenticate(request, cluster_name or DEFAULT_CLUSTER, entry.cluster)
        if user is None:
            raise errors.unauthorized()
        if impersonation_requested(request.headers.items()):
            user = impersonate(user, request.headers.items(), entry.authorizer)
        query = {key: request.query.getall(key) for key in request.query}
        try:
            ri = parse_request_info(request.method, path, query)
        except RequestInfoError as err:
            raise not_found_route() from err
        attrs = Attributes(
            user=user,
            verb=ri.verb,
            namespace=ri.namespace,
            api_group=ri.api_group,
            api_version=ri.api_version,
            resource=ri.resource,
            subresource=ri.subresource,
            name=ri.name,
            resource_request=ri.is_resource_request,
            path=ri.path,
        )
        decision: Decision = entry.authorizer.authorize(attrs)
        if not decision.allowed:
            raise forbidden(attrs, decision.reason)
        if not ri.is_resource_request:
            return await self._non_resource(request, entry, ri, path, query)
        return await self._resource(request, entry, ri, user, query)

    async def _non_resource(
        self,
        request: web.Request,
        entry: _ClusterEntry,
        ri: RequestInfo,
        path: str,
        query: Mapping[str, Sequence[str]],
    ) -> web.StreamResponse:
        parts = [p for p in path.split("/") if p]
        if parts and parts[0] in HEALTH_ENDPOINTS:
            if request.method not in ("GET", "HEAD"):
                raise method_not_allowed()
            reply = health(parts[0], parts[1:], query, self.health_checks(parts[0]))
            response = web.Response(text=reply.body, status=reply.code)
            response.headers["Content-Type"] = "text/plain; charset=utf-8"
            response.headers["X-Content-Type-Options"] = "nosniff"
            return response
        if parts == ["version"]:
            if request.method not in ("GET", "HEAD"):
                raise method_not_allowed()
            return web.Response(body=encode(version_info()), content_type="application/json")
        prefix = request.path[: len(request.path) - len(path)] if path != request.path else ""
        served = serve_discovery(request, entry.cluster, parts, prefix.rstrip("/"))
        if served is None:
            raise not_found_route()
        return served

    async def _resource(
        self,
        request: web.Request,
        entry: _ClusterEntry,
        ri: RequestInfo,
        user: UserInfo,
        query: Mapping[str, Sequence[str]],
    ) -> web.StreamResponse:
        cluster = entry.cluster
        info = cluster.registry.lookup(ri.api_group, ri.api_version, ri.resource)
        if info is None:
            raise not_found_route()
        if ri.subresource and ri.subresource not in info.subresources:
            raise not_found_route()
        if len(ri.parts) > 3:
            raise not_found_route()
        # A namespaced resource is served under /namespaces/NS (except the all-namespaces list
        # and watch); a cluster-scoped one never is (the Namespace object's own path aside).
        is_namespace_object = ri.resource == "namespaces" and ri.namespace == ri.name
        if info.namespaced and not ri.namespace and ri.verb not in ("list", "watch"):
            raise not_found_route()
        if not info.namespaced and ri.namespace and not is_namespace_object:
            raise not_found_route()
        verb = ri.verb
        if verb not in info.verbs and not ri.subresource:
            raise method_not_allowed()
        body = b""
        if request.method in ("POST", "PUT", "PATCH", "DELETE"):
            body = await read_body(request)
        call = Call(
            request, cluster, ri, info, user, query, body, self.shutting_down, entry.authorizer
        )
        if verb == "watch":
            return await handle_watch(call)
        if info.group_resource == "pods" and ri.subresource == "log":
            # Streamed from the node (not shielded: a client that leaves ends the copy).
            if verb != "get":
                raise method_not_allowed()
            return await serve_pod_log(
                request, cluster.store, call.namespace, ri.name, query, self.shutting_down
            )
        handler = _VERB_HANDLERS.get(verb)
        if handler is None:
            raise method_not_allowed()
        # A client that goes away does not cancel a write half-way (aiohttp cancels the handler
        # of a closed connection; the verb finishes and its answer is dropped).
        return await asyncio.shield(handler(call))


def server_url(host: str, port: int) -> str:
    """``https://HOST:PORT`` (IPv6 literals bracketed)."""
    shown = f"[{host}]" if ":" in host else host
    return f"https://{shown}:{port}"


def _client_host(bind: str) -> str:
    """The address clients dial: the bind address, or loopback for a wildcard bind."""
    return "127.0.0.1" if bind in ("0.0.0.0", "", "::") else bind


async def start_server(config: ServerConfig) -> ServerHandle:
    """Open the data directory and every cluster, listen, write the kubeconfigs; the returned
    handle stops it. Raises :class:`ServerError` (or another ``NumaplaneError``) with one line
    naming what is wrong."""
    data_dir = config.data_dir
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ServerError(f"{data_dir}: cannot create data directory: {exc.strerror}") from exc
    if not data_dir.is_dir():
        raise ServerError(f"{data_dir}: not a directory")
    names = [DEFAULT_CLUSTER, *(check_cluster_name(n) for n in config.clusters)]
    if len(set(names)) != len(names):
        raise ServerError("--cluster: a cluster is named twice")
    pki = ensure_pki(data_dir, [config.bind])
    tokens = load_token_file(config.token_auth_file) if config.token_auth_file else {}
    signer = TokenSigner(pki.sa_key_pem)
    clusters: dict[str, tuple[Cluster, RBACAuthorizer]] = {}
    try:
        for name in names:
            clusters[name] = await open_cluster(name, data_dir, signer, pki.ca_cert_pem)
            clusters[name][0].kueue_job_defaulting = config.kueue_job_defaulting
        authenticator = Authenticator.create(pki.ca_cert_pem, tokens=tokens, signer=signer)
        app = ApiServer(pki, clusters, authenticator)
        web_app = web.Application()
        web_app.router.add_route("*", "/{tail:.*}", app.handle)
        runner = web.AppRunner(
            web_app, handler_cancellation=True, access_log=None, shutdown_timeout=5.0
        )
        await runner.setup()
        context: ssl.SSLContext = server_ssl_context(pki)
        site = web.TCPSite(runner, config.bind, config.port, ssl_context=context)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise ServerError(
                f"--bind {config.bind} --port {config.port}: cannot listen: {exc.strerror or exc}"
            ) from exc
    except BaseException:
        for cluster, _ in clusters.values():
            await cluster.close()
        raise
    port = int(runner.addresses[0][1]) if runner.addresses else config.port
    url = server_url(_client_host(config.bind), port)
    kubeconfig = data_dir / "admin.kubeconfig"
    write_kubeconfig(kubeconfig, url, pki)
    per_cluster: dict[str, Path] = {}
    for name in names[1:]:
        path = data_dir / f"{name}.kubeconfig"
        write_kubeconfig(path, f"{url}/clusters/{name}", pki, cluster_name=name)
        per_cluster[name] = path
    return ServerHandle(url, port, data_dir, kubeconfig, per_cluster, app, runner)
