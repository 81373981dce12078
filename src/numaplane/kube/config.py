"""Kubeconfig files, read as kubectl reads them (client-go's clientcmd), for what a controller
needs: the current context (or a named one), the cluster's server URL (which may carry a path
prefix such as ``https://127.0.0.1:6443/clusters/w1``), its CA, and the user's client
certificate, key or bearer token, each given inline (``*-data``, base64) or as a file path
relative to the kubeconfig's directory.

``KUBECONFIG`` may list several files (``:``-separated); as clientcmd merges them, the first file
that defines a name or the current context wins.
"""

from __future__ import annotations

import base64
import binascii
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from numaplane.kube.errors import KubeconfigError


@dataclass(frozen=True)
class KubeConfig:
    """Where and as whom to reach one cluster."""

    server: str
    ca_pem: bytes | None = None
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None
    token: str | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
    namespace: str = "default"
    context: str = ""
    source: str = ""

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS settings for an ``https`` server (``None`` for plain ``http``)."""
        if urlsplit(self.server).scheme != "https":
            return None
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        if self.insecure_skip_tls_verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif self.ca_pem is not None:
            context = ssl.create_default_context(cadata=self.ca_pem.decode("ascii", "replace"))
        if self.client_cert_pem is not None and self.client_key_pem is not None:
            # The ssl module loads a key pair from files only: write them to a private temporary
            # directory that is gone before this returns.
            with tempfile.TemporaryDirectory(prefix="numaplane-kube-") as tmp:
                cert, key = Path(tmp) / "client.crt", Path(tmp) / "client.key"
                cert.write_bytes(self.client_cert_pem)
                key.touch(mode=0o600)
                key.write_bytes(self.client_key_pem)
                try:
                    context.load_cert_chain(cert, key)
                except ssl.SSLError as err:
                    raise KubeconfigError(
                        self.source, f"client certificate or key unusable: {err}", "users"
                    ) from None
        return context


def default_paths() -> list[Path]:
    """``$KUBECONFIG``'s files, else ``~/.kube/config``."""
    listed = os.environ.get("KUBECONFIG", "")
    if listed:
        return [Path(p) for p in listed.split(os.pathsep) if p]
    return [Path.home() / ".kube" / "config"]


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise KubeconfigError(str(path), f"cannot read: {err.strerror or err}") from None
    return _parse(text, path)


def _parse(text: str, path: Path) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise KubeconfigError(str(path), f"not YAML: {' '.join(str(err).split())}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise KubeconfigError(str(path), "not a kubeconfig (expected a mapping)")
    return doc


def _named(doc: dict[str, Any], section: str, path: Path) -> dict[str, tuple[dict[str, Any], Path]]:
    entries = doc.get(section) or []
    if not isinstance(entries, list):
        raise KubeconfigError(str(path), "expected a list", section)
    found: dict[str, tuple[dict[str, Any], Path]] = {}
    inner = section[:-1]  # clusters -> cluster
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise KubeconfigError(str(path), "expected a mapping with a name", f"{section}[{i}]")
        body = entry.get(inner) or {}
        if not isinstance(body, dict):
            raise KubeconfigError(str(path), "expected a mapping", f"{section}[{i}].{inner}")
        found.setdefault(entry["name"], (body, path))
    return found


def _bytes(body: dict[str, Any], field: str, where: str, path: Path, base: Path) -> bytes | None:
    """``field-data`` (base64) or ``field`` (a file, relative to the kubeconfig's directory)."""
    data = body.get(f"{field}-data")
    if data:
        try:
            return base64.b64decode(str(data), validate=True)
        except (binascii.Error, ValueError):
            raise KubeconfigError(str(path), "not valid base64", f"{where}.{field}-data") from None
    file = body.get(field)
    if file:
        target = Path(os.path.expanduser(str(file)))
        target = target if target.is_absolute() else base / target
        try:
            return target.read_bytes()
        except OSError as err:
            raise KubeconfigError(
                str(path), f"cannot read {target}: {err.strerror or err}", f"{where}.{field}"
            ) from None
    return None


def load_kubeconfig(path: Path | str | None = None, *, context: str | None = None) -> KubeConfig:
    """The connection settings of ``context`` (default: the current context) in the kubeconfig
    at ``path`` (default: ``$KUBECONFIG`` or ``~/.kube/config``)."""
    paths = [Path(path)] if path is not None else default_paths()
    docs = [(_read(p), p) for p in paths if path is not None or p.exists()]
    return _resolve(docs, str(paths[0]), context)


def load_kubeconfig_text(text: str, source: str, *, context: str | None = None) -> KubeConfig:
    """As :func:`load_kubeconfig`, for a kubeconfig held in memory (a Secret's data, a file
    read elsewhere): ``source`` names it in errors, and file paths in it are relative to
    ``source``'s directory."""
    return _resolve([(_parse(text, Path(source)), Path(source))], source, context)


def _resolve(
    docs: list[tuple[dict[str, Any], Path]], source: str, context: str | None
) -> KubeConfig:
    # The merged documents' chosen context, as clientcmd merges them (the first wins).
    clusters: dict[str, tuple[dict[str, Any], Path]] = {}
    users: dict[str, tuple[dict[str, Any], Path]] = {}
    contexts: dict[str, tuple[dict[str, Any], Path]] = {}
    current = ""
    for doc, p in docs:
        for name, entry in _named(doc, "clusters", p).items():
            clusters.setdefault(name, entry)
        for name, entry in _named(doc, "users", p).items():
            users.setdefault(name, entry)
        for name, entry in _named(doc, "contexts", p).items():
            contexts.setdefault(name, entry)
        current = current or str(doc.get("current-context") or "")
    chosen = context or current
    if not chosen:
        raise KubeconfigError(source, "no context chosen and none current", "current-context")
    if chosen not in contexts:
        raise KubeconfigError(source, f"context {chosen!r} not found", "contexts")
    ctx, ctx_path = contexts[chosen]
    cluster_name = str(ctx.get("cluster") or "")
    if cluster_name not in clusters:
        raise KubeconfigError(
            str(ctx_path), f"cluster {cluster_name!r} not found", f"contexts[{chosen}].cluster"
        )
    cluster, cluster_path = clusters[cluster_name]
    where = f"clusters[{cluster_name}].cluster"
    server = str(cluster.get("server") or "")
    if urlsplit(server).scheme not in ("http", "https") or not urlsplit(server).netloc:
        raise KubeconfigError(
            str(cluster_path), f"not an http(s) URL: {server!r}", f"{where}.server"
        )
    user_name = str(ctx.get("user") or "")
    user: dict[str, Any] = {}
    user_path = ctx_path
    if user_name:
        if user_name not in users:
            raise KubeconfigError(
                str(ctx_path), f"user {user_name!r} not found", f"contexts[{chosen}].user"
            )
        user, user_path = users[user_name]
    uwhere = f"users[{user_name}].user"
    for unsupported in ("exec", "auth-provider"):
        if user.get(unsupported):
            raise KubeconfigError(str(user_path), "not supported", f"{uwhere}.{unsupported}")
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token_bytes = _bytes(
            {"tokenFile": user["tokenFile"]}, "tokenFile", uwhere, user_path, user_path.parent
        )
        token = (token_bytes or b"").decode("utf-8", "replace").strip()
    cert = _bytes(user, "client-certificate", uwhere, user_path, user_path.parent)
    key = _bytes(user, "client-key", uwhere, user_path, user_path.parent)
    if (cert is None) != (key is None):
        missing = "client-key" if key is None else "client-certificate"
        raise KubeconfigError(
            str(user_path), "required with the other half of the pair", f"{uwhere}.{missing}"
        )
    return KubeConfig(
        server=server.rstrip("/"),
        ca_pem=_bytes(cluster, "certificate-authority", where, cluster_path, cluster_path.parent),
        client_cert_pem=cert,
        client_key_pem=key,
        token=str(token) if token else None,
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify")),
        tls_server_name=str(cluster["tls-server-name"]) if cluster.get("tls-server-name") else None,
        namespace=str(ctx.get("namespace") or "default"),
        context=chosen,
        source=source,
    )
