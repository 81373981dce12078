"""numaplane.agent."""
