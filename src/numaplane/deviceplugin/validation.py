"""Checks the registration server applies to a ``RegisterRequest``, with upstream's messages.

The version and resource-name checks and their wording follow the kubelet
(``devicemanager/plugin/v1beta1``). The endpoint check is numaplane's: the kubelet joins the
endpoint to its socket directory unchecked, numaplane refuses anything but a plain file name so
a plugin cannot point it at a socket outside the directory.
"""

from __future__ import annotations

from numaplane.api.resourcenames import is_extended_resource_name, is_qualified_name
from numaplane.deviceplugin.v1beta1 import SupportedVersions
from numaplane.gofmt import go_quote

__all__ = ["is_extended_resource_name", "is_qualified_name", "version_error"]


def version_error(version: str) -> str | None:
    """Upstream's message when ``version`` is not supported, else ``None``."""
    if version in SupportedVersions:
        return None
    supported = "[" + " ".join(go_quote(v) for v in SupportedVersions) + "]"
    return (
        f"requested API version {go_quote(version)} is not supported by kubelet. "
        f"Supported version is {supported}"
    )


def resource_name_error(resource_name: str) -> str | None:
    """Upstream's message when ``resource_name`` is not an extended resource, else ``None``."""
    if is_extended_resource_name(resource_name):
        return None
    return f"the ResourceName {go_quote(resource_name)} is invalid"


def endpoint_error(endpoint: str) -> str | None:
    """Why ``endpoint`` is not a socket file name inside the plugin directory, else ``None``."""
    if endpoint in ("", ".", "..") or "/" in endpoint or "\x00" in endpoint:
        return (
            f"the endpoint {go_quote(endpoint)} is invalid: "
            "it must be a socket file name in the device plugin directory"
        )
    return None
