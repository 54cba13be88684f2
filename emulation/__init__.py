"""Virtual-time runs of the real P4 programs: scenarios, workloads, failures, modes, reports."""
