"""MultiKueue's decisions, pure: what a worker kubeconfig may hold, the ``Active`` conditions of
MultiKueueClusters and MultiKueue AdmissionChecks, and (with the workload reconciler) how a
manager's Workload is copied to, admitted on and cleaned from its worker clusters."""
