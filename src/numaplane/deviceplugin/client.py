"""``GrpcDeviceSource``: one registered device plugin, reached over its unix socket.

It implements the Device Manager's ``DeviceSource`` Protocol on top of the plugin's
``DevicePlugin`` service, and keeps the plugin's device list current by consuming
``ListAndWatch`` in a background thread. Every new list, and the all-unhealthy list once the
stream ends (the plugin went away), goes to a callback; the agent turns those into
``DeviceManager`` updates. The registration server creates these; tests and tools may too.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import grpc

from numaplane.deviceplugin.messages import (
    ContainerAllocation,
    PluginOptions,
    devices_from_response,
    serialize,
)
from numaplane.deviceplugin.v1beta1 import (
    KubeletPreStartContainerRPCTimeoutInSecs,
    api_pb2,
    api_pb2_grpc,
)
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.errors import DeviceSourceError

_log = logging.getLogger(__name__)

DevicesCallback = Callable[["GrpcDeviceSource", tuple[Device, ...]], None]
"""Called with a source and its new device list (from the source's watch thread)."""

#: How long the kubelet waits for a plugin's socket to accept a connection (upstream 10s).
DEFAULT_DIAL_TIMEOUT = 10.0

#: numaplane's bound on the unary calls (upstream has none for Allocate).
DEFAULT_RPC_TIMEOUT = 10.0


class DevicePluginError(DeviceSourceError):
    """Dialing or calling a device plugin failed; the message is the kubelet's wording."""


def rpc_error_text(error: grpc.RpcError) -> str:
    """A gRPC failure as Go's status error prints it: ``rpc error: code = X desc = Y``."""
    code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
    name = "".join(part.capitalize() for part in code.name.split("_"))
    details = error.details() if isinstance(error, grpc.Call) else str(error)
    return f"rpc error: code = {name} desc = {details}"


def unix_target(socket_path: str | Path) -> str:
    """The gRPC target naming an absolute unix socket path."""
    return "unix://" + str(Path(socket_path).absolute())


def dial(socket_path: str | Path, timeout: float) -> grpc.Channel:
    """A channel to ``socket_path`` once it accepts connections, or ``DevicePluginError``."""
    channel = grpc.insecure_channel(
        unix_target(socket_path), options=[("grpc.default_authority", "localhost")]
    )
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout)
    except grpc.FutureTimeoutError:
        channel.close()
        raise DevicePluginError(
            f"failed to dial device plugin: {socket_path}: context deadline exceeded"
        ) from None
    return channel


class GrpcDeviceSource:
    """A ``DeviceSource`` backed by a device plugin's gRPC server.

    Build one with ``connect`` (dials and reads the plugin's options), then ``start_watch`` to
    follow ``ListAndWatch``; ``close`` ends both and waits for the watch thread. All methods
    are safe to call from any thread.
    """

    def __init__(
        self,
        resource_name: str,
        socket_path: str | Path,
        channel: grpc.Channel,
        options: PluginOptions,
        rpc_timeout: float = DEFAULT_RPC_TIMEOUT,
    ) -> None:
        self._resource_name = resource_name
        self._socket_path = Path(socket_path)
        self._channel = channel
        self._stub = api_pb2_grpc.DevicePluginStub(channel)  # type: ignore[no-untyped-call]
        self._options = options
        self._rpc_timeout = rpc_timeout
        self._lock = threading.Lock()
        self._devices: tuple[Device, ...] = ()
        self._stream: grpc.Future | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self._active = False

    @classmethod
    def connect(
        cls,
        resource_name: str,
        socket_path: str | Path,
        dial_timeout: float = DEFAULT_DIAL_TIMEOUT,
        rpc_timeout: float = DEFAULT_RPC_TIMEOUT,
    ) -> GrpcDeviceSource:
        """Dial the plugin and read ``GetDevicePluginOptions``; ``DevicePluginError`` if not."""
        channel = dial(socket_path, dial_timeout)
        try:
            stub = api_pb2_grpc.DevicePluginStub(channel)  # type: ignore[no-untyped-call]
            answer = stub.GetDevicePluginOptions(api_pb2.Empty(), timeout=rpc_timeout)
        except grpc.RpcError as exc:
            channel.close()
            raise DevicePluginError(rpc_error_text(exc)) from None
        return cls(
            resource_name, socket_path, channel, PluginOptions.from_proto(answer), rpc_timeout
        )

    # -- DeviceSource ---------------------------------------------------------------------

    @property
    def resource_name(self) -> str:
        """The extended resource the plugin registered."""
        return self._resource_name

    @property
    def socket_path(self) -> Path:
        """The plugin's socket."""
        return self._socket_path

    @property
    def options(self) -> PluginOptions:
        """The plugin's ``DevicePluginOptions``."""
        return self._options

    @property
    def active(self) -> bool:
        """Whether ``ListAndWatch`` is running (false before ``start_watch`` and once it ends)."""
        with self._lock:
            return self._active

    def devices(self) -> Sequence[Device]:
        """The latest device list (all unhealthy once the plugin went away)."""
        with self._lock:
            return self._devices

    def get_preferred_allocation(
        self, available: Sequence[str], must_include: Sequence[str], size: int
    ) -> Sequence[str] | None:
        """The plugin's choice, or ``None`` when its options do not offer the call."""
        if not self._options.get_preferred_allocation_available:
            return None
        request = api_pb2.PreferredAllocationRequest(
            container_requests=[
                api_pb2.ContainerPreferredAllocationRequest(
                    available_deviceIDs=list(available),
                    must_include_deviceIDs=list(must_include),
                    allocation_size=size,
                )
            ]
        )
        answer = self._call(self._stub.GetPreferredAllocation, request, self._rpc_timeout)
        if not answer.container_responses:
            raise DevicePluginError("no containers return in preferred allocation response")
        return tuple(answer.container_responses[0].deviceIDs)

    def allocate(self, device_ids: Sequence[str]) -> bytes:
        """``Allocate`` for one container: the serialised ``ContainerAllocateResponse``."""
        return serialize(self._allocate_message(device_ids))

    # -- beyond the Protocol ----------------------------------------------------------------

    def allocate_container(self, device_ids: Sequence[str]) -> ContainerAllocation:
        """``Allocate`` for one container, parsed (envs, mounts, device nodes, ...)."""
        return ContainerAllocation.from_proto(self._allocate_message(device_ids))

    def pre_start_container(self, device_ids: Sequence[str]) -> None:
        """``PreStartContainer`` when the plugin asked for it; a no-op otherwise."""
        if not self._options.pre_start_required:
            return
        request = api_pb2.PreStartContainerRequest(devices_ids=list(device_ids))
        self._call(
            self._stub.PreStartContainer, request, float(KubeletPreStartContainerRPCTimeoutInSecs)
        )

    def _allocate_message(self, device_ids: Sequence[str]) -> api_pb2.ContainerAllocateResponse:
        request = api_pb2.AllocateRequest(
            container_requests=[api_pb2.ContainerAllocateRequest(devices_ids=list(device_ids))]
        )
        answer = self._call(self._stub.Allocate, request, self._rpc_timeout)
        if not answer.container_responses:
            raise DevicePluginError("no containers return in allocation response")
        response: api_pb2.ContainerAllocateResponse = answer.container_responses[0]
        return response

    def _call(self, method: Callable[..., Any], request: object, timeout: float) -> Any:
        with self._lock:
            if self._closed:
                raise DevicePluginError(
                    f"device plugin for {self._resource_name} at {self._socket_path} is stopped"
                )
        try:
            return method(request, timeout=timeout)
        except grpc.RpcError as exc:
            raise DevicePluginError(rpc_error_text(exc)) from None
        except ValueError as exc:  # the channel was closed under the call
            raise DevicePluginError(str(exc)) from None

    # -- ListAndWatch -----------------------------------------------------------------------

    def start_watch(
        self,
        callback: DevicesCallback,
        on_end: Callable[[GrpcDeviceSource], None] | None = None,
    ) -> None:
        """Follow ``ListAndWatch`` in a daemon thread, calling ``callback`` on every list.

        When the stream ends without ``close``, every device is marked unhealthy, ``callback``
        gets that list, then ``on_end`` runs. Callback errors are logged, never raised.
        """
        with self._lock:
            if self._thread is not None or self._closed:
                raise DevicePluginError("ListAndWatch already started or source closed")
            self._active = True
            self._thread = threading.Thread(
                target=self._watch,
                args=(callback, on_end),
                name=f"listandwatch-{self._resource_name}",
                daemon=True,
            )
            self._thread.start()

    def _watch(
        self, callback: DevicesCallback, on_end: Callable[[GrpcDeviceSource], None] | None
    ) -> None:
        try:
            stream = self._stub.ListAndWatch(api_pb2.Empty())
            with self._lock:
                self._stream = stream
                closed = self._closed
            if closed:
                stream.cancel()
            for response in stream:
                devices = devices_from_response(response)
                with self._lock:
                    if self._closed:
                        break
                    self._devices = devices
                _notify(callback, self, devices)
        except grpc.RpcError as exc:
            _log.info("ListAndWatch of %s ended: %s", self._resource_name, rpc_error_text(exc))
        except ValueError as exc:  # the channel was closed under the stream
            _log.info("ListAndWatch of %s ended: %s", self._resource_name, exc)
        with self._lock:
            self._active = False
            if self._closed:
                return
            self._devices = tuple(d.with_health(False) for d in self._devices)
            devices = self._devices
        _log.info("device plugin for %s went away: its devices are unhealthy", self._resource_name)
        _notify(callback, self, devices)
        if on_end is not None:
            on_end(self)

    def close(self, timeout: float = 5.0) -> None:
        """Stop following the plugin and close the channel; no callback runs after this."""
        with self._lock:
            self._closed = True
            stream, thread = self._stream, self._thread
        if stream is not None:
            stream.cancel()
        self._channel.close()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def __repr__(self) -> str:
        return f"GrpcDeviceSource({self._resource_name!r}, {str(self._socket_path)!r})"


def _notify(
    callback: DevicesCallback, source: GrpcDeviceSource, devices: tuple[Device, ...]
) -> None:
    try:
        callback(source, devices)
    except Exception:
        _log.exception("device callback for %s failed", source.resource_name)
