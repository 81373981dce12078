"""Kubernetes-shaped objects numaplane reads: resource quantities, pods and their manifests."""

from numaplane.api.manifest import ManifestError, load_pods, pod_from_dict, pods_from_text
from numaplane.api.pod import QOS_RESOURCES, Container, Pod, QOSClass, ResourceRequirements
from numaplane.api.quantity import Quantity, QuantityError

__all__ = [
    "QOS_RESOURCES",
    "Container",
    "ManifestError",
    "Pod",
    "QOSClass",
    "Quantity",
    "QuantityError",
    "ResourceRequirements",
    "load_pods",
    "pod_from_dict",
    "pods_from_text",
]
