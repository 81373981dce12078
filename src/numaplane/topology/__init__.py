"""numaplane.topology."""
