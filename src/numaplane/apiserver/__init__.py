"""A Kubernetes-compatible API server on SQLite: the embedded control plane of ``numaplane``.

It serves the standard Kubernetes API over HTTPS (kubectl and the official clients use it
unchanged); controllers never import it and reach it only over HTTP through ``numaplane.kube``.
"""
