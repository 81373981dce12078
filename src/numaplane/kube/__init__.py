"""The client side of the Kubernetes API: kubeconfig, TLS, requests, list and watch.

Controllers, the scheduler and the agent reach any cluster (numaplane's own server or a real
one) only through this package, never through ``numaplane.apiserver``.
"""
