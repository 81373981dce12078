"""numaplane.node."""
