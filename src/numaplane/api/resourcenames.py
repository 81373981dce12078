"""Kubernetes resource-name rules shared by the device plugin server, device inventories and the
predicate admission: one ``IsExtendedResourceName`` (``pkg/apis/core/v1/helper``) for all three.
"""

from __future__ import annotations

import re

_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")
QUOTA_PREFIX = "requests."
"""Resource quota's prefix: ``requests.example.com/gpu`` is a quota name, not a resource."""
NATIVE_NAMESPACE = "kubernetes.io/"
"""Names in this namespace (or a subdomain of it) are Kubernetes' own."""


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
    if "/" not in name or NATIVE_NAMESPACE in name or name.startswith(QUOTA_PREFIX):
        return False
    return is_qualified_name(QUOTA_PREFIX + name)
