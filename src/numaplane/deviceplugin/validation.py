"""Checks the registration server applies to a ``RegisterRequest``, with upstream's messages.

The version and resource-name checks and their wording follow the kubelet
(``devicemanager/plugin/v1beta1``). The endpoint check is numaplane's: the kubelet joins the
endpoint to its socket directory unchecked, numaplane refuses anything but a plain file name so
a plugin cannot point it at a socket outside the directory.
"""

from __future__ import annotations

import re

from numaplane.deviceplugin.v1beta1 import SupportedVersions
from numaplane.gofmt import go_quote

_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")
_QUOTA_PREFIX = "requests."
_NATIVE_PREFIX = "kubernetes.io/"


def is_qualified_name(value: str) -> bool:
    """Whether ``value`` is ``[prefix/]name`` as Kubernetes validates label keys."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(prefix):
            return False
    else:
        return False
    return 0 < len(name) <= 63 and _QUALIFIED_NAME.fullmatch(name) is not None


def is_extended_resource_name(name: str) -> bool:
    """Whether ``name`` is an extended resource (upstream ``IsExtendedResourceName``).

    It must carry a domain that is not ``kubernetes.io``, must not already be a quota name
    (``requests.``), and must stay a qualified name once ``requests.`` is put in front of it.
    """
    if "/" not in name or _NATIVE_PREFIX in name or name.startswith(_QUOTA_PREFIX):
        return False
    return is_qualified_name(_QUOTA_PREFIX + name)


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
