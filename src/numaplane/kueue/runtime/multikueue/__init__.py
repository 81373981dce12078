"""MultiKueue's I/O on the manager: the connections to the worker clusters
(:class:`RemoteClusters`, one :class:`RemoteCluster` per MultiKueueCluster), the orphan GC and
the MultiKueue AdmissionChecks' ``Active`` controller."""

from numaplane.kueue.runtime.multikueue.admissioncheck import AdmissionCheckController
from numaplane.kueue.runtime.multikueue.clients import RemoteClusters
from numaplane.kueue.runtime.multikueue.gc import collect_orphans
from numaplane.kueue.runtime.multikueue.remote import (
    RemoteCluster,
    remove_remote_objects,
    workload_key_of_job,
)
from numaplane.kueue.runtime.multikueue.sources import kubeconfig_location, load_cluster_config

__all__ = [
    "AdmissionCheckController",
    "RemoteCluster",
    "RemoteClusters",
    "collect_orphans",
    "kubeconfig_location",
    "load_cluster_config",
    "remove_remote_objects",
    "workload_key_of_job",
]
