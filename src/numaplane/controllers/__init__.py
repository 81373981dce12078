"""Controllers of a numaplane cluster (the scheduler, the Job controller, ...): clients of the API
that reach it only through :mod:`numaplane.kube`, so they run against any Kubernetes cluster."""
