"""numaplane.node.topologymanager."""
