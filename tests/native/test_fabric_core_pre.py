"""The native fabric core's end-of-pass decisions (runtime/ss_fabric.c: I2E clones, multicast,
recirculation, with engine/pre.py mirrored into C) against the Python fabric: one switch
whose program clones (with a preserved field list, to a truncating session, to a session
that does not exist), multicasts (to a group with several rids, to no group), recirculates
and mixes in digests (still Python's) gives the same deliveries, in the same order at the
same times, on both cores — and on the native core only the digest passes reach Python."""

from __future__ import annotations

import random
from typing import Any

import pytest
from native.test_fabric_core import compiled

from softswitch.clock import VirtualClock
from softswitch.engine.pre import MirrorSession
from softswitch.fabric import Fabric
from softswitch.ir.checked import CheckedProgram
from softswitch.native.fabric_core import FabricCore

PRE_P4 = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> dst; bit<16> rid; bit<8> inst; bit<8> x; bit<8> y; bit<8> len; }
struct headers_t { h_t h; }
struct meta_t { @field_list(1) bit<8> x; @field_list(1, 2) bit<8> y; bit<8> z; }
struct learn_t { bit<8> dst; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 4) {   // back from recirculation: what the field list kept
            hdr.h.x = meta.x; hdr.h.y = meta.y; hdr.h.len = (bit<8>) sm.packet_length;
            sm.egress_spec = (bit<9>) hdr.h.dst;
            return;
        }
        meta.x = hdr.h.dst + 1; meta.y = hdr.h.op; meta.z = 9;
        sm.egress_spec = (bit<9>) hdr.h.dst;
        if (hdr.h.op == 1) {
            clone_preserving_field_list(CloneType.I2E, 5, 1);
        } else if (hdr.h.op == 2) {
            clone_preserving_field_list(CloneType.I2E, 6, 2);   // a truncating session
            mark_to_drop(sm);
        } else if (hdr.h.op == 3) {
            sm.mcast_grp = 7;
            truncate(12);
        } else if (hdr.h.op == 4) {
            sm.mcast_grp = 99;   // no such group: nothing goes out
        } else if (hdr.h.op == 5) {
            clone(CloneType.I2E, 9);   // no such session: no clone
        } else if (hdr.h.op == 6) {
            digest<learn_t>(1, {hdr.h.dst});
            clone_preserving_field_list(CloneType.I2E, 5, 1);
        } else if (hdr.h.op == 8) {
            clone(CloneType.E2E, 5);   // an egress clone asked in ingress: ignored
        }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.inst = (bit<8>) sm.instance_type;
        hdr.h.rid = sm.egress_rid;
        if (sm.instance_type == 1) { hdr.h.x = meta.x; hdr.h.y = meta.y; hdr.h.len = meta.z; }
        if (hdr.h.op == 7 && meta.x != 42) {   // once: the recirculated copy keeps x
            meta.x = 42; meta.y = 43; meta.z = 44;
            recirculate_preserving_field_list(1);
        }
        if (hdr.h.op == 9) { mark_to_drop(sm); }
    }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


PASS = FabricCore._pass   # what the native core calls for a pass Python finishes


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> CheckedProgram:
    return compiled(tmp_path_factory, PRE_P4)


def run(program: CheckedProgram, native: bool, seed: int,
        monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """h0 on port 0 of S; hosts on ports 1-4; S's ports at 10 Gb/s."""
    passes: list[int] = []

    def counted(core: FabricCore, *args: Any) -> int:
        passes.append(args[1])
        return PASS(core, *args)
    monkeypatch.setattr(FabricCore, "_pass", counted)
    clock = VirtualClock()
    fabric = Fabric(clock=clock, native=native)
    fabric.add_switch("S", program)
    for port in range(5):
        fabric.add_host(f"h{port}", "S", port)
    device = fabric.switch("S").device
    device.set_line_rate(None, 10e9)
    pre = fabric.switch("S").engine.pre
    pre.insert_clone_session(5, [(2, 3), (3, 0)])
    pre.mirroring_add_session(6, MirrorSession(egress_port=4, packet_length_bytes=5))
    pre.insert_group(7, [(1, 1), (2, 1), (4, 2), (3, 7)])
    digests: list[tuple[int, Any]] = []
    device.add_digest_listener(lambda d: digests.append((clock.now_ns, d)))
    capture = fabric.capture()
    rng = random.Random(seed)
    for k in range(120):
        op = rng.choice([0, 1, 1, 2, 3, 3, 4, 5, 6, 7, 7, 8, 9])
        fabric.host("h0").send(bytes([op, rng.randrange(1, 5), 0, 0, 0, 0, 0, 0])
                               + bytes(rng.randrange(0, 600)))
        if k == 60:   # the PRE changes mid-run: the mirror follows
            pre.modify_group(7, [(3, 5), (1, 6)])
            pre.modify_clone_session(5, [(4, 1)], packet_length_bytes=7)
        if k % 5 == 0:
            fabric.run_until_idle()
            if (t := fabric.next_event_ns()) is not None:
                clock.advance_to(t)
                fabric.run_until_idle()
    while (t := fabric.next_event_ns()) is not None:
        clock.advance_to(t)
        fabric.run_until_idle()
    return {"native": fabric._native is not None,
            "deliveries": [(d.sender, d.sender_port, d.receiver, d.time_ns, d.data)
                           for d in capture.deliveries],
            "digests": digests, "passes": passes,
            "hosts": [fabric.host(f"h{p}").received for p in range(5)],
            "counts": (device.rx_packets, device.tx_packets, device.queues.dropped)}


@pytest.mark.parametrize("seed", [1, 2])
def test_clones_multicast_recirculation_as_the_python_fabric(
        program: CheckedProgram, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOFTSWITCH_ENGINE", "c")
    python = run(program, False, seed, monkeypatch)
    native = run(program, True, seed, monkeypatch)
    assert native.pop("native") and not python.pop("native")
    sent = [d[4] for d in python["deliveries"] if d[0] == "S"]
    assert {0, 1, 5} <= {d[4] for d in sent}   # normal, I2E clones, replicas went out
    assert any(d[5:7] == bytes([42, 43]) for d in sent)   # and recirculated ones (x, y kept)
    assert python["digests"] and python["counts"][2] == 0
    # every pass crossed to Python on the Python core's walk; the native core hands over
    # only the passes with a digest
    assert not python["passes"] and native["passes"]
    assert len(native["passes"]) == len(python["digests"])
    native.pop("passes"), python.pop("passes")
    for key in python:
        assert native[key] == python[key], key
