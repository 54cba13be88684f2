"""softswitch: an embedded P4_16 v1model target in Python (frontend, IR, compiled engine)."""

__version__ = "0.1.0"
