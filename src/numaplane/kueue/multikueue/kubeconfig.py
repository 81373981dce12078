"""What a MultiKueueCluster's kubeconfig may be, as upstream's ``clustersReconciler`` checks it
(``loadClientConfig``, ``validateKubeconfig``, ``validateRestConfig``,
``validateKubeConfigPath``): the text from a Secret's ``kubeconfig`` key or from a file under
``/etc/multikueue/kubeconfigs/``, parsed and refused when it would let the manager read local
files or run local programs, or skip TLS checks.

Every refusal is a :class:`KubeconfigRejected` carrying upstream's condition reason
(``BadKubeConfig`` when the kubeconfig cannot be had, ``InsecureKubeConfig`` when it is refused)
and upstream's message; the caller prefixes ``load client config failed: ``.

Pure but for :func:`resolve_kubeconfig_path`, which resolves symlinks (a read-only look at the
file system, as upstream's ``filepath.EvalSymlinks``); reading the file is the caller's.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import os
import posixpath
import re
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import yaml

from numaplane.kube.config import KubeConfig, load_kubeconfig_text
from numaplane.kube.errors import KubeconfigError
from numaplane.kueue.errors import KueueError

REASON_BAD_KUBECONFIG: Final = "BadKubeConfig"
REASON_INSECURE_KUBECONFIG: Final = "InsecureKubeConfig"
REASON_CLUSTER_PROFILE_DISABLED: Final = "MultiKueueClusterProfileFeatureDisabled"
#: Where kubeconfig files must lie (FG ``MultiKueueKubeConfigPathValidation``, on by default).
DEFAULT_PATH_PREFIX: Final = "/etc/multikueue/kubeconfigs"
#: The Secret key holding the kubeconfig (upstream ``MultiKueueConfigSecretKey``).
SECRET_KEY: Final = "kubeconfig"
LOCATION_SECRET: Final = "Secret"
LOCATION_PATH: Final = "Path"

#: The Warning event on a MultiKueueCluster using a Path without path validation.
REASON_DEPRECATED_PATH: Final = "DeprecatedPathUsage"
MESSAGE_DEPRECATED_PATH: Final = (
    "Using locationType=Path without MultiKueueKubeConfigPathValidation feature gate is "
    "deprecated and will be removed in a future release. Enable the "
    "MultiKueueKubeConfigPathValidation feature gate and place kubeconfig files under "
    "/etc/multikueue/kubeconfigs/."
)

_NOT_UNDER_PREFIX: Final = "kubeconfig path is not under the allowed prefix"
_DNS1123_LABEL: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN: Final = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")


class KubeconfigRejected(KueueError):  # noqa: N818 - upstream's word for the condition
    """A worker kubeconfig that cannot be used: ``reason`` is the MultiKueueCluster condition
    reason, ``message`` upstream's error text; ``not_found`` marks a missing Secret, which
    upstream does not retry (the Secret's creation triggers the next attempt)."""

    def __init__(self, reason: str, message: str, *, not_found: bool = False) -> None:
        self.reason = reason
        self.message = message
        self.not_found = not_found
        super().__init__(message)


def go_quote(text: str) -> str:
    """``text`` as Go's ``%q`` prints a plain string (double quotes, backslash escapes)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def os_error_text(err: OSError) -> str:
    """The errno part of an ``OSError`` as Go prints a ``syscall.Errno`` (lower case:
    ``no such file or directory``)."""
    text = err.strerror or (os.strerror(err.errno) if err.errno else str(err))
    return text[:1].lower() + text[1:]


def os_error_message(op: str, path: str, err: OSError) -> str:
    """A Go ``*fs.PathError`` line: ``open /p: no such file or directory``."""
    return f"{op} {path}: {os_error_text(err)}"


# ----- Secret ---------------------------------------------------------------------------------


def kubeconfig_from_secret(secret: Mapping[str, Any] | None, name: str) -> str:
    """The kubeconfig text of Secret ``name`` (its ``data.kubeconfig``, base64 as the API serves
    it); ``None`` is a missing Secret."""
    if secret is None:
        raise KubeconfigRejected(
            REASON_BAD_KUBECONFIG, f"Secret {go_quote(name)} not found", not_found=True
        )
    data = secret.get("data") or {}
    if SECRET_KEY not in data:
        raise KubeconfigRejected(
            REASON_BAD_KUBECONFIG,
            f"key {go_quote(SECRET_KEY)} not found in secret {go_quote(name)}",
        )
    try:
        raw = base64.b64decode(str(data[SECRET_KEY] or ""), validate=True)
    except (binascii.Error, ValueError):
        # The API server refuses such a Secret; a hand-made object could still carry one.
        raise KubeconfigRejected(
            REASON_BAD_KUBECONFIG, f"secret {go_quote(name)}: illegal base64 data"
        ) from None
    return raw.decode("utf-8", "replace")


# ----- Path -----------------------------------------------------------------------------------


def resolve_kubeconfig_path(
    raw: str, *, validate: bool = True, prefix: str = DEFAULT_PATH_PREFIX
) -> str:
    """The file to read for a ``Path`` location: ``raw`` itself without validation (upstream's
    deprecated behaviour), else the absolute, ``..``-free, symlink-resolved path, refused unless
    it lies under ``prefix`` (itself resolved)."""
    if not validate:
        return raw
    if not raw:
        raise KubeconfigRejected(REASON_BAD_KUBECONFIG, "kubeconfig path must not be empty")
    cleaned = posixpath.normpath(raw)
    if ".." in cleaned.split("/"):
        raise KubeconfigRejected(
            REASON_BAD_KUBECONFIG, f"{_NOT_UNDER_PREFIX}: path contains {go_quote('..')}"
        )
    if not posixpath.isabs(cleaned):
        raise KubeconfigRejected(
            REASON_BAD_KUBECONFIG, f"{_NOT_UNDER_PREFIX}: path must be absolute"
        )
    clean_prefix = posixpath.normpath(prefix)
    try:
        allowed = os.path.realpath(clean_prefix, strict=True)
    except OSError:
        # No prefix directory: nothing can lie under it.
        raise KubeconfigRejected(
            REASON_BAD_KUBECONFIG,
            f"{_NOT_UNDER_PREFIX}: {go_quote(cleaned)} is not under {go_quote(clean_prefix)}",
        ) from None
    try:
        resolved = os.path.realpath(cleaned, strict=True)
    except OSError as err:
        where = str(err.filename) if err.filename else cleaned
        raise KubeconfigRejected(
            REASON_BAD_KUBECONFIG,
            "cannot resolve kubeconfig path symlinks: " + os_error_message("lstat", where, err),
        ) from None
    # The trailing separator keeps "/etc/kueue" from matching "/etc/kueue-other".
    if not (resolved + "/").startswith(allowed.rstrip("/") + "/"):
        raise KubeconfigRejected(
            REASON_BAD_KUBECONFIG,
            f"{_NOT_UNDER_PREFIX}: {go_quote(resolved)} is not under {go_quote(allowed)}",
        )
    return resolved


def check_path(path: str, *, validate: bool, prefix: str = DEFAULT_PATH_PREFIX) -> None:
    """Refuse ``path`` as :func:`resolve_kubeconfig_path` does (``KubeconfigRejected``)."""
    resolve_kubeconfig_path(path, validate=validate, prefix=prefix)


# ----- the kubeconfig itself ------------------------------------------------------------------


def _insecure(message: str) -> KubeconfigRejected:
    return KubeconfigRejected(REASON_INSECURE_KUBECONFIG, message)


def _entries(doc: Mapping[str, Any], section: str) -> list[tuple[str, Mapping[str, Any]]]:
    # (name, body) of a kubeconfig section, malformed entries skipped: the loader names them.
    inner = section[:-1]
    found = []
    for entry in doc.get(section) or []:
        if isinstance(entry, Mapping):
            body = entry.get(inner) or {}
            found.append((str(entry.get("name") or ""), body if isinstance(body, Mapping) else {}))
    return found


def _split_host_port(hostport: str) -> str:
    # Go's net.SplitHostPort's host, or the whole text where it fails (as upstream falls back).
    if hostport.startswith("["):
        end = hostport.find("]")
        if end > 0 and hostport[end + 1 : end + 2] == ":":
            return hostport[1:end]
        return hostport
    if hostport.count(":") == 1:
        return hostport.split(":", 1)[0]
    return hostport


def is_valid_server(server: str) -> bool:
    """Whether the server URL's host is an IP address or a DNS-1123 subdomain (upstream
    ``isValidHostname``, on the lower-cased URL)."""
    try:
        netloc = urlsplit(server.lower()).netloc
    except ValueError:
        return False
    host = _split_host_port(netloc.rpartition("@")[2])
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    return len(host) <= 253 and _DNS1123_SUBDOMAIN.fullmatch(host) is not None


def _check_document(doc: Mapping[str, Any]) -> None:
    # validateKubeconfig's walk over every user and cluster, in document order.
    for _, user in _entries(doc, "users"):
        if user.get("tokenFile"):
            raise _insecure("tokenFile is not allowed")
    for name, cluster in _entries(doc, "clusters"):
        if cluster.get("insecure-skip-tls-verify"):
            raise _insecure(f"insecure TLS verification is not allowed for cluster {name}")
        if cluster.get("certificate-authority"):
            raise _insecure(
                "certificate-authority file paths are not allowed, "
                f"use certificate-authority-data for cluster {name}"
            )
        if not cluster.get("server"):
            raise _insecure(f"server URL is required for cluster {name}")


def _check_chosen(doc: Mapping[str, Any]) -> None:
    # validateRestConfig on what the current context resolves to.
    contexts = dict(_entries(doc, "contexts"))
    context = contexts.get(str(doc.get("current-context") or ""))
    if context is None:
        return  # the loader reports the missing context
    cluster = dict(_entries(doc, "clusters")).get(str(context.get("cluster") or ""))
    user = dict(_entries(doc, "users")).get(str(context.get("user") or "")) or {}
    if cluster is not None and not is_valid_server(str(cluster.get("server") or "")):
        raise _insecure("untrusted server endpoint")
    if user.get("username") or user.get("password"):
        raise _insecure("basic auth is not allowed")
    if user.get("exec"):
        raise _insecure("exec plugins are not allowed")
    if user.get("auth-provider"):
        raise _insecure("auth providers are not allowed")


def parse_worker_kubeconfig(text: str, *, source: str) -> KubeConfig:
    """The connection settings of a worker kubeconfig, or :class:`KubeconfigRejected`
    (``InsecureKubeConfig``) naming the first thing upstream refuses; ``source`` names the
    kubeconfig in the loader's own errors."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        detail = " ".join(str(err).split())
        raise _insecure(f"failed to parse kubeconfig(apiconfig): {detail}") from None
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise _insecure("failed to parse kubeconfig(apiconfig): not a kubeconfig mapping")
    if not doc.get("clusters") and not doc.get("contexts") and not doc.get("users"):
        # clientcmd's answer for an empty kubeconfig (an empty Secret key, say).
        raise _insecure(
            "invalid configuration: no configuration has been provided, "
            "try setting KUBERNETES_MASTER environment variable"
        )
    _check_document(doc)
    _check_chosen(doc)
    try:
        return load_kubeconfig_text(text, source)
    except KubeconfigError as err:
        raise _insecure(str(err)) from None
