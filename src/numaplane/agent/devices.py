"""What each container's device plugins told the agent to give it (``Allocate`` answers).

The Device Manager keeps each answer, serialised, in its checkpoint (as the kubelet keeps
``AllocResp``), so a restarted agent reads it back instead of asking the plugin again; only
when it is missing is the plugin (a ``GrpcDeviceSource``) asked now. Answers are parsed once and
cached per container and resource. ``serve_device_plugins`` starts the registration server the
plugins register with.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path

from numaplane.deviceplugin.client import GrpcDeviceSource
from numaplane.deviceplugin.messages import ContainerAllocation
from numaplane.deviceplugin.registration import DeviceManagerSink, RegistrationServer
from numaplane.errors import NumaplaneError
from numaplane.node.devicemanager.manager import DeviceManager

_log = logging.getLogger(__name__)


class DeviceAllocations:
    """``Allocate`` answers of one node's containers; ``lock`` guards the Device Manager."""

    def __init__(self, manager: DeviceManager, lock: threading.RLock) -> None:
        self._manager = manager
        self._lock = lock
        self._cache: dict[tuple[str, str, str], ContainerAllocation] = {}

    def allocations(self, pod_uid: str, container: str) -> dict[str, ContainerAllocation]:
        """Per resource, the plugin's answer for the container's devices."""
        out: dict[str, ContainerAllocation] = {}
        with self._lock:
            held = self._manager.state.container_allocations(pod_uid, container)
            for resource, allocation in sorted(held.items()):
                key = (pod_uid, container, resource)
                cached = self._cache.get(key)
                if cached is None and allocation.alloc_resp:
                    cached = ContainerAllocation.from_bytes(allocation.alloc_resp)
                if cached is None:
                    source = self._manager.source(resource)
                    if isinstance(source, GrpcDeviceSource):
                        try:
                            cached = source.allocate_container(sorted(allocation.device_ids))
                        except NumaplaneError as err:
                            _log.error("Allocate of %s for %s failed: %s", resource, key, err)
                if cached is not None:
                    self._cache[key] = cached
                    out[resource] = cached
        return out

    def env(self, pod_uid: str, container: str) -> Mapping[str, str]:
        """The environment variables of every answer, merged in resource order."""
        env: dict[str, str] = {}
        for allocation in self.allocations(pod_uid, container).values():
            env.update(allocation.envs)
        return env

    def forget(self, pod_uid: str) -> None:
        """Drop the answers of a released pod."""
        with self._lock:
            for key in [k for k in self._cache if k[0] == pod_uid]:
                del self._cache[key]


def serve_device_plugins(
    manager: DeviceManager, lock: threading.RLock, plugin_dir: Path
) -> RegistrationServer:
    """Start the registration server in ``plugin_dir``: each plugin that registers there feeds
    its devices to ``manager``, under ``lock``."""
    server = RegistrationServer(
        callback=DeviceManagerSink(manager, lock=lock), plugin_dir=plugin_dir
    )
    server.start()
    return server
