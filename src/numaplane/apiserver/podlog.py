"""``pods/log``: a container's log, proxied from the node that runs the pod, as upstream's
``LogREST`` (``pkg/registry/core/pod/rest/log.go``) with ``LogLocation`` and the
``LocationStreamer``.

The request's ``PodLogOptions`` come from the query and are validated with upstream's messages
(422 ``PodLogOptions "p" is invalid``); the container is chosen as ``validateContainer`` does (the
only one, else 400 ``a container name must be specified for pod p, choose one of: [a b]``);
a pod with no node yet answers 204 with no body, as upstream's null stream; otherwise the node's
address (InternalIP first, as kubeadm's ``--kubelet-preferred-address-types``) and
``daemonEndpoints.kubeletEndpoint.Port`` locate the node agent, whose
``/containerLogs/NS/POD/CONTAINER`` answer is streamed back (flushed as it comes with
``follow``). A non-2xx answer of the agent becomes upstream's error for it: 400 with the agent's
text (``container "c" in pod "p" is waiting to start: ContainerCreating``), 404 ``the server
could not find the requested resource ( pods/log p)``, 500 ``Internal error occurred: ...``.
Agents are reached over plain HTTP: numaplane's agent serves its HTTP API on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from numaplane.apiserver import errors
from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.http_options import first_value, parse_bool_param, parse_int_param
from numaplane.apiserver.storage import ClusterStore, ObjectKey

Query = Mapping[str, Sequence[str]]

#: kube-apiserver's ``--kubelet-port`` default, used when a Node does not publish its port.
DEFAULT_KUBELET_PORT = 10250
#: kubeadm's ``--kubelet-preferred-address-types`` (the order kube-apiserver dials a node in).
PREFERRED_ADDRESS_TYPES = ("InternalIP", "ExternalIP", "Hostname")
#: How much of an agent's error answer becomes the message (upstream's ``maxReadLength``).
MAX_ERROR_BYTES = 50_000
CONNECT_TIMEOUT_S = 10.0
CHUNK_BYTES = 64 * 1024
RESOURCE = "pods/log"


@dataclass(frozen=True)
class PodLogOptions:
    """core/v1 ``PodLogOptions`` as read from the query (``None``: not given)."""

    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    since_seconds: int | None = None
    since_time: datetime.datetime | None = None
    tail_lines: int | None = None
    limit_bytes: int | None = None

    def query(self) -> str:
        """The agent's query string, keys in the order Go's ``url.Values.Encode`` sorts them."""
        params: dict[str, str] = {}
        if self.follow:
            params["follow"] = "true"
        if self.previous:
            params["previous"] = "true"
        if self.timestamps:
            params["timestamps"] = "true"
        if self.since_seconds is not None:
            params["sinceSeconds"] = str(self.since_seconds)
        if self.since_time is not None:
            params["sinceTime"] = _rfc3339(self.since_time)
        if self.tail_lines is not None:
            params["tailLines"] = str(self.tail_lines)
        if self.limit_bytes is not None:
            params["limitBytes"] = str(self.limit_bytes)
        return urllib.parse.urlencode(sorted(params.items()))


def _rfc3339(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(value: str) -> datetime.datetime:
    try:
        moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as err:
        raise errors.bad_request(
            f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": cannot parse'
        ) from err
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)


def read_options(query: Query) -> PodLogOptions:
    """The ``PodLogOptions`` of a request's query (400 for a value that does not parse)."""
    since_time = first_value(query, "sinceTime")
    return PodLogOptions(
        container=first_value(query, "container"),
        follow=parse_bool_param(query, "follow"),
        previous=parse_bool_param(query, "previous"),
        timestamps=parse_bool_param(query, "timestamps"),
        since_seconds=parse_int_param(query, "sinceSeconds"),
        since_time=_parse_time(since_time) if since_time else None,
        tail_lines=parse_int_param(query, "tailLines"),
        limit_bytes=parse_int_param(query, "limitBytes"),
    )


def validate_options(options: PodLogOptions, name: str) -> None:
    """Upstream's ``ValidatePodLogOptions``: 422 ``PodLogOptions "NAME" is invalid: ...``."""
    problems: list[errors.FieldError] = []
    if options.tail_lines is not None and options.tail_lines < 0:
        problems.append(
            errors.invalid_value(
                "tailLines", options.tail_lines, "must be greater than or equal to 0"
            )
        )
    if options.limit_bytes is not None and options.limit_bytes < 1:
        problems.append(
            errors.invalid_value("limitBytes", options.limit_bytes, "must be greater than 0")
        )
    if options.since_seconds is not None and options.since_time is not None:
        problems.append(
            errors.forbidden_field(
                "", "at most one of `sinceTime` or `sinceSeconds` may be specified"
            )
        )
    elif options.since_seconds is not None and options.since_seconds < 1:
        problems.append(
            errors.invalid_value("sinceSeconds", options.since_seconds, "must be greater than 0")
        )
    if problems:
        raise errors.invalid("", "PodLogOptions", name, problems)


def _container_names(spec: Mapping[str, Any]) -> list[str]:
    """Every container of a pod spec in ``podutil.VisitContainers`` order: init containers,
    containers, ephemeral containers."""
    names: list[str] = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(key) or ():
            if isinstance(container, dict):
                names.append(str(container.get("name", "")))
    return names


def choose_container(pod: Mapping[str, Any], container: str) -> str:
    """Upstream's ``validateContainer``: the named container when the pod has it, else the only
    container; 400 otherwise, worded as upstream (Go prints the names as ``[a b]``)."""
    spec = pod.get("spec") or {}
    name = str((pod.get("metadata") or {}).get("name", ""))
    if container:
        if container not in _container_names(spec):
            raise errors.bad_request(f"container {container} is not valid for pod {name}")
        return container
    containers = spec.get("containers") or []
    if len(containers) == 1:
        return str(containers[0].get("name", ""))
    if not containers:
        raise errors.bad_request(f"a container name must be specified for pod {name}")
    choices = " ".join(_container_names(spec))
    raise errors.bad_request(
        f"a container name must be specified for pod {name}, choose one of: [{choices}]"
    )


def node_location(node: Mapping[str, Any] | None, node_name: str) -> str:
    """``HOST:PORT`` of a node's agent, as upstream's ``NodeConnectionInfoGetter``."""
    if node is None:
        raise errors.not_found("nodes", node_name)
    status = node.get("status") or {}
    addresses = [a for a in status.get("addresses") or () if isinstance(a, dict)]
    host = ""
    for kind in PREFERRED_ADDRESS_TYPES:
        host = next((str(a.get("address", "")) for a in addresses if a.get("type") == kind), "")
        if host:
            break
    if not host:
        known = " ".join(f"{{{a.get('type', '')} {a.get('address', '')}}}" for a in addresses)
        raise StatusError(500, "", f"no preferred addresses found; known addresses: [{known}]")
    endpoint = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint")) or {}
    port = endpoint.get("Port")
    if not isinstance(port, int) or isinstance(port, bool) or port <= 0:
        port = DEFAULT_KUBELET_PORT
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{port}"


def log_url(pod: Mapping[str, Any], container: str, location: str, options: PodLogOptions) -> str:
    """The agent URL of a container's log (upstream's ``LogLocation``)."""
    meta = pod.get("metadata") or {}
    path = "/containerLogs/{}/{}/{}".format(
        *(urllib.parse.quote(str(p), safe="") for p in (meta["namespace"], meta["name"], container))
    )
    query = options.query()
    return f"http://{location}{path}" + (f"?{query}" if query else "")


def agent_error(code: int, body: bytes, name: str) -> StatusError:
    """Upstream's ``GenericHttpResponseChecker``: an agent's non-2xx answer as an API error."""
    text = body[:MAX_ERROR_BYTES].decode(errors="replace")
    if code == 500:
        return errors.internal_error(text)
    if code == 400:
        return errors.bad_request(text)
    reason, message = _GENERIC.get(
        code,
        (
            "",
            f"the server responded with the status code {code} but did not return more information",
        ),
    )
    if code > 500 and code not in _GENERIC:
        reason = "InternalError"
        message = f'an error on the server ("{text}") has prevented the request from succeeding'
    # Upstream formats "(%s %s %s)" with the verb, which a streamer does not have: hence the
    # leading space, which kubectl users know from real clusters.
    details = {"name": name, "group": "", "kind": RESOURCE}
    return StatusError(code, reason, f"{message} ( {RESOURCE} {name})", details)


#: ``NewGenericServerResponse``'s reason and message per status code.
_GENERIC: dict[int, tuple[str, str]] = {
    401: ("Unauthorized", "the server has asked for the client to provide credentials"),
    403: ("Forbidden", "the server does not allow access to the requested resource"),
    404: ("NotFound", "the server could not find the requested resource"),
    405: ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
    409: ("Conflict", "the server reported a conflict"),
    422: ("Invalid", "the server rejected our request due to an error in our request"),
    429: (
        "TooManyRequests",
        "the server has received too many requests and has asked us to try again later",
    ),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    504: (
        "Timeout",
        "the server was unable to return a response in the time allotted, but may "
        "still be processing the request",
    ),
}


async def serve_pod_log(
    request: web.Request,
    store: ClusterStore,
    namespace: str,
    name: str,
    query: Query,
    shutting_down: asyncio.Event,
) -> web.StreamResponse:
    """Answer ``GET /api/v1/namespaces/NAMESPACE/pods/NAME/log`` from the pod's node agent."""
    options = read_options(query)
    validate_options(options, name)
    pod = store.get(ObjectKey("pods", namespace, name))
    if pod is None:
        raise errors.not_found("pods", name)
    container = choose_container(pod, options.container)
    node_name = str((pod.get("spec") or {}).get("nodeName") or "")
    if not node_name:
        # Upstream's LogLocation returns no location and the streamer a null stream: 204.
        return web.Response(status=204)
    location = node_location(store.get(ObjectKey("nodes", "", node_name)), node_name)
    url = log_url(pod, container, location, options)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT_S)
    async with aiohttp.ClientSession(timeout=timeout, auto_decompress=False) as session:
        try:
            upstream = await session.get(url, allow_redirects=False)
        except (aiohttp.ClientError, OSError, TimeoutError) as err:
            raise StatusError(500, "", f'Get "{url}": {err}') from err
        async with upstream:
            if not 200 <= upstream.status <= 206:
                raise agent_error(
                    upstream.status, await upstream.content.read(MAX_ERROR_BYTES), name
                )
            return await _relay(request, upstream, shutting_down)


async def _relay(
    request: web.Request, upstream: aiohttp.ClientResponse, shutting_down: asyncio.Event
) -> web.StreamResponse:
    """Copy the agent's answer to the client as it arrives (each chunk is sent at once, which is
    what ``follow`` needs), until the agent ends it, the client leaves or the server stops."""
    response = web.StreamResponse(status=200)
    response.content_type = "text/plain"
    response.enable_chunked_encoding()
    await response.prepare(request)
    stop = asyncio.ensure_future(shutting_down.wait())
    try:
        while True:
            read = asyncio.ensure_future(upstream.content.readany())
            done, _ = await asyncio.wait({read, stop}, return_when=asyncio.FIRST_COMPLETED)
            if read not in done:
                read.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
                    await read
                break
            try:
                chunk = read.result()
            except (aiohttp.ClientError, OSError):
                break  # the agent went away mid-stream: the log ends there, as upstream's copy
            if not chunk:
                break
            await response.write(chunk)
    finally:
        stop.cancel()
    with contextlib.suppress(ConnectionError):
        await response.write_eof()
    return response
