"""numaplane.sim."""
