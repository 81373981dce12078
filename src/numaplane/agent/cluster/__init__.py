"""The node agent's cluster side: the Node object, its heartbeat (registration, lease, status)
and the NodeResourceTopology it publishes, the pods bound to the node and their status, all
through ``numaplane.kube`` only."""
