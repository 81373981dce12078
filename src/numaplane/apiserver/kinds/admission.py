"""The admission plugins kube-apiserver runs on every new Pod by default, as pure functions:
ServiceAccount (default account, token volume, pull secrets), Priority and
DefaultTolerationSeconds, in upstream's order (:func:`admit_pod`). The REST layer looks up
what they read (the ServiceAccount, the PriorityClasses) and calls them after defaulting.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from numaplane.apiserver.kinds.meta import as_dict, as_list, as_str, metadata
from numaplane.apiserver.kinds.scheduling import admit_pod_priority, forbidden_pod

Object = dict[str, Any]

DEFAULT_SERVICE_ACCOUNT: Final = "default"
TOKEN_MOUNT_PATH: Final = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_VOLUME_PREFIX: Final = "kube-api-access-"
#: ``WarnOnlyBoundTokenExpirationSeconds``: an hour and seven seconds.
TOKEN_EXPIRATION_S: Final = 3607
MIRROR_POD_ANNOTATION: Final = "kubernetes.io/config.mirror"
DEFAULT_TOLERATION_S: Final = 300
NOT_READY_TAINT: Final = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT: Final = "node.kubernetes.io/unreachable"


def token_volume(name: str) -> Object:
    """The projected volume the ServiceAccount plugin adds (token, cluster CA, namespace),
    with the defaults a read shows."""
    return {
        "name": name,
        "projected": {
            "defaultMode": 0o644,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_S, "path": "token"}},
                {
                    "configMap": {
                        "name": "kube-root-ca.crt",
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
        },
    }


def admit_pod_service_account(
    pod: Object, namespace: str, account: Object | None, suffix: str
) -> None:
    """The ServiceAccount plugin: ``serviceAccountName`` defaults to ``default``; the account
    must exist (403 otherwise, as upstream); unless the pod or the account opts out, every
    container mounts a ``kube-api-access-<suffix>`` token volume at the standard path; the
    account's image pull secrets are used when the pod names none. Mirror pods are left alone.
    """
    if MIRROR_POD_ANNOTATION in as_dict(metadata(pod).get("annotations")):
        return
    spec = pod.setdefault("spec", {})
    name = as_str(spec.get("serviceAccountName")) or DEFAULT_SERVICE_ACCOUNT
    spec["serviceAccountName"] = name
    spec["serviceAccount"] = name
    if account is None:
        raise forbidden_pod(
            pod,
            f"error looking up service account {namespace}/{name}: "
            f'serviceaccount "{name}" not found',
        )
    automount = spec.get("automountServiceAccountToken")
    if automount is None:
        automount = account.get("automountServiceAccountToken")
    if automount is not False:
        _mount_token(spec, TOKEN_VOLUME_PREFIX + suffix)
    if not as_list(spec.get("imagePullSecrets")) and as_list(account.get("imagePullSecrets")):
        spec["imagePullSecrets"] = [
            {"name": as_str(as_dict(s).get("name"))} for s in as_list(account["imagePullSecrets"])
        ]


def _mount_token(spec: Object, generated: str) -> None:
    volumes = as_list(spec.get("volumes"))
    existing = next(
        (
            as_str(as_dict(v).get("name"))
            for v in volumes
            if as_str(as_dict(v).get("name")).startswith(TOKEN_VOLUME_PREFIX)
        ),
        "",
    )
    volume_name = existing or generated
    needed = False
    for key in ("initContainers", "containers"):
        for container in as_list(spec.get(key)):
            if not isinstance(container, dict):
                continue
            mounts = container.get("volumeMounts")
            if not isinstance(mounts, list):
                mounts = container["volumeMounts"] = []
            if any(as_dict(m).get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                continue
            mounts.append({"name": volume_name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH})
            needed = True
    if needed and not existing:
        spec["volumes"] = [*volumes, token_volume(volume_name)]


def admit_pod_default_tolerations(pod: Object, seconds: int = DEFAULT_TOLERATION_S) -> None:
    """DefaultTolerationSeconds: a pod that does not already tolerate them tolerates the
    not-ready and unreachable NoExecute taints for ``seconds`` (300 by default)."""
    spec = pod.setdefault("spec", {})
    tolerations = as_list(spec.get("tolerations"))

    def tolerates(taint: str) -> bool:
        return any(
            as_str(as_dict(t).get("key")) in (taint, "")
            and as_str(as_dict(t).get("effect")) in ("NoExecute", "")
            for t in tolerations
        )

    added = [
        {"key": taint, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}
        for taint in (NOT_READY_TAINT, UNREACHABLE_TAINT)
        if not tolerates(taint)
    ]
    if added:
        spec["tolerations"] = [*tolerations, *added]


def admit_pod(
    pod: Object,
    namespace: str,
    *,
    service_account: Object | None,
    priority_classes: Iterable[Object],
    token_volume_suffix: str,
) -> None:
    """The default admission chain on a new pod, in kube-apiserver's order: ServiceAccount,
    Priority, DefaultTolerationSeconds. Raises upstream's 403 errors."""
    admit_pod_service_account(pod, namespace, service_account, token_volume_suffix)
    admit_pod_priority(pod, priority_classes)
    admit_pod_default_tolerations(pod)
