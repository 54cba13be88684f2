"""Failure handling: EV events correlated to links and switches, and the NIC path rewrites."""
