"""The cluster's controllers, as kube-controller-manager and kube-scheduler run them: the node
lifecycle, TTL-after-finished and Job controllers and the NUMA-aware scheduler, run by
:mod:`numaplane.controllers.manager` under Lease leader election.

They reach the cluster only through :mod:`numaplane.kube` (the standard API over HTTP), so they
work against any Kubernetes-compatible API server; they never import ``numaplane.apiserver``.
"""
