"""Pushing a plan to switches over P4Runtime: concurrent sessions, batched writes, reconciliation."""
