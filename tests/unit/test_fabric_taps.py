"""Fabric observers: every packet on every wire (links, host attachments, unlinked ports)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_device import FWD_P4, fields, pkt

from softswitch.compiler import compile_file
from softswitch.engine.tables import ExactMatch
from softswitch.fabric import Delivery, Fabric
from softswitch.ir.checked import CheckedProgram


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> CheckedProgram:
    path = Path(tmp_path_factory.mktemp("p4")) / "fwd.p4"
    path.write_text(FWD_P4)
    return compile_file(path)


def chain(program: CheckedProgram) -> Fabric:
    """h1 — A:1  A:2 — B:1  B:2 — h2; dst 2 goes towards h2, dst 1 back, dst 9 out A:5."""
    fabric = Fabric()
    for name in "AB":
        fabric.add_switch(name, program)
        table = fabric.switch(name).engine.table("fwd")
        table.add_entry([ExactMatch(2)], "set_port", [2])
        table.add_entry([ExactMatch(1)], "set_port", [1])
    fabric.switch("A").engine.table("fwd").add_entry([ExactMatch(9)], "set_port", [5])
    fabric.link("A", 2, "B", 1)
    fabric.add_host("h1", "A", 1)
    fabric.add_host("h2", "B", 2)
    return fabric


def test_capture_sees_every_hop_in_order(program: CheckedProgram) -> None:
    fabric = chain(program)
    cap = fabric.capture()
    fabric.host("h1").send(pkt(2, ttl=5, payload=b"x"))
    fabric.run_until_idle()
    assert cap.path() == ["h1", "A", "B", "h2"]
    first, link, last = cap.deliveries
    assert (first.sender, first.sender_port, first.receiver, first.receiver_port) == (
        "h1", None, "A", 1)
    assert (link.sender, link.sender_port, link.receiver, link.receiver_port) == ("A", 2, "B", 1)
    assert (last.sender, last.sender_port, last.receiver, last.receiver_port) == (
        "B", 2, "h2", 2)
    # the bytes on each wire as they were there: the TTL drops one per switch
    assert [fields(d.data)["ttl"] for d in cap.deliveries] == [5, 4, 3]
    assert cap.between("A", "B") == [link.data]
    assert last.data == fabric.host("h2").received[0]


def test_unlinked_port_detach_and_plain_observers(program: CheckedProgram) -> None:
    fabric = chain(program)
    seen: list[Delivery] = []
    fabric.add_observer(seen.append)
    cap = fabric.capture()
    fabric.host("h1").send(pkt(9))
    fabric.run_until_idle()
    assert [(d.sender, d.sender_port, d.receiver) for d in cap.deliveries] == [
        ("h1", None, "A"), ("A", 5, None)]
    assert seen == cap.deliveries and fabric.unlinked_drops == 1
    cap.detach()
    fabric.remove_observer(seen.append)  # a bound method equal to, not identical to, the added
    cap.clear()
    fabric.host("h2").send(pkt(1))
    fabric.run_until_idle()
    assert cap.deliveries == []
    assert len(seen) == 2


def test_observers_work_with_threads(program: CheckedProgram) -> None:
    fabric = chain(program)
    cap = fabric.capture()
    with fabric:
        fabric.host("h2").send(pkt(1, payload=b"back"))
        assert fabric.host("h1").receive(timeout=2) is not None
        fabric.run_until_idle()
    assert cap.path() == ["h2", "B", "A", "h1"]


def test_wire_hops_and_host_handoffs_are_counted_apart(program: CheckedProgram) -> None:
    """h1 -> A -> B -> h2 is one wire hop (the A-B cable) and two host hand-offs; a packet
    out of an unlinked port or onto a cut cable crosses no cable. No observer is needed."""
    fabric = chain(program)
    for _ in range(3):
        fabric.host("h1").send(pkt(2, ttl=5, payload=b"x"))
    fabric.host("h2").send(pkt(1, ttl=5, payload=b"y"))      # back the other way
    fabric.host("h1").send(pkt(9, ttl=5, payload=b"z"))      # out of A's unlinked port 5
    fabric.run_until_idle()
    assert len(fabric.host("h2").received) == 3 and len(fabric.host("h1").received) == 1
    assert fabric.wire_hops == 4
    assert fabric.host_handoffs == 5 + 4                     # 5 sent by hosts, 4 delivered
    fabric.set_link_up("A", 2, False)
    fabric.host("h1").send(pkt(2, ttl=5, payload=b"x"))
    fabric.run_until_idle()
    assert (fabric.wire_hops, fabric.host_handoffs, fabric.link_down_drops) == (4, 10, 1)
