"""MRC host transport (what a NIC's firmware and the application do beside mrc_nic.p4):

- wire.py: the MRC headers as scapy layers and the PSN / EV helpers
- config.py: ConnectionConfig, one connection's parameters
- sender.py: Sender: segmentation, window, retransmission (NACKs, SACK holes, timers), loss
  reports and EV probes
- receiver.py: Receiver: placement by RETH address, per-message tracking, completions in MSN order
- host.py: Host: one Sender and one Receiver behind one NIC host port

Time is injected (`now_us` arguments): nothing sleeps or starts threads.
"""
