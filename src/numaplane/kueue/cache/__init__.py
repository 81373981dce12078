"""The quota tree (ClusterQueues and Cohorts), the live cache of admitted usage and the
per-cycle snapshot the scheduler works on."""
