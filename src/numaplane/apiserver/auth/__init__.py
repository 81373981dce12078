"""Authentication and authorization of the API server, as kube-apiserver's: the PKI and
kubeconfigs (``pki``), who a request is from (``authn``: client certificates, static tokens,
ServiceAccount tokens from ``serviceaccount``), what they may do (``rbac``, with the default
policy of ``bootstrap`` and the escalation check of ``escalation``), and the self-review APIs
kubectl's ``auth can-i`` and ``auth whoami`` use (``reviews``).
"""
