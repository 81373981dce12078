"""Authentication and authorization of the API server, as kube-apiserver's.

- ``pki`` (the only module that writes files), ``certs``, ``kubeconfig``: the CA, serving and
  admin certificates, the ServiceAccount signing key, kubeconfigs;
- ``authn``: who a request is from (client certificates, the static token file, ServiceAccount
  tokens checked by ``serviceaccount``); ``impersonation``: ``kubectl --as``;
- ``tokenrequest``: ``serviceaccounts/token`` and the filling of token Secrets;
- ``rbac`` (with ``rules``): what a user may do; ``bootstrap``: the default policy;
  ``escalation``: granting only what one holds;
- ``reviews``: the self-review APIs of ``kubectl auth can-i`` and ``kubectl auth whoami``.
"""
