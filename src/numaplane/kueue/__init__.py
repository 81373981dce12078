"""Kueue: queues, quota, fair borrowing and preemption for Jobs, decision for decision as
``kubernetes-sigs/kueue`` makes them.

A pure core (``api`` objects, the quota ``cache``, the ``queue`` manager, the ``scheduler``, the
``workload`` and ``jobs`` reconcile rules) and one I/O edge (``runtime``) that feeds it from
informers and writes its decisions through the standard Kubernetes API, so it runs against
``numaplane up`` and any real cluster alike.
"""
