"""numaplane.node.memorymanager."""
