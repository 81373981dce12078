"""The node agent's cluster side: the Node, its Lease and NodeResourceTopology, the pods bound
to the node, and their status."""
