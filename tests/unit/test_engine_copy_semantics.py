"""Copy-in/copy-out of header/struct arguments (P4_16 spec 6.8) in nested calls.

Expected bytes are what p4c + BMv2 give: p4c's midend makes the copies explicit, so BMv2 shows
exact copy-in/copy-out semantics."""

from __future__ import annotations

from inline_programs import build_switch, ingress_program

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers_t { h_t h; }
struct pair_t { h_t h; bit<8> z; }
struct meta_t { bit<8> m; pair_t p; }
"""

IN = bytes([1, 2, 3, 4]) + b"payload"


def run(tmp_path, body: str, decls: str = "", top: str = "") -> bytes:
    sw = build_switch(tmp_path, ingress_program(PROGRAM, body, decls, top))
    out = sw.process_packet(0, IN)
    assert len(out) == 1 and out[0].port == 1
    return out[0].data


# -- (1) an `in` argument is a private copy ----------------------------------------------------

def test_in_header_unchanged_by_callee_writing_the_original(tmp_path):
    decls = """
    action rd(in h_t x) { hdr.h.a = 9; hdr.h.b = x.a; }
    """
    assert run(tmp_path, "rd(hdr.h);", decls)[:4] == bytes([9, 1, 3, 4])


def test_in_header_of_sub_control_not_aliased_with_inout(tmp_path):
    top = """
    control Sub(in h_t x, inout h_t y) { apply { y.a = 9; y.b = x.a; } }
    """
    data = run(tmp_path, "s.apply(hdr.h, hdr.h);", "Sub() s;", top)
    assert data[:4] == bytes([9, 1, 3, 4])


def test_in_struct_of_function_is_a_copy(tmp_path):
    top = """
    bit<8> f(in pair_t p, inout pair_t q) { q.z = 50; return p.z; }
    """
    body = "meta.p.z = 5; hdr.h.a = f(meta.p, meta.p); hdr.h.b = meta.p.z;"
    assert run(tmp_path, body, "", top)[:4] == bytes([5, 50, 3, 4])


# -- (2) an `inout` argument reaches the caller only at return ---------------------------------

def test_inout_copied_out_only_at_return(tmp_path):
    decls = """
    action w(inout meta_t x) { x.m = 7; hdr.h.b = meta.m; }
    """
    body = "meta.m = 3; w(meta); hdr.h.c = meta.m;"
    assert run(tmp_path, body, decls)[:4] == bytes([1, 3, 7, 4])


def test_inout_header_from_table_action_list(tmp_path):
    decls = """
    action w(inout h_t x) { x.a = 0x70; hdr.h.d = hdr.h.a; hdr.h.c = 0x33; }
    table t { actions = { w(hdr.h); } default_action = w(hdr.h); }
    """
    # the copy-out of x overwrites the writes made through hdr.h meanwhile
    assert run(tmp_path, "t.apply();", decls)[:4] == bytes([0x70, 2, 3, 4])


# -- (3) the same object passed twice does not alias -------------------------------------------

def test_same_header_twice_copies_out_left_to_right(tmp_path):
    decls = """
    action two(inout h_t x, inout h_t y) { x.a = 0x11; y.b = 0x22; }
    """
    # y is copied out last: its copy never saw x.a = 0x11
    assert run(tmp_path, "two(hdr.h, hdr.h);", decls)[:4] == bytes([1, 0x22, 3, 4])


def test_function_inout_and_in_of_same_header(tmp_path):
    top = """
    void g(inout h_t x, in h_t y) { x.a = 10; x.b = y.a; }
    """
    assert run(tmp_path, "g(hdr.h, hdr.h);", "", top)[:4] == bytes([10, 1, 3, 4])


# -- (4) an `out` argument starts uninitialised ------------------------------------------------

def test_out_header_of_sub_control_starts_invalid(tmp_path):
    top = """
    control Sub(out h_t y, out bit<8> v) {
        apply {
            v = y.isValid() ? 8w1 : 8w2;
            y.setValid(); y.a = 0x41; y.b = 0x42; y.c = 0x43; y.d = 0x44;
        }
    }
    """
    data = run(tmp_path, "s.apply(hdr.h, meta.m); hdr.h.d = meta.m;", "Sub() s;", top)
    assert data[:4] == bytes([0x41, 0x42, 0x43, 2])


def test_out_struct_of_action_starts_invalid_and_zero(tmp_path):
    decls = """
    action o(out pair_t p) {
        hdr.h.a = p.h.isValid() ? 8w1 : 8w2;
        hdr.h.b = p.z;
        p.z = 0x66;
    }
    """
    body = "meta.p.h.setValid(); meta.p.z = 9; o(meta.p); hdr.h.c = meta.p.z;" \
        " hdr.h.d = meta.p.h.isValid() ? 8w1 : 8w2;"
    assert run(tmp_path, body, decls)[:4] == bytes([2, 0, 0x66, 2])


def test_out_header_of_function_discards_caller_value(tmp_path):
    top = """
    void mk(out h_t x, out bit<8> v) {
        v = x.isValid() ? 8w1 : 8w2;
        x.setValid(); x.a = 0x21; x.b = 0x22; x.c = 0x23; x.d = 0x24;
    }
    """
    body = "mk(hdr.h, meta.m); hdr.h.d = meta.m;"
    assert run(tmp_path, body, "", top)[:4] == bytes([0x21, 0x22, 0x23, 2])


# -- scalars were already passed by value ------------------------------------------------------

def test_scalar_inout_not_visible_before_return(tmp_path):
    decls = """
    action s(inout bit<8> x) { x = 0x50; hdr.h.b = hdr.h.a; }
    """
    assert run(tmp_path, "s(hdr.h.a);", decls)[:4] == bytes([0x50, 1, 3, 4])


def test_copy_back_keeps_the_unparsed_payload(tmp_path):
    decls = """
    action w(inout h_t x) { x.a = 0x77; }
    """
    out = run(tmp_path, "w(hdr.h);", decls)
    assert out[:4] == bytes([0x77, 2, 3, 4])
    assert out[4:] == b"payload"
