"""The node agent's cluster side: the Node object, its heartbeat (registration, lease, status)
and the NodeResourceTopology it publishes, all through ``numaplane.kube`` only."""
