"""Engine semantics on small inline programs: expressions, statements, calls, headers, parsers."""

from __future__ import annotations

import pytest
from inline_programs import build_switch, ingress_program

from softswitch.engine.switch import Switch
from softswitch.engine.tables import ExactMatch
from softswitch.errors import ControlPlaneError

PRELUDE = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> d; }
"""

STANDARD = PRELUDE + """
struct headers_t { h_t h; }
struct meta_t { bit<8> m; }
"""


build = build_switch


def ingress(tmp_path, body: str, decls: str = "", top: str = "", **kw) -> Switch:
    return build(tmp_path, ingress_program(STANDARD, body, decls, top), **kw)


def pkt(a: int, b: int, c: int, d: int, rest: bytes = b"") -> bytes:
    return bytes([a, b]) + c.to_bytes(2, "big") + d.to_bytes(4, "big") + rest


def fields(data: bytes) -> tuple[int, int, int, int]:
    return data[0], data[1], int.from_bytes(data[2:4], "big"), int.from_bytes(data[4:8], "big")


def run(sw: Switch, data: bytes, port: int = 0) -> tuple[int, int, int, int]:
    out = sw.process_packet(port, data)
    assert len(out) == 1, out
    assert out[0].port == 1
    return fields(out[0].data)


# -- arithmetic -------------------------------------------------------------------------------


def test_unsigned_wraparound_and_saturation(tmp_path):
    sw = ingress(tmp_path, """
        hdr.h.a = hdr.h.a + 8w10;
        hdr.h.b = hdr.h.b - 8w3;
        hdr.h.c = hdr.h.c |+| 16w0x10;
        hdr.h.d = hdr.h.d |-| 32w5;
    """)
    assert run(sw, pkt(250, 1, 0xFFF8, 3)) == (4, 254, 0xFFFF, 0)
    assert run(sw, pkt(1, 10, 1, 10)) == (11, 7, 0x11, 5)


def test_multiplication_shifts_and_bitwise(tmp_path):
    sw = ingress(tmp_path, """
        hdr.h.a = hdr.h.a * 8w3;
        hdr.h.b = hdr.h.b << 3;
        hdr.h.c = hdr.h.c >> 4;
        hdr.h.d = (hdr.h.d & 32w0xFF00FF00) | (~hdr.h.d & 32w0xFF) ^ 32w1;
    """)
    assert run(sw, pkt(100, 0x81, 0xABCD, 0x12345678)) == (
        (300) & 0xFF, (0x81 << 3) & 0xFF, 0xABC, (0x12005600 | ((~0x78 & 0xFF) ^ 1)))


def test_shift_by_run_time_amount_at_least_width_gives_zero(tmp_path):
    sw = ingress(tmp_path, """
        hdr.h.a = hdr.h.a << hdr.h.b;
        hdr.h.c = hdr.h.c >> hdr.h.b;
    """)
    assert run(sw, pkt(0xFF, 8, 0xFFFF, 0))[:3] == (0, 8, 0xFF)
    assert run(sw, pkt(0xFF, 200, 0xFFFF, 0))[:3] == (0, 200, 0)
    assert run(sw, pkt(0x0F, 2, 0x10, 0))[:3] == (0x3C, 2, 0x4)


def test_signed_arithmetic_and_casts(tmp_path):
    sw = ingress(tmp_path, """
        int<8> x = (int<8>) hdr.h.a;
        int<8> y = x - 8s100;
        hdr.h.b = (bit<8>) y;
        int<16> w = (int<16>) x;
        hdr.h.c = (bit<16>) w;
        hdr.h.d = (bit<32>) (x >> 1);
        if (x < 8s0) { hdr.h.a = 1; } else { hdr.h.a = 0; }
    """)
    # a = 0xF0 → x = -16; y = -116 → 0x8C; w = -16 → 0xFFF0; x >> 1 = -8 → 0xFFFFFFF8
    assert run(sw, pkt(0xF0, 0, 0, 0)) == (1, 0x8C, 0xFFF0, 0xFFFFFFF8)
    # a = 0x10 → x = 16; y = -84 → 0xAC
    assert run(sw, pkt(0x10, 0, 0, 0)) == (0, 0xAC, 0x10, 8)


def test_signed_saturation(tmp_path):
    sw = ingress(tmp_path, """
        int<8> x = (int<8>) hdr.h.a;
        hdr.h.b = (bit<8>) (x |+| 8s100);
        hdr.h.c = (bit<16>) (bit<8>) (x |-| 8s100);
    """)
    assert run(sw, pkt(100, 0, 0, 0))[1:3] == (127, 0)
    assert run(sw, pkt(0x9C, 0, 0, 0))[1:3] == (0, 0x80)  # -100: +100 = 0; -200 → -128


def test_slices_and_concatenation(tmp_path):
    sw = ingress(tmp_path, """
        hdr.h.a = hdr.h.d[31:24];
        hdr.h.b[3:0] = hdr.h.d[3:0];
        hdr.h.c = hdr.h.a ++ hdr.h.b;
        hdr.h.d[15:8] = 8w0xEE;
    """)
    a, b, c, d = run(sw, pkt(0, 0xA0, 0, 0x12345678))
    assert (a, b) == (0x12, 0xA8)
    assert c == 0x12A8
    assert d == 0x1234EE78


def test_ternary_division_modulo_and_bool_logic(tmp_path):
    sw = ingress(tmp_path, """
        bool big = hdr.h.a > 8w100 && !(hdr.h.b == 8w0);
        hdr.h.c = big ? 16w1 : 16w2;
        hdr.h.d = (bit<32>) ((hdr.h.a / 8w8) ++ (hdr.h.a % 8w8));
    """)
    assert run(sw, pkt(200, 1, 0, 0))[2] == 1
    assert run(sw, pkt(200, 0, 0, 0))[2] == 2
    assert run(sw, pkt(100, 0, 0, 0))[3] == (12 << 8) | 4


def test_short_circuit_does_not_evaluate_right_side(tmp_path):
    # (a run-time division cannot show it: p4c-bm2-ss refuses division by a field)
    top = """
    bool bump(inout bit<8> b) {
        b = b + 1;
        return b == 7;
    }
    """
    sw = ingress(tmp_path, """
        if (hdr.h.a == 0 || bump(hdr.h.b)) { hdr.h.c = 1; } else { hdr.h.c = 2; }
    """, top=top)
    assert run(sw, pkt(0, 9, 0, 0))[1:3] == (9, 1)  # bump not called: b unchanged
    assert run(sw, pkt(3, 6, 0, 0))[1:3] == (7, 1)
    assert run(sw, pkt(3, 9, 0, 0))[1:3] == (10, 2)


# -- statements, calls, copy-in/copy-out -------------------------------------------------------


def test_functions_with_out_params_and_return(tmp_path):
    top = """
    bit<8> twice(in bit<8> x, out bit<8> y, inout bit<16> z) {
        y = x + 1;
        z = z + 1;
        return x + x;
    }
    """
    sw = ingress(tmp_path, "hdr.h.a = twice(hdr.h.a, hdr.h.b, hdr.h.c);", top=top)
    assert run(sw, pkt(5, 0, 9, 0))[:3] == (10, 6, 10)


def test_action_inout_params_copy_out_and_direct_call(tmp_path):
    decls = """
    action inc(inout bit<8> v, bit<8> by) { v = v + by; }
    action set_d(bit<32> x) { hdr.h.d = x; }
    """
    sw = ingress(tmp_path, "inc(hdr.h.a, 8w3); inc(hdr.h.b, hdr.h.a); set_d(32w77);", decls)
    assert run(sw, pkt(1, 1, 0, 0)) == (4, 5, 0, 77)


def test_exit_stops_ingress_but_packet_is_forwarded(tmp_path):
    decls = "action stop() { hdr.h.b = 1; exit; }"
    sw = ingress(tmp_path, "stop(); hdr.h.c = 5;", decls)
    assert run(sw, pkt(0, 0, 0, 0))[1:3] == (1, 0)


def test_return_in_control(tmp_path):
    sw = ingress(tmp_path, "if (hdr.h.a == 1) { return; } hdr.h.b = 9;")
    assert run(sw, pkt(1, 0, 0, 0))[1] == 0
    assert run(sw, pkt(2, 0, 0, 0))[1] == 9


def test_switch_on_value_with_fallthrough_and_default(tmp_path):
    sw = ingress(tmp_path, """
        switch (hdr.h.a) {
            1:
            2: { hdr.h.b = 12; }
            3: { hdr.h.b = 3; }
            default: { hdr.h.b = 99; }
        }
    """)
    assert [run(sw, pkt(a, 0, 0, 0))[1] for a in (1, 2, 3, 4)] == [12, 12, 3, 99]


def test_control_local_variable_shared_by_action_and_apply(tmp_path):
    decls = """
    bit<8> tmp = 7;
    action bump() { tmp = tmp + 1; }
    """
    sw = ingress(tmp_path, "bump(); bump(); hdr.h.a = tmp;", decls)
    assert run(sw, pkt(0, 0, 0, 0))[0] == 9
    assert run(sw, pkt(0, 0, 0, 0))[0] == 9  # re-initialised per packet


def test_nested_control_with_scalar_inout(tmp_path):
    top = """
    control Sub(inout bit<8> x, inout h_t h) {
        action dbl() { x = x + x; }
        apply { dbl(); h.c = 0xBEEF; }
    }
    """
    src = ingress_program(STANDARD, "s.apply(hdr.h.a, hdr.h);", "Sub() s;")
    src = src.replace("control VC(", top + "\ncontrol VC(")
    sw = build(tmp_path, src)
    # copy-out runs left to right: x (42) lands in hdr.h.a, then h's copy (a still 21)
    # overwrites the whole header
    assert run(sw, pkt(21, 0, 0, 0))[:3] == (21, 0, 0xBEEF)


# -- headers ----------------------------------------------------------------------------------


def test_set_valid_zeroes_fields_set_invalid_removes_header(tmp_path):
    src = PRELUDE + """
    header g_t { bit<8> x; bit<8> y; }
    struct headers_t { h_t h; g_t g; }
    struct meta_t { }
    parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
        state start { pkt.extract(hdr.h); transition accept; }
    }
    control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
    control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
        apply {
            sm.egress_spec = 1;
            hdr.g.x = 5;                     // invalid: write has no visible effect
            if (hdr.h.a == 1) { hdr.g.setValid(); hdr.g.y = 7; }
            if (hdr.h.a == 2) { hdr.h.setInvalid(); }
            hdr.h.b = hdr.g.isValid() ? 8w1 : 8w0;
        }
    }
    control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
    control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
    control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.g); } }
    V1Switch(P(), VC(), I(), E(), CC(), D()) main;
    """
    sw = build(tmp_path, src)
    out = sw.process_packet(0, pkt(1, 0, 0, 0, b"\xAA"))
    assert out[0].data == pkt(1, 1, 0, 0) + b"\x00\x07" + b"\xAA"
    out = sw.process_packet(0, pkt(2, 0, 0, 0, b"\xAA"))
    assert out[0].data == b"\xAA"


def test_header_union_one_member_valid(tmp_path):
    src = PRELUDE + """
    header x_t { bit<8> x; }
    header y_t { bit<16> y; }
    header_union u_t { x_t x; y_t y; }
    struct headers_t { h_t h; u_t u; }
    struct meta_t { }
    parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
        state start {
            pkt.extract(hdr.h);
            transition select(hdr.h.a) { 1: px; 2: py; default: accept; }
        }
        state px { pkt.extract(hdr.u.x); transition accept; }
        state py { pkt.extract(hdr.u.y); transition accept; }
    }
    control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
    control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
        apply {
            sm.egress_spec = 1;
            if (hdr.h.b == 1) { hdr.u.y.setValid(); hdr.u.y.y = 0x1234; }
            hdr.h.c = hdr.u.isValid() ? 16w1 : 16w0;
        }
    }
    control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
    control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
    control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.u); } }
    V1Switch(P(), VC(), I(), E(), CC(), D()) main;
    """
    sw = build(tmp_path, src)
    assert sw.process_packet(0, pkt(1, 0, 0, 0, b"\x55\x66"))[0].data == \
        pkt(1, 0, 1, 0) + b"\x55\x66"
    # x was extracted, then y made valid: x becomes invalid
    assert sw.process_packet(0, pkt(1, 1, 0, 0, b"\x55\x66"))[0].data == \
        pkt(1, 1, 1, 0) + b"\x12\x34\x66"
    assert sw.process_packet(0, pkt(3, 0, 0, 0, b"\x55"))[0].data == pkt(3, 0, 0, 0) + b"\x55"


def test_header_stack_push_pop_and_next(tmp_path):
    src = PRELUDE + """
    header e_t { bit<8> v; }
    struct headers_t { h_t h; e_t[3] s; }
    struct meta_t { }
    parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
        state start { pkt.extract(hdr.h); transition el; }
        state el {
            pkt.extract(hdr.s.next);
            transition select(hdr.s.last.v) { 0: accept; default: el; }
        }
    }
    control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
    control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
        apply {
            sm.egress_spec = 1;
            hdr.h.a = (bit<8>) hdr.s.lastIndex;
            if (hdr.h.b == 1) { hdr.s.push_front(1); hdr.s[0].setValid(); hdr.s[0].v = 0xEE; }
            if (hdr.h.b == 2) { hdr.s.pop_front(1); }
        }
    }
    control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
    control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
    control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.s); } }
    V1Switch(P(), VC(), I(), E(), CC(), D()) main;
    """
    sw = build(tmp_path, src)
    assert sw.process_packet(0, pkt(0, 0, 0, 0, b"\x05\x00\x77"))[0].data == \
        pkt(1, 0, 0, 0) + b"\x05\x00\x77"
    assert sw.process_packet(0, pkt(0, 1, 0, 0, b"\x05\x00\x77"))[0].data == \
        pkt(1, 1, 0, 0) + b"\xEE\x05\x00\x77"
    assert sw.process_packet(0, pkt(0, 2, 0, 0, b"\x05\x00\x77"))[0].data == \
        pkt(1, 2, 0, 0) + b"\x00\x77"
    # four non-zero elements overflow the 3-element stack: StackOutOfBounds, still forwarded;
    # the element that did not fit stays in the payload
    out = sw.process_packet(0, pkt(0, 0, 0, 0, b"\x01\x02\x03\x04"))
    assert out[0].data == pkt(2, 0, 0, 0) + b"\x01\x02\x03\x04"


# -- parsers ----------------------------------------------------------------------------------


def parser_program(states: str, body: str = "", meta: str = "") -> str:
    return PRELUDE + """
    header v_t { bit<8> len; varbit<64> data; }
    header x_t { bit<4> hi; bit<4> lo; }
    struct headers_t { h_t h; v_t v; x_t x; }
    struct meta_t { bit<8> m; %META% }
    parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
        %STATES%
    }
    control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
    control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
        apply { sm.egress_spec = 1; %BODY% }
    }
    control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
    control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
    control D(packet_out pkt, in headers_t hdr) {
        apply { pkt.emit(hdr.h); pkt.emit(hdr.v); pkt.emit(hdr.x); }
    }
    V1Switch(P(), VC(), I(), E(), CC(), D()) main;
    """.replace("%STATES%", states).replace("%BODY%", body).replace("%META%", meta)


def test_parser_error_packet_too_short_goes_to_ingress(tmp_path):
    sw = build(tmp_path, parser_program(
        "state start { pkt.extract(hdr.h); transition accept; }",
        "if (sm.parser_error == error.PacketTooShort) { sm.egress_spec = 2; }"))
    out = sw.process_packet(0, b"\x01\x02\x03")
    # the header was not extracted; the whole input is payload
    assert [(o.port, o.data) for o in out] == [(2, b"\x01\x02\x03")]


def test_verify_and_select_masks_ranges_default(tmp_path):
    states = """
    state start {
        pkt.extract(hdr.h);
        verify(hdr.h.d != 0xDEAD, error.ParserInvalidArgument);
        transition select(hdr.h.a, hdr.h.b) {
            (0x10 &&& 0xF0, _): s1;
            (_, 5 .. 9): s2;
            (0xFF, 0xFF): reject;
            default: accept;
        }
    }
    state s1 { meta.m = 1; transition accept; }
    state s2 { meta.m = 2; transition accept; }
    """
    body = """hdr.h.c = (bit<16>) meta.m;
        if (sm.parser_error == error.ParserInvalidArgument) { hdr.h.d = 1; }
        else if (sm.parser_error == error.NoError) { hdr.h.d = 0; } else { hdr.h.d = 2; }"""
    sw = build(tmp_path, parser_program(states, body))
    assert run(sw, pkt(0x1A, 0, 0, 0))[2] == 1
    assert run(sw, pkt(0x2A, 7, 0, 0))[2] == 2
    assert run(sw, pkt(0x2A, 10, 0, 0))[2] == 0
    assert run(sw, pkt(0x1A, 0, 0, 0xDEAD))[2:] == (0, 1)
    assert run(sw, pkt(0xFF, 0xFF, 0, 0))[2:] == (0, 0)  # explicit reject: NoError


def test_lookahead_advance_and_varbit(tmp_path):
    states = """
    state start {
        pkt.extract(hdr.h);
        transition select(pkt.lookahead<bit<8>>()) { 0: skip; default: var; }
    }
    state skip { pkt.advance(8); pkt.extract(hdr.x); transition accept; }
    state var { pkt.extract(hdr.v, (bit<32>) (pkt.lookahead<bit<8>>() * 8)); transition accept; }
    """
    sw = build(tmp_path, parser_program(states))
    # lookahead 0: skip one byte, then x_t
    assert sw.process_packet(0, pkt(0, 0, 0, 0, b"\x00\xAB\xCC"))[0].data == \
        pkt(0, 0, 0, 0) + b"\xAB\xCC"
    # varbit of len=2 bytes... v_t.len is the first byte; varbit size = len*8
    assert sw.process_packet(0, pkt(0, 0, 0, 0, b"\x02\x11\x22\x33"))[0].data == \
        pkt(0, 0, 0, 0) + b"\x02\x11\x22\x33"


def test_sub_nibble_fields_roundtrip(tmp_path):
    states = "state start { pkt.extract(hdr.h); pkt.extract(hdr.x); transition accept; }"
    body = "hdr.x.lo = hdr.x.hi + 1;"
    sw = build(tmp_path, parser_program(states, body))
    assert sw.process_packet(0, pkt(0, 0, 0, 0, b"\x3F\x99"))[0].data == \
        pkt(0, 0, 0, 0) + b"\x34\x99"


@pytest.mark.parametrize("data", [b"", b"\x00", b"\xff" * 7, b"\x12" * 200, bytes(range(256))])
def test_any_bytes_go_through_without_exception(tmp_path, data):
    states = """
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) { 1: var; 2: x; default: accept; }
    }
    state var { pkt.extract(hdr.v, (bit<32>) hdr.h.b); transition accept; }
    state x { pkt.extract(hdr.x); transition accept; }
    """
    sw = build(tmp_path, parser_program(states))
    for first in (0, 1, 2):
        payload = bytes([first]) + data[1:] if data else data
        out = sw.process_packet(0, payload)
        assert all(o.port == 1 for o in out)


def test_log_msg_and_trace_lines(tmp_path):
    lines: list[str] = []
    sw = ingress(tmp_path, 'log_msg("a is {}", {hdr.h.a});', trace=lines.append)
    run(sw, pkt(42, 0, 0, 0))
    assert "a is 42" in lines
    assert any("Parser state 'start'" in line for line in lines)
    assert any("Transmitting packet of size 8 out of port 1" in line for line in lines)


def test_generated_source_is_kept(tmp_path):
    sw = ingress(tmp_path, "hdr.h.a = 1;")
    assert "def " in sw.generated_source
    assert "_T(" not in sw.generated_source  # no tracing code when trace is off


def test_value_set_sub_parser_and_parser_locals(tmp_path):
    src = PRELUDE + """
    header x_t { bit<8> x; }
    struct headers_t { h_t h; x_t x; }
    struct meta_t { bit<8> m; }
    parser Sub(packet_in pkt, out x_t x, inout bit<8> seen) {
        state start { pkt.extract(x); seen = seen + 1; transition accept; }
    }
    parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
        value_set<bit<8>>(4) special;
        Sub() sub;
        bit<8> count = 10;
        state start {
            pkt.extract(hdr.h);
            transition select(hdr.h.a) { special: more; default: accept; }
        }
        state more { sub.apply(pkt, hdr.x, count); meta.m = count; transition accept; }
    }
    control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
    control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
        apply { sm.egress_spec = 1; hdr.h.b = meta.m; }
    }
    control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
    control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
    control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
    V1Switch(P(), VC(), I(), E(), CC(), D()) main;
    """
    sw = build(tmp_path, src)
    assert sw.process_packet(0, pkt(7, 0, 0, 0, b"\x99"))[0].data == pkt(7, 0, 0, 0) + b"\x99"
    sw.value_set("special").add([7])
    assert sw.process_packet(0, pkt(7, 0, 0, 0, b"\x99"))[0].data == pkt(7, 11, 0, 0) + b"\x99"


def test_structs_tuples_enums_and_equality(tmp_path):
    top = """
    enum Color { Red, Green, Blue }
    enum bit<8> Kind { A = 3, B = 9 }
    struct pair_t { bit<8> x; bit<8> y; }
    """
    body = """
        pair_t p = { hdr.h.a, hdr.h.b };
        pair_t q;
        q = p;
        q.y = q.y + 1;
        tuple<bit<8>, bit<16>> tp = { 8w1, 16w2 };
        Color c = hdr.h.a == 1 ? Color.Green : Color.Blue;
        Kind k = (Kind) hdr.h.a;
        switch (c) { Color.Green: { hdr.h.c = 1; } default: { hdr.h.c = 2; } }
        hdr.h.d = (p == q) ? 32w1 : 32w0;
        if (k == Kind.B) { hdr.h.d = hdr.h.d + 100; }
        hdr.h.b = q.y + tp[0];
    """
    sw = ingress(tmp_path, body, top=top)
    assert run(sw, pkt(1, 5, 0, 0)) == (1, 7, 1, 0)
    assert run(sw, pkt(9, 5, 0, 0)) == (9, 7, 2, 100)


def test_default_only_action_and_default_with_args(tmp_path):
    decls = """
    action a(bit<8> v) { hdr.h.b = v; }
    action b() { hdr.h.b = 0xBB; }
    table t {
        key = { hdr.h.a : exact; }
        actions = { a; @defaultonly b; }
        default_action = b();
    }
    """
    sw = ingress(tmp_path, "t.apply();", decls)
    assert run(sw, pkt(1, 0, 0, 0))[1] == 0xBB
    with pytest.raises(ControlPlaneError, match="defaultonly"):
        sw.table("t").add_entry([ExactMatch(1)], "b")
    sw.table("t").set_default_action("a", [3])
    assert run(sw, pkt(1, 0, 0, 0))[1] == 3


def test_clone3_field_list_from_data(tmp_path):
    src = ingress_program(STANDARD, "meta.m = 5; clone3(CloneType.I2E, 2, {meta.m});")
    src = src.replace(
        "control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) "
        "{ apply { } }",
        "control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) "
        "{ apply { if (sm.instance_type == 1) { hdr.h.a = meta.m; } } }")
    sw = build(tmp_path, src)
    sw.pre.mirroring_add(2, 6)
    out = [(o.port, o.data) for o in sw.process_packet(0, pkt(0, 0, 0, 0))]
    assert out == [(6, pkt(5, 0, 0, 0)), (1, pkt(0, 0, 0, 0))]


def test_lookahead_header_type(tmp_path):
    states = """
    state start {
        pkt.extract(hdr.h);
        x_t peek = pkt.lookahead<x_t>();
        meta.m = (bit<8>) peek.hi;
        transition accept;
    }
    """
    sw = build(tmp_path, parser_program(states, "hdr.h.b = meta.m;"))
    assert sw.process_packet(0, pkt(0, 0, 0, 0, b"\xA5"))[0].data == pkt(0, 0xA, 0, 0) + b"\xA5"


def test_exit_still_copies_out_scalar_arguments(tmp_path):
    top = """
    control Sub(inout bit<8> x) {
        apply { x = x + 1; if (x == 5) { exit; } x = x + 10; }
    }
    """
    decls = "Sub() s; action a(inout bit<8> v) { v = 0x77; exit; }"
    src = ingress_program(
        STANDARD, "s.apply(hdr.h.a); if (hdr.h.b == 1) { a(hdr.h.c[7:0]); } hdr.h.d = 1;", decls)
    src = src.replace("control VC(", top + "\ncontrol VC(")
    sw = build(tmp_path, src)
    assert run(sw, pkt(4, 0, 0, 0)) == (5, 0, 0, 0)
    assert run(sw, pkt(6, 0, 0, 0)) == (17, 0, 0, 1)
    assert run(sw, pkt(6, 1, 0x1200, 0)) == (17, 1, 0x1277, 0)


def test_deprecated_mark_to_drop_and_internal_errors_do_not_escape(tmp_path):
    sw = ingress(tmp_path, "if (hdr.h.a == 1) { mark_to_drop(); }")
    assert sw.process_packet(0, pkt(1, 0, 0, 0)) == []
    assert len(sw.process_packet(0, pkt(2, 0, 0, 0))) == 1


def test_parser_loop_without_progress_times_out(tmp_path):
    states = """
    state start { pkt.extract(hdr.h); transition spin; }
    state spin { meta.m = meta.m + 1; transition select(hdr.h.a) { 0: spin; default: accept; } }
    """
    body = "if (sm.parser_error == error.ParserTimeout) { hdr.h.b = 0xEE; }"
    sw = build(tmp_path, parser_program(states, body))
    assert run(sw, pkt(0, 0, 0, 0))[1] == 0xEE
    assert run(sw, pkt(1, 0, 0, 0))[1] == 0
