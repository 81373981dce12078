"""numaplane.node.devicemanager."""
