"""The static SRv6 plan: uSID allocation, per-switch table entries, NIC path templates, checker."""
