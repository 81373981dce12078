"""MultiKueue's I/O on the manager: the connections to the worker clusters
(:class:`RemoteClusters`, one :class:`RemoteCluster` per MultiKueueCluster), the orphan GC and
the MultiKueue AdmissionChecks' ``Active`` controller.

Wiring: ``RemoteClusters(local, namespace=<Kueue's namespace>, origin=..., gc_interval=...,
on_remote_change=..., on_cluster_change=..., recorder=...)``, set ``is_local_gone``, run
:meth:`RemoteClusters.run` beside the Kueue runtime. ``get(name)`` gives a cluster's
``connected``/``lost_since`` and, while connected, its ``client`` and the ``workloads``/``jobs``
informers; its ``admission_checks`` and ``configs`` informers are there to share.
:func:`remove_remote_objects` is the reconciler's ``RemoveRemoteObjects``."""

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
