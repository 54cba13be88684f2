"""Meters on the C engine: indexed meters (packets and bytes) and direct meters driven past
their rates with an injected clock give the Python engine's colours packet by packet, through
P4Runtime-unit and CLI-unit configurations, reconfiguration and reset; the meters' rates read
back alike."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from twin import TwinSwitch, assert_same_state

from softswitch.compiler import compile_file
from softswitch.engine.tables import ExactMatch
from softswitch.native.build import compiler_available

pytestmark = pytest.mark.skipif(compiler_available() is None,
                                reason="no C compiler ($CC or cc): the C engine cannot build")

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> idx; bit<8> c1; bit<8> c2; bit<8> c3; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    meter(4, MeterType.packets) mp;
    meter(4, MeterType.bytes) mb;
    direct_meter<bit<8>>(MeterType.bytes) dm;
    action m() { dm.read(hdr.h.c3); }
    table t { key = { hdr.h.a : exact; } actions = { m; NoAction; } meters = dm;
              default_action = NoAction(); }
    apply {
        sm.egress_spec = 1;
        mp.execute_meter((bit<32>) hdr.h.idx, hdr.h.c1);
        mb.execute_meter((bit<32>) hdr.h.idx, hdr.h.c2);
        if (!t.apply().hit) { dm.read(hdr.h.c3); }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    meter(2, MeterType.packets) me;
    apply { bit<2> c = 3; me.execute_meter((bit<32>) hdr.h.idx, c); hdr.h.a = (bit<8>) c; }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> TwinSwitch:
    path = Path(tmp_path_factory.mktemp("meters")) / "meters.p4"
    path.write_text(PROGRAM)
    return TwinSwitch(compile_file(path))


def test_meters_follow_the_python_engine_past_their_rates(twin: TwinSwitch) -> None:
    now = [0]
    twin.set_clock(lambda: now[0])
    h1 = twin.table("t").add_entry([ExactMatch(1)], "m")
    twin.table("t").add_entry([ExactMatch(2)], "m")  # unconfigured: GREEN
    twin.direct_meter("dm").set_rates(h1, 2_000_000, 300, 5_000_000, 900)
    mp, mb = twin.meter("mp"), twin.meter("mb")
    mp.set_rates(0, 1000, 3, 3000, 5)                 # P4Runtime units: per second
    mp.meter(1).set_rates_per_us(0.0005, 2, 0.002, 4)  # CLI units: per microsecond
    mb.set_all_rates(1_000_000, 200, 3_000_000, 600)
    twin.meter("me").set_rates(1, 100, 1, 100, 1)
    rng = random.Random(26)
    colours = set()
    for step in range(600):
        now[0] += rng.choice([0, 1, 3, 50, 400, 2500])
        if step == 300:
            mp.set_rates(0, 10, 1, 20, 2)
            twin.meter("mb").meter(2).reset_rates()
        size = rng.choice([5, 60, 150, 400])
        data = bytes([rng.choice([0, 1, 2]), rng.choice([0, 1, 2, 3, 7])]) + bytes(size - 2)
        out = twin.process_packet(0, data)
        colours.update(out[0].data[2:5] if out else b"")
    assert colours >= {0, 1, 2}  # every colour was seen, on both engines alike
    assert mp.meter(0).rates() is not None
    assert twin.meter("mb").meter(2).rates() is None
    assert_same_state(twin)


def test_meter_refusals_are_the_same(twin: TwinSwitch) -> None:
    mp = twin.meter("mp")
    for bad in ((0, 10, 1, 5, 1), (0, -1, 1, 5, 1), (9, 1, 1, 1, 1)):
        with pytest.raises(Exception):  # noqa: B017 — TwinSwitch checks both raise alike
            mp.set_rates(*bad)
