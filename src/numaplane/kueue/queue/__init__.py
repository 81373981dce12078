"""Pending workloads: one ordered queue per ClusterQueue, fed by LocalQueues."""
