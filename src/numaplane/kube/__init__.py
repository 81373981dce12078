"""The client side of the Kubernetes API: kubeconfig, TLS, requests, list and watch.

Controllers, the scheduler and the agent reach any cluster (numaplane's own server or a real
one) only through this package, never through ``numaplane.apiserver``.
"""

from numaplane.kube.client import KubeClient, WatchEvent, resource_path
from numaplane.kube.config import KubeConfig, load_kubeconfig, load_kubeconfig_text
from numaplane.kube.errors import ApiError, KubeconfigError, KubeConnectionError, KubeError

__all__ = [
    "ApiError",
    "KubeClient",
    "KubeConfig",
    "KubeConnectionError",
    "KubeError",
    "KubeconfigError",
    "WatchEvent",
    "load_kubeconfig",
    "load_kubeconfig_text",
    "resource_path",
]
