"""The agent's read-only HTTP endpoints (the kubelet's read-only port, loopback by default).

- ``/healthz``: ``ok``;
- ``/pods``: JSON list of the pods (see ``views.pods_view``);
- ``/metrics``: Prometheus exposition of the resource managers' metrics;
- ``/topology``: per NUMA node capacity, allocatable and available resources;
- ``/containerLogs/{namespace}/{pod}/{container}``: a container's output, the kubelet's path
  (the API server proxies ``pods/log`` there), see ``numaplane.agent.logs``.

``AgentHTTPServer`` serves on a daemon thread (stdlib ``ThreadingHTTPServer``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from numaplane.agent.agent import Agent
from numaplane.agent.logs import LOGS_PREFIX, LogRequest, LogsError, find_log, stream_log
from numaplane.agent.metrics import CONTENT_TYPE, exposition, node_registry
from numaplane.agent.views import pods_view, topology_view
from numaplane.errors import InputError

_log = logging.getLogger(__name__)

#: Where the agent listens unless told otherwise (the kubelet's read-only port, on loopback).
DEFAULT_LISTEN = "127.0.0.1:10255"


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) as a pair; ``InputError`` when malformed."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise InputError("--listen", f"expected HOST:PORT, got {value!r}")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


class AgentHTTPServer:
    """Serves one agent's endpoints on ``address``; ``start``/``stop`` or a ``with`` block."""

    def __init__(self, agent: Agent, address: tuple[str, int]) -> None:
        registry = node_registry(agent.node, agent.lock, agent.registered_plugins)
        routes: dict[str, Callable[[], tuple[str, bytes]]] = {
            "/healthz": lambda: ("text/plain; charset=utf-8", b"ok"),
            "/pods": lambda: _json(pods_view(agent)),
            "/topology": lambda: _json(topology_view(agent)),
            "/metrics": lambda: (CONTENT_TYPE, exposition(registry)),
        }
        handler = _handler(routes, agent)
        self._server = ThreadingHTTPServer(address, handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        """The bound host and port (the port is real when 0 was asked for)."""
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        """Serve on a daemon thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="agent-http", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5.0)

    def __enter__(self) -> AgentHTTPServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _json(doc: Any) -> tuple[str, bytes]:
    return "application/json", (json.dumps(doc, indent=1) + "\n").encode()


def _handler(
    routes: dict[str, Callable[[], tuple[str, bytes]]], agent: Agent
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "numaplane-agent"

        def do_GET(self) -> None:
            if self.path.startswith(LOGS_PREFIX):
                self._logs()
                return
            route = routes.get(self.path.split("?", 1)[0].rstrip("/") or "/")
            if route is None:
                self._send(HTTPStatus.NOT_FOUND, "text/plain; charset=utf-8", b"not found\n")
                return
            try:
                content_type, body = route()
            except Exception as err:
                _log.exception("GET %s failed", self.path)
                message = f"internal error: {err}\n".encode()
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, "text/plain", message)
                return
            self._send(HTTPStatus.OK, content_type, body)

        def _logs(self) -> None:
            try:
                request = LogRequest.parse(self.path)
                log = find_log(agent, request)
            except LogsError as err:
                body = f"{err}\n".encode()
                self._send(err.status, "text/plain; charset=utf-8", body)
                return
            # No length: the answer ends when the connection closes (HTTP/1.0), which a
            # followed log needs.
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            # The client going away ends a follow.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                stream_log(log, request, self.wfile.write, self.wfile.flush)

        def _send(self, status: HTTPStatus, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            _log.debug("%s " + format, self.address_string(), *args)

    return Handler
