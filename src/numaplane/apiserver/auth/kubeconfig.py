"""A kubeconfig document as kubeadm writes ``admin.conf``: one cluster (the CA embedded as
``certificate-authority-data``), one user (an embedded client certificate and key, or a bearer
token) and the context ``USER@CLUSTER`` selected. Pure; :func:`numaplane.apiserver.auth.pki.
write_kubeconfig` writes it."""

from __future__ import annotations

import base64


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig(
    server_url: str,
    ca_cert_pem: bytes,
    cluster_name: str,
    user: str,
    *,
    client_cert_pem: bytes | None = None,
    client_key_pem: bytes | None = None,
    token: str | None = None,
) -> dict[str, object]:
    """A kubeconfig (``kind: Config``) with one cluster, one user and the context
    ``USER@CLUSTER`` selected, credentials embedded as kubeadm's ``admin.conf`` does."""
    credentials: dict[str, str] = {}
    if client_cert_pem is not None and client_key_pem is not None:
        credentials["client-certificate-data"] = _b64(client_cert_pem)
        credentials["client-key-data"] = _b64(client_key_pem)
    if token is not None:
        credentials["token"] = token
    context = f"{user}@{cluster_name}"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster_name,
                "cluster": {
                    "certificate-authority-data": _b64(ca_cert_pem),
                    "server": server_url,
                },
            }
        ],
        "contexts": [{"name": context, "context": {"cluster": cluster_name, "user": user}}],
        "current-context": context,
        "preferences": {},
        "users": [{"name": user, "user": credentials}],
    }
