"""A heavy incast with NSCC on the real programs: 15 senders write 64 KiB each to one NIC of a
16-NIC fabric with a 20 µs RTO. Trims cut NSCC's window, and the trimmed packets are resent
within it (mrc_transport/README.md): every message arrives and no connection dies. Resent at
once whatever the window, the same incast delivered none of its 15 messages in 5 ms."""

from __future__ import annotations

from emulated import run

from controller.devices.session import Program
from emulation.scenario import loads

INCAST = """
name: incast15
topology: {generate: {planes: 2, radix: 8, nics: 16}}
links: {rate_gbps: 10, delay_ns: 500}
seed: 1
duration_us: 5000
transport: {rto_us: 20, reorder_us: 10, cc_algorithm: uet-1.0-nscc}
workload:
  kind: incast
  bytes: 65536
  senders: [nic1, nic2, nic3, nic4, nic5, nic6, nic7, nic8, nic9, nic10, nic11, nic12, nic13,
            nic14, nic15]
  receiver: nic0
"""


def test_a_15_to_1_incast_with_nscc_delivers_everything(switch_program: Program) -> None:
    result = run(loads(INCAST, "incast15.yaml"), "mrc", switch_program)
    summary = result.summary()
    assert result.finished and summary["completed"] == 15, summary
    assert summary["bytes_lost"] == 0 and summary["connections_lost"] == 0
    assert summary["trimmed"] > 0              # an incast: trims cut the windows
    # 15 x 64 KiB through nic0's two 10 Gb/s ports takes 393 µs; the resends within the
    # window keep it within twice that
    assert summary["mct_max_us"] < 800, summary


def test_the_default_transport_survives_the_same_incast(switch_program: Program) -> None:
    """The scenarios' default congestion control is NSCC (the OCP MRC API's): the incast with
    the matrix's timers and no `cc_algorithm` delivers everything. With the fixed window (no
    window to cut, every trim resent at once) it delivers none of the 15 messages."""
    text = INCAST.replace("rto_us: 20, reorder_us: 10, cc_algorithm: uet-1.0-nscc",
                          "rto_us: 100, reorder_us: 30")
    assert "cc_algorithm" not in text
    summary = run(loads(text, "incast15-default.yaml"), "mrc", switch_program).summary()
    assert summary["completed"] == 15 and summary["bytes_lost"] == 0, summary
    assert summary["connections_lost"] == 0 and summary["mct_max_us"] < 800, summary

