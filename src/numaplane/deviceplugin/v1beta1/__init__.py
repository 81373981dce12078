"""The kubelet device plugin API v1beta1: generated stubs and upstream's constants.

``api_pb2`` / ``api_pb2_grpc`` are generated from ``api.proto`` by
``scripts/gen_deviceplugin.sh``; the names below mirror upstream's ``constants.go``.
"""

from __future__ import annotations

#: The device plugin API version this package speaks.
Version = "v1beta1"

#: Every version the registration server accepts (upstream ``SupportedVersions``).
SupportedVersions: tuple[str, ...] = (Version,)

#: Where the kubelet and device plugins put their unix sockets.
DevicePluginPath = "/var/lib/kubelet/device-plugins/"

#: The registration socket's file name inside ``DevicePluginPath``.
KubeletSocket = "kubelet.sock"

#: ``Device.health`` of a device that can be allocated.
Healthy = "Healthy"

#: ``Device.health`` of a device that cannot.
Unhealthy = "Unhealthy"

#: How long the kubelet waits for ``PreStartContainer`` (upstream, in seconds).
KubeletPreStartContainerRPCTimeoutInSecs = 30
