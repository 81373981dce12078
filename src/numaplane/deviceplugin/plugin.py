"""The plugin side: ``DevicePluginServer``, a generic device plugin on ``DIR/<name>.sock``.

It serves a device list whose health can change (``ListAndWatch`` sends the whole list at start
and after every change), optionally answers ``GetPreferredAllocation`` through a function, and
answers ``Allocate`` with a ``ContainerAllocation`` (by default one environment variable naming
the devices). ``register`` announces it to the kubelet (or numaplane's agent), retrying until
the registration socket is there.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent import futures
from pathlib import Path

import grpc

from numaplane.deviceplugin.client import DevicePluginError, rpc_error_text, unix_target
from numaplane.deviceplugin.messages import (
    ContainerAllocation,
    DeviceSpec,
    PluginOptions,
    list_and_watch_response,
)
from numaplane.deviceplugin.registration import remove_stale_socket
from numaplane.deviceplugin.v1beta1 import (
    DevicePluginPath,
    KubeletSocket,
    Version,
    api_pb2,
    api_pb2_grpc,
)
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.source import PreferredAllocationFn

_log = logging.getLogger(__name__)

AllocateFn = Callable[[Sequence[str]], ContainerAllocation]
"""Builds one container's allocation from its device ids."""

#: The environment variable the default allocation sets to the comma-separated device ids.
DEFAULT_ENV_VAR = "NUMAPLANE_VISIBLE_DEVICES"

#: How often a ``ListAndWatch`` stream checks that its caller is still there.
_WATCH_POLL = 0.2


def env_allocator(
    env_var: str = DEFAULT_ENV_VAR,
    device_specs: Callable[[str], Sequence[DeviceSpec]] | None = None,
) -> AllocateFn:
    """An ``AllocateFn`` setting ``env_var=<id>,<id>,...`` plus each id's device nodes."""

    def allocate(device_ids: Sequence[str]) -> ContainerAllocation:
        specs = [s for i in device_ids for s in device_specs(i)] if device_specs else []
        return ContainerAllocation(envs={env_var: ",".join(device_ids)}, devices=tuple(specs))

    return allocate


class RegistrationError(DevicePluginError):
    """The kubelet refused the registration, or it did not answer in time."""


class DevicePluginServer:
    """A device plugin serving ``devices`` for ``resource_name``.

    ``preferred`` enables ``GetPreferredAllocation`` (``None`` from it: the plugin's default
    pick, the required devices then the first available ones); ``allocate`` builds
    ``Allocate`` answers (default: ``env_allocator()``). Ids unknown to the plugin make
    ``Allocate`` fail. All methods are thread-safe.
    """

    def __init__(
        self,
        resource_name: str,
        devices: Iterable[Device] = (),
        *,
        plugin_dir: str | Path = DevicePluginPath,
        socket_name: str | None = None,
        preferred: PreferredAllocationFn | None = None,
        allocate: AllocateFn | None = None,
        pre_start_required: bool = False,
        max_workers: int = 8,
    ) -> None:
        self._resource_name = resource_name
        self._dir = Path(plugin_dir)
        self._socket_name = socket_name or resource_name.replace("/", "_") + ".sock"
        self._preferred = preferred
        self._allocate = allocate if allocate is not None else env_allocator()
        self._options = PluginOptions(pre_start_required, preferred is not None)
        self._max_workers = max_workers
        self._changed = threading.Condition()
        self._devices: dict[str, Device] = {d.id: d for d in devices}
        self._generation = 0
        self._stopping = False
        self._server: grpc.Server | None = None

    @property
    def resource_name(self) -> str:
        """The resource it serves."""
        return self._resource_name

    @property
    def options(self) -> PluginOptions:
        """The options it advertises."""
        return self._options

    @property
    def socket_path(self) -> Path:
        """``plugin_dir/<socket_name>``."""
        return self._dir / self._socket_name

    # -- devices -----------------------------------------------------------------------------

    def devices(self) -> tuple[Device, ...]:
        """The current device list."""
        with self._changed:
            return tuple(self._devices.values())

    def set_devices(self, devices: Iterable[Device]) -> None:
        """Replace the device list; watchers get it when it differs from the current one."""
        new = {d.id: d for d in devices}
        with self._changed:
            if new == self._devices:
                return
            self._devices = new
            self._generation += 1
            self._changed.notify_all()

    def set_health(self, device_id: str, healthy: bool) -> None:
        """Change one device's health (``KeyError`` for an unknown id)."""
        with self._changed:
            devices = dict(self._devices)
        devices[device_id] = devices[device_id].with_health(healthy)
        self.set_devices(devices.values())

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Listen on the socket (a stale one is replaced)."""
        self._dir.mkdir(mode=0o750, parents=True, exist_ok=True)
        remove_stale_socket(self.socket_path)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=self._max_workers))
        api_pb2_grpc.add_DevicePluginServicer_to_server(_Servicer(self), server)  # type: ignore[no-untyped-call]
        server.add_insecure_port(unix_target(self.socket_path))
        with self._changed:
            self._stopping = False
        server.start()
        self._server = server

    def stop(self, grace: float | None = 0.5) -> None:
        """End every ``ListAndWatch`` stream, stop serving and remove the socket."""
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
        server, self._server = self._server, None
        if server is not None:
            server.stop(grace).wait()
        with contextlib.suppress(OSError):
            remove_stale_socket(self.socket_path)

    def __enter__(self) -> DevicePluginServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def register(
        self,
        kubelet_socket: str | Path | None = None,
        *,
        timeout: float | None = 30.0,
        retry_interval: float = 0.5,
        stop: threading.Event | None = None,
    ) -> None:
        """Register with the kubelet, retrying while its socket is missing or unreachable.

        ``kubelet_socket`` defaults to ``plugin_dir/kubelet.sock``. A refusal raises
        ``RegistrationError`` at once with the kubelet's message; so does running out of
        ``timeout`` (``None``: keep trying) or ``stop`` being set.
        """
        target = Path(kubelet_socket) if kubelet_socket else self._dir / KubeletSocket
        request = api_pb2.RegisterRequest(
            version=Version,
            endpoint=self._socket_name,
            resource_name=self._resource_name,
            options=self._options.to_proto(),
        )
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            last = f"{target} does not exist"
            if target.exists():
                try:
                    _register_once(target, request, retry_interval * 4)
                    _log.info("registered %s with %s", self._resource_name, target)
                    return
                except grpc.RpcError as exc:
                    if exc.code() not in (
                        grpc.StatusCode.UNAVAILABLE,
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                    ):
                        raise RegistrationError(rpc_error_text(exc)) from None
                    last = rpc_error_text(exc)
            if deadline is not None and time.monotonic() >= deadline:
                raise RegistrationError(f"cannot register with the kubelet: {last}")
            if stop is not None and stop.wait(retry_interval):
                raise RegistrationError("registration interrupted")
            if stop is None:
                time.sleep(retry_interval)

    # -- service -----------------------------------------------------------------------------

    def _watch(self, context: grpc.ServicerContext) -> Iterator[api_pb2.ListAndWatchResponse]:
        with self._changed:
            seen, devices = self._generation, tuple(self._devices.values())
        yield list_and_watch_response(devices)
        while True:
            with self._changed:
                while self._generation == seen and not self._stopping and context.is_active():
                    self._changed.wait(_WATCH_POLL)
                if self._stopping or not context.is_active():
                    return
                seen, devices = self._generation, tuple(self._devices.values())
            yield list_and_watch_response(devices)

    def _pick(self, request: api_pb2.ContainerPreferredAllocationRequest) -> list[str]:
        available = list(request.available_deviceIDs)
        must = list(request.must_include_deviceIDs)
        size = request.allocation_size
        chosen = self._preferred(available, must, size) if self._preferred else None
        if chosen is None:
            chosen = must + [i for i in available if i not in must]
        return list(chosen)[:size]

    def _allocate_one(self, device_ids: Sequence[str]) -> ContainerAllocation:
        with self._changed:
            unknown = [i for i in device_ids if i not in self._devices]
        if unknown:
            raise ValueError(f"unknown devices: {', '.join(unknown)}")
        return self._allocate(device_ids)


def _register_once(target: Path, request: api_pb2.RegisterRequest, timeout: float) -> None:
    with grpc.insecure_channel(
        unix_target(target), options=[("grpc.default_authority", "localhost")]
    ) as channel:
        stub = api_pb2_grpc.RegistrationStub(channel)  # type: ignore[no-untyped-call]
        stub.Register(request, timeout=timeout, wait_for_ready=True)


class _Servicer(api_pb2_grpc.DevicePluginServicer):
    def __init__(self, owner: DevicePluginServer) -> None:
        self._owner = owner

    def GetDevicePluginOptions(  # noqa: N802 (the generated service's method names)
        self, request: api_pb2.Empty, context: grpc.ServicerContext
    ) -> api_pb2.DevicePluginOptions:
        return self._owner.options.to_proto()

    def ListAndWatch(  # noqa: N802
        self, request: api_pb2.Empty, context: grpc.ServicerContext
    ) -> Iterator[api_pb2.ListAndWatchResponse]:
        return self._owner._watch(context)

    def GetPreferredAllocation(  # noqa: N802
        self, request: api_pb2.PreferredAllocationRequest, context: grpc.ServicerContext
    ) -> api_pb2.PreferredAllocationResponse:
        if not self._owner.options.get_preferred_allocation_available:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "GetPreferredAllocation not offered")
        return api_pb2.PreferredAllocationResponse(
            container_responses=[
                api_pb2.ContainerPreferredAllocationResponse(deviceIDs=self._owner._pick(r))
                for r in request.container_requests
            ]
        )

    def Allocate(  # noqa: N802
        self, request: api_pb2.AllocateRequest, context: grpc.ServicerContext
    ) -> api_pb2.AllocateResponse:
        responses = []
        for container in request.container_requests:
            try:
                allocation = self._owner._allocate_one(list(container.devices_ids))
            except ValueError as exc:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            responses.append(allocation.to_proto())
        return api_pb2.AllocateResponse(container_responses=responses)

    def PreStartContainer(  # noqa: N802
        self, request: api_pb2.PreStartContainerRequest, context: grpc.ServicerContext
    ) -> api_pb2.PreStartContainerResponse:
        return api_pb2.PreStartContainerResponse()
