"""numaplane.node.cpumanager."""
