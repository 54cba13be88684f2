"""MRC host transport (what a NIC's firmware and the application do beside mrc_nic.p4):

- wire.py: the MRC headers as scapy layers and the PSN / EV helpers
- config.py: ConnectionConfig, one connection's parameters
- sender.py: Sender: segmentation, window, retransmission (NACKs, SACK holes, timers), loss
  reports and EV probes
- receiver.py: Receiver: placement by RETH address, per-message tracking, completions in MSN order
- host.py: Host: one Sender and one Receiver behind one NIC host port
- nic_host.py: NicHost: several connections (each a Sender and a Receiver) behind one NIC host
  port, demultiplexed by BTH dest_qp
- fastwire.py: the per-packet frames built and read at the byte level, bit-exact with wire.py
  (which stays the reference); bench.py: their cost against scapy's
- compiled.py: those modules compiled to C with mypyc (same sources), loaded when built

Time is injected (`now_us` arguments): nothing sleeps or starts threads. For a discrete-event
loop, `next_deadline_us(now_us)` (Sender, Host, NicHost) says when `poll` next has something to
do if no frame arrives.
"""

# The per-packet modules compiled with mypyc when built for these sources (compiled.py): the
# same code as native extensions. Before any of them is imported.
from mrc_transport import compiled as _compiled

_compiled.activate(__path__)
