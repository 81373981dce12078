"""The kubelet side of device plugin registration: ``RegistrationServer`` on ``kubelet.sock``.

A plugin calls ``Register``; the server checks the request as the kubelet does, dials the
plugin's socket in the same directory, reads its options and follows its ``ListAndWatch``
through a ``GrpcDeviceSource``. Device lists reach the agent through one callback;
``DeviceManagerSink`` is the callback that keeps a ``DeviceManager`` current.

A plugin that registers again for the same resource replaces the previous connection, which is
closed without a last callback; a plugin whose stream ends has its devices reported unhealthy.
"""

from __future__ import annotations

import contextlib
import logging
import stat
import threading
from collections.abc import Callable, Sequence
from concurrent import futures
from pathlib import Path

import grpc

from numaplane.deviceplugin.client import (
    DEFAULT_DIAL_TIMEOUT,
    DEFAULT_RPC_TIMEOUT,
    DevicePluginError,
    DevicesCallback,
    GrpcDeviceSource,
    unix_target,
)
from numaplane.deviceplugin.v1beta1 import DevicePluginPath, KubeletSocket, api_pb2, api_pb2_grpc
from numaplane.deviceplugin.validation import endpoint_error, resource_name_error, version_error
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.manager import DeviceManager

_log = logging.getLogger(__name__)


def remove_stale_socket(path: Path) -> None:
    """Remove a socket left by an earlier run (anything else at ``path`` is an error)."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise FileExistsError(f"{path} exists and is not a socket")
    path.unlink()


class RegistrationServer:
    """The ``Registration`` service on ``plugin_dir/kubelet.sock``.

    ``callback`` receives every device list of every registered plugin (see
    ``GrpcDeviceSource.start_watch``). Use as a context manager or call ``start``/``stop``.
    """

    def __init__(
        self,
        callback: DevicesCallback,
        plugin_dir: str | Path = DevicePluginPath,
        *,
        dial_timeout: float = DEFAULT_DIAL_TIMEOUT,
        rpc_timeout: float = DEFAULT_RPC_TIMEOUT,
        max_workers: int = 4,
    ) -> None:
        self._callback = callback
        self._dir = Path(plugin_dir)
        self._dial_timeout = dial_timeout
        self._rpc_timeout = rpc_timeout
        self._max_workers = max_workers
        self._lock = threading.Lock()
        # Held across one registration's swap of sources so two registrations of a resource
        # cannot interleave their close and start.
        self._register_lock = threading.Lock()
        self._sources: dict[str, GrpcDeviceSource] = {}
        self._server: grpc.Server | None = None
        self._stopping = False

    @property
    def plugin_dir(self) -> Path:
        """The directory holding the kubelet's and the plugins' sockets."""
        return self._dir

    @property
    def socket_path(self) -> Path:
        """``plugin_dir/kubelet.sock``."""
        return self._dir / KubeletSocket

    def start(self) -> None:
        """Create the directory, replace a stale socket and start serving."""
        self._dir.mkdir(mode=0o750, parents=True, exist_ok=True)
        remove_stale_socket(self.socket_path)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=self._max_workers))
        api_pb2_grpc.add_RegistrationServicer_to_server(_Servicer(self), server)  # type: ignore[no-untyped-call]
        server.add_insecure_port(unix_target(self.socket_path))
        server.start()
        with self._lock:
            self._server = server
            self._stopping = False

    def stop(self, grace: float | None = None) -> None:
        """Stop serving, disconnect every plugin (without callbacks) and remove the socket."""
        with self._lock:
            server, self._server = self._server, None
            self._stopping = True
            sources = list(self._sources.values())
            self._sources.clear()
        if server is not None:
            server.stop(grace).wait()
        for source in sources:
            source.close()
        with contextlib.suppress(OSError):
            remove_stale_socket(self.socket_path)

    def __enter__(self) -> RegistrationServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def sources(self) -> dict[str, GrpcDeviceSource]:
        """The connected plugins by resource name."""
        with self._lock:
            return dict(self._sources)

    def source(self, resource_name: str) -> GrpcDeviceSource | None:
        """The connected plugin of one resource."""
        with self._lock:
            return self._sources.get(resource_name)

    def register(self, request: api_pb2.RegisterRequest) -> None:
        """Validate and connect one registration; ``DevicePluginError`` with the reason if not."""
        for problem in (
            version_error(request.version),
            resource_name_error(request.resource_name),
            endpoint_error(request.endpoint),
        ):
            if problem is not None:
                _log.info("bad registration request for %r: %s", request.resource_name, problem)
                raise DevicePluginError(problem)
        source = GrpcDeviceSource.connect(
            request.resource_name,
            self._dir / request.endpoint,
            dial_timeout=self._dial_timeout,
            rpc_timeout=self._rpc_timeout,
        )
        with self._register_lock:
            with self._lock:
                old = None if self._stopping else self._sources.get(request.resource_name)
                if not self._stopping:
                    self._sources[request.resource_name] = source
                stopping = self._stopping
            if stopping:
                source.close()
                raise DevicePluginError("the registration server is stopping")
            if old is not None:
                _log.info("device plugin for %s registered again", request.resource_name)
                old.close()
            source.start_watch(self._callback, on_end=self._forget)
        _log.info("registered device plugin for %s at %s", source.resource_name, source.socket_path)

    def _forget(self, source: GrpcDeviceSource) -> None:
        with self._lock:
            if self._sources.get(source.resource_name) is source:
                del self._sources[source.resource_name]


class _Servicer(api_pb2_grpc.RegistrationServicer):
    def __init__(self, owner: RegistrationServer) -> None:
        self._owner = owner

    def Register(  # noqa: N802 (the generated service's method name)
        self, request: api_pb2.RegisterRequest, context: grpc.ServicerContext
    ) -> api_pb2.Empty:
        try:
            self._owner.register(request)
        except DevicePluginError as exc:
            # The kubelet returns plain Go errors, which gRPC sends as code Unknown.
            context.abort(grpc.StatusCode.UNKNOWN, str(exc))
        return api_pb2.Empty()


class DeviceManagerSink:
    """A registration callback that keeps a ``DeviceManager`` in step with the plugins.

    The first list of a new connection registers the source (``add_source``, which also
    replaces an earlier connection of the same resource); later lists, including the
    all-unhealthy one sent when the plugin goes away, update the devices. ``lock`` guards the
    manager: pass the lock the agent holds around admissions.
    """

    def __init__(
        self,
        manager: DeviceManager,
        lock: threading.Lock | threading.RLock | None = None,
        on_change: Callable[[str, Sequence[Device]], None] | None = None,
    ) -> None:
        self._manager = manager
        self._lock = lock if lock is not None else threading.Lock()
        self._on_change = on_change

    def __call__(self, source: GrpcDeviceSource, devices: tuple[Device, ...]) -> None:
        """Apply one device list."""
        with self._lock:
            if self._manager.source(source.resource_name) is source:
                self._manager.update_devices(source.resource_name, devices)
            elif source.active:
                self._manager.add_source(source)
            else:
                # A connection that ended before the manager ever took it: nothing to mark.
                return
        if self._on_change is not None:
            self._on_change(source.resource_name, devices)
