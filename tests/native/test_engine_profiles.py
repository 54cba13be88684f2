"""Action profiles and selectors on the C engine: member entries, group entries whose member
the selector hash picks (crc16, crc32, identity over header fields, an invalid header's left
out), over many flows, through member changes, group membership changes, an emptied group
(the table's default: no action) and P4Runtime-style repointing, give the Python engine's
packets; the member choice is bit-exact."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from twin import TwinSwitch, assert_same_state

from softswitch.compiler import compile_file
from softswitch.engine.tables import ExactMatch, TernaryMatch
from softswitch.native.build import compiler_available

pytestmark = pytest.mark.skipif(compiler_available() is None,
                                reason="no C compiler ($CC or cc): the C engine cannot build")

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> kind; bit<16> flow; bit<32> addr; bit<8> res; bit<8> tag; }
header o_t { bit<8> x; }
struct headers_t { h_t h; o_t o; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.kind) { 1: opt; default: accept; }
    }
    state opt { pkt.extract(hdr.o); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action_selector(HashAlgorithm.%ALGO%, 32w64, 32w16) sel;
    action_profile(32w16) prof;
    action fwd(bit<9> port, bit<8> tag) { sm.egress_spec = port; hdr.h.tag = tag; }
    action mark(bit<8> v) { hdr.h.res = v; }
    table ecmp {
        key = { hdr.h.kind : exact; hdr.h.flow : selector; hdr.h.addr : selector;
                hdr.o.x : selector; }
        actions = { fwd; mark; }
        implementation = sel;
    }
    table pick {
        key = { hdr.h.addr : ternary; }
        actions = { mark; fwd; }
        implementation = prof;
    }
    apply {
        sm.egress_spec = 9;
        switch (ecmp.apply().action_run) {
            fwd: { hdr.h.res = hdr.h.res + 1; }
            default: { hdr.h.res = 0xEE; }
        }
        if (pick.apply().hit) { hdr.h.kind = hdr.h.kind + 0x10; }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def twin_for(tmp_path: Path, algo: str) -> TwinSwitch:
    path = tmp_path / f"profiles_{algo}.p4"
    path.write_text(PROGRAM.replace("%ALGO%", algo))
    return TwinSwitch(compile_file(path))


def packet(rng: random.Random, kind: int) -> bytes:
    data = bytes([kind]) + rng.getrandbits(16).to_bytes(2, "big") + \
        rng.getrandbits(32).to_bytes(4, "big") + bytes([0, 0])
    return data + (bytes([rng.getrandbits(8)]) if kind == 1 else b"") + b"payload"


def run_flows(twin: TwinSwitch, rng: random.Random, n: int) -> set[int]:
    ports = set()
    for _ in range(n):
        for o in twin.process_packet(0, packet(rng, rng.choice([0, 1, 2, 3]))):
            ports.add(o.port)
    return ports


@pytest.mark.parametrize("algo", ["crc16", "crc32", "identity", "xor16", "csum16"])
def test_selector_member_choice_matches_over_many_flows(tmp_path: Path, algo: str) -> None:
    twin = twin_for(tmp_path, algo)
    sel = twin.action_profile("sel")
    members = [sel.add_member("fwd", [port, port * 3]) for port in range(1, 8)]
    marker = sel.add_member("mark", [0x42])
    g = sel.create_group()
    for m in members:
        sel.add_member_to_group(g, m)
    empty = sel.create_group()
    ecmp = twin.table("ecmp")
    ecmp.add_group_entry([ExactMatch(0)], g)
    ecmp.add_group_entry([ExactMatch(1)], g)
    ecmp.add_member_entry([ExactMatch(2)], marker)
    h3 = ecmp.add_group_entry([ExactMatch(3)], empty)
    prof = twin.action_profile("prof")
    low = prof.add_member("mark", [7])
    prof.add_member("fwd", [5, 5])
    twin.table("pick").add_member_entry([TernaryMatch(0, 0x80000000)], low, priority=1)
    rng = random.Random(f"profiles-{algo}")
    assert len(run_flows(twin, rng, 300)) >= 4  # the flows spread over the group's members
    sel.remove_member_from_group(g, members[2])
    sel.modify_member(members[0], "mark", [0x99])
    sel.add_member_to_group(empty, members[5])
    run_flows(twin, rng, 150)
    ecmp.point_entry(ecmp.entry(h3), None, sel.group(g))
    twin.table("pick").point_entry(twin.table("pick").entry(0), prof.member(1), None)
    run_flows(twin, rng, 150)
    assert_same_state(twin)


def test_profile_tables_start_empty_and_miss_runs_no_action(tmp_path: Path) -> None:
    twin = twin_for(tmp_path, "crc16")
    rng = random.Random(5)
    assert run_flows(twin, rng, 20) == {9}
    assert_same_state(twin)
