"""MRC host transport: wire format (wire.py); segmentation, retransmission and completions come next."""
