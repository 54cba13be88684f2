"""The v1model end-of-pass decisions in C (native/cgen_ends.py: ingress and egress clones,
digests, resubmit, multicast, recirculation, and the jobs they make) against the Python
walk: one program that does each of them, alone and mixed, through `process_packet`,
`process_batch` and the Device's pass-by-pass `run`, with the PRE changed mid-run, gives the
same outputs in the same order, counters, registers and digests on both engines — and the C
engine hands to the Python walk only the passes that need it (an assert failure with digests
pending, an output that may not fit the output area, and what follows those)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from test_engine_walk import Queued
from twin import TwinSwitch, assert_same_state, state

from softswitch.compiler import compile_file
from softswitch.engine.pipeline import OutputPacket, V1Pipeline
from softswitch.engine.pre import MirrorSession
from softswitch.engine.switch import Switch
from softswitch.ir.checked import CheckedProgram
from softswitch.native.build import compiler_available

pytestmark = pytest.mark.skipif(compiler_available() is None,
                                reason="no C compiler ($CC or cc): the C engine cannot build")

ENDS_P4 = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> dst; bit<16> rid; bit<8> inst; bit<8> a; bit<8> b; bit<8> len;
             bit<8> cnt; }
struct headers_t { h_t h; }
struct meta_t { @field_list(1) bit<8> x; @field_list(1, 2) bit<8> y; bit<8> z;
                @field_list(3) bit<8> count; @field_list(3) int<8> s; }
struct learn_t { bit<8> dst; bit<8> op; int<8> s; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(8) passes;
    counter(8, CounterType.packets_and_bytes) seen;
    apply {
        bit<32> v;
        passes.read(v, sm.instance_type);
        passes.write(sm.instance_type, v + 1);
        seen.count(sm.instance_type);
        sm.egress_spec = (bit<9>) hdr.h.dst;
        if (sm.instance_type == 4) {   // back from recirculation: what the field list kept
            hdr.h.a = meta.x; hdr.h.b = meta.y; hdr.h.len = (bit<8>) sm.packet_length;
            if (hdr.h.op == 12) {   // a digest, then an assert failure, mid-walk
                digest<learn_t>(2, {hdr.h.dst, hdr.h.op, -3});
                assert(false);
            }
            return;
        }
        if (sm.instance_type == 6) {   // resubmitted: what the field list kept
            hdr.h.cnt = meta.count;
            if (hdr.h.op == 10 && meta.count < 3) {
                meta.count = meta.count + 1;
                meta.s = meta.s - 1;
                digest<learn_t>(1, {hdr.h.dst, meta.count, meta.s});
                resubmit_preserving_field_list(3);
            } else if (hdr.h.op == 11) {
                resubmit_preserving_field_list(3);   // for ever: MAX_JOBS stops it
            }
            return;
        }
        meta.x = hdr.h.dst + 1; meta.y = hdr.h.op; meta.z = 9;
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
            digest<learn_t>(1, {hdr.h.dst, hdr.h.op, -1});
            clone_preserving_field_list(CloneType.I2E, 5, 1);
        } else if (hdr.h.op == 10 || hdr.h.op == 11) {
            meta.count = 0; meta.s = 0;
            resubmit_preserving_field_list(3);
        } else if (hdr.h.op == 13) {   // a digest, then an assert failure: the next pass emits it
            digest<learn_t>(1, {hdr.h.dst, hdr.h.op, -2});
            assert(hdr.h.dst == 0);
        } else if (hdr.h.op == 14) {
            sm.mcast_grp = 8;   // more copies than MAX_JOBS passes
        } else if (hdr.h.op == 15) {
            sm.mcast_grp = 10;   // big copies, past MAX_JOBS and the output area
        } else if (hdr.h.op == 17) {   // all at once: a clone, a digest, truncate, resubmit
            truncate(9);
            digest<learn_t>(3, {hdr.h.dst, hdr.h.op, 5});
            clone_preserving_field_list(CloneType.I2E, 5, 1);
            meta.count = 7; meta.s = 3;
            resubmit_preserving_field_list(3);
        } else if (hdr.h.op == 18) {
            clone(CloneType.E2E, 5);   // an egress clone asked in ingress: ignored
        }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    counter(8, CounterType.packets) seen_e;
    apply {
        seen_e.count(sm.instance_type);
        hdr.h.inst = (bit<8>) sm.instance_type;
        hdr.h.rid = sm.egress_rid;
        if (sm.instance_type == 1) { hdr.h.a = meta.x; hdr.h.b = meta.y; hdr.h.len = meta.z; }
        if (hdr.h.op == 7 && meta.x != 42) {   // once: the recirculated copy keeps x
            meta.x = 42; meta.y = 43; meta.z = 44;
            recirculate_preserving_field_list(1);
        }
        if (hdr.h.op == 12 && sm.instance_type == 0) { recirculate_preserving_field_list(1); }
        if (hdr.h.op == 8 && sm.instance_type == 0) {
            meta.x = 77;
            clone_preserving_field_list(CloneType.E2E, 5, 1);
            hdr.h.b = 1;   // after the clone: the clones have the headers as egress leaves them
        }
        if (hdr.h.op == 16 && meta.x < 5) {   // a chain of egress clones of egress clones
            meta.x = meta.x + 1;
            clone_preserving_field_list(CloneType.E2E, 11, 1);
            truncate(14);
        }
        if (hdr.h.op == 19 && sm.instance_type == 1) { assert(false); }   // no digest pending
        if (hdr.h.op == 9) { mark_to_drop(sm); }
    }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

OPS = list(range(20))
BIG_OPS = (15,)   # a multicast of 8 KB copies: past the C output area's 1 MiB


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> CheckedProgram:
    path: Path = tmp_path_factory.mktemp("ends") / "ends.p4"
    path.write_text(ENDS_P4)
    return compile_file(path)


def configure(pre: Any) -> None:
    pre.insert_clone_session(5, [(2, 3), (3, 0)])
    pre.mirroring_add_session(6, MirrorSession(egress_port=4, packet_length_bytes=5))
    pre.mirroring_add_session(11, MirrorSession(egress_port=6, packet_length_bytes=0))
    pre.insert_group(7, [(1, 1), (2, 1), (4, 2), (3, 7)])
    pre.insert_group(8, [(p, p % 5) for p in range(1, 301)])
    pre.insert_group(10, [(p, 1) for p in range(1, 301)])


def change(pre: Any) -> None:
    """The PRE mid-run: the C mirror must follow."""
    pre.modify_group(7, [(3, 5), (1, 6)])
    pre.modify_clone_session(5, [(4, 1)], packet_length_bytes=7)
    pre.delete_group(10)


def packets(seed: int, count: int = 150) -> list[tuple[int, bytes]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        op = rng.choice(OPS)
        size = 8000 if op in BIG_OPS else rng.randrange(0, 600)
        out.append((rng.randrange(0, 8), bytes([op, rng.randrange(0, 5)]) + bytes(8)
                    + bytes(rng.randrange(256) for _ in range(size))))
    return out


class Handbacks:
    """Counts the passes the C engine's walk finishes in Python (V1Pipeline's own end)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.passes = 0
        for name in ("_end_ingress", "_end_egress"):
            original = getattr(V1Pipeline, name)

            def counted(pipe: Any, *args: Any, _original: Any = original) -> Any:
                if pipe.__class__ is not V1Pipeline:
                    self.passes += 1
                return _original(pipe, *args)
            monkeypatch.setattr(V1Pipeline, name, counted)


def twin(program: CheckedProgram) -> TwinSwitch:
    sw = TwinSwitch(program)
    configure(sw.pre)
    return sw


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_process_packet_as_the_python_walk(program: CheckedProgram, seed: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    handbacks = Handbacks(monkeypatch)
    sw = twin(program)
    outputs = []
    for k, (port, data) in enumerate(packets(seed)):
        if k == 75:
            change(sw.pre)
        outputs.append(sw.process_packet(port, data))   # compared by TwinSwitch
    assert_same_state(sw)
    sent = [o for out in outputs for o in out]
    assert {o.data[4] for o in sent} == {0, 1, 2, 5}   # normal, clones, replicas went out
    passes = sw.native.register("passes")
    assert all(passes.read(t) for t in (0, 4, 6))   # recirculated and resubmitted passes
    assert len(sw.native.digests) > 10
    assert max(map(len, outputs)) == 255   # the 300-copy multicast: MAX_JOBS passes in all
    # Python finished only the assert-with-digest passes (ops 12, 13), the packets after an
    # op-13 one (its digest pending), and the big multicast past the output area
    stalls = [k for k, (_, d) in enumerate(packets(seed)) if d[0] in (12, 13, 15)]
    assert 0 < handbacks.passes <= 300 * len(stalls) + 2 * len(stalls)


def test_no_handback_on_the_common_ends(program: CheckedProgram,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Clones, digests, resubmits, multicast and recirculation finish in C."""
    handbacks = Handbacks(monkeypatch)
    sw = twin(program)
    common = [(p, d) for p, d in packets(4, 300) if d[0] not in (12, 13, 15)]
    for port, data in common:
        sw.process_packet(port, data)
    assert_same_state(sw)
    assert handbacks.passes == 0
    assert len(sw.native.digests) > 20


@pytest.mark.parametrize("seed", [5, 6])
def test_batches_as_the_python_walk(program: CheckedProgram, seed: int) -> None:
    sw = twin(program)
    batch = packets(seed)
    results = sw.process_batch(batch[:70])
    change(sw.pre)
    results += sw.process_batch(batch[70:])
    assert len(results) == len(batch)
    assert_same_state(sw)


def test_pass_by_pass_as_the_python_walk(program: CheckedProgram,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    handbacks = Handbacks(monkeypatch)
    sws = {engine: Switch(program, engine=engine) for engine in ("python", "c")}
    outs: dict[str, list[list[OutputPacket]]] = {}
    batch = [(p, d) for p, d in packets(7, 120) if d[0] not in (11,)]
    for engine, sw in sws.items():
        configure(sw.pre)
        queued = Queued(sw)
        outs[engine] = []
        for k, (port, data) in enumerate(batch):
            if k == 60:
                change(sw.pre)
            outs[engine].append(queued.process_packet(port, data))
    assert outs["c"] == outs["python"]
    assert state(sws["c"]) == state(sws["python"])
    assert handbacks.passes < sum(d[0] in (12, 13) for _, d in batch) * 4 + 4
