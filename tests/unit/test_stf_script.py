"""The STF script reader: grammar, key forms, errors with locations, expect matching, diffs."""

from __future__ import annotations

from pathlib import Path

import pytest

from softswitch.errors import StfError
from softswitch.stf.script import (
    ActionCall,
    AddEntry,
    CheckCounter,
    CounterCheck,
    ExactMatch,
    Expect,
    ExpectPattern,
    KeyField,
    LpmMatch,
    MaskedKey,
    McMgrpCreate,
    McNodeAssociate,
    McNodeCreate,
    MeterSetRates,
    MirroringAdd,
    MirroringAddMc,
    NumberKey,
    OptionalMatch,
    Packet,
    PrefixKey,
    RangeKey,
    RangeMatch,
    RegisterWrite,
    RemoveAll,
    SetDefault,
    TernaryMatch,
    Wait,
    check_port,
    format_packet_diff,
    match_expected,
    parse_stf,
    read_stf,
    resolve_key,
)

REPO = Path(__file__).resolve().parents[2]


def one(text: str):
    commands = parse_stf(text, "t.stf")
    assert len(commands) == 1
    return commands[0]


# --- add -----------------------------------------------------------------------------------------


def test_add_with_priority_keys_action_args_and_location() -> None:
    cmd = one("\n# comment\nadd test1 503 data.f1:0x****0202 ingress.setb1(val:7, port:3)\n")
    assert isinstance(cmd, AddEntry)
    assert (cmd.where.file, cmd.where.line) == ("t.stf", 3)
    assert cmd.table == "test1"
    assert cmd.priority == 503
    assert cmd.action == ActionCall("ingress.setb1", (("val", 7), ("port", 3)))
    assert cmd.action.arg_dict() == {"val": 7, "port": 3}
    (key,) = cmd.keys
    assert key.name == "data.f1"
    assert key.value == NumberKey("0x****0202", 0x0202, 0x0000FFFF, True)
    assert cmd.handle is None


def test_add_without_priority_and_all_key_forms() -> None:
    cmd = one("add t a:10 b:0x0a000000/8 c:0x0a&&&0xf0 d:5..0x10 e:0b1*1 f:0o7 act()")
    assert isinstance(cmd, AddEntry)
    assert cmd.priority is None
    assert [k.value for k in cmd.keys] == [
        NumberKey("10", 10, None, False),
        PrefixKey(0x0A000000, 8),
        MaskedKey(0x0A, 0xF0),
        RangeKey(5, 16),
        NumberKey("0b1*1", 0b101, 0b101, True),
        NumberKey("0o7", 7, 7, False),
    ]
    assert cmd.action == ActionCall("act", ())


def test_add_stack_index_dollar_and_handle() -> None:
    cmd = one("add ex1 110 extra$0.h:0x2525 hdr.s[1].f:1 act2(val:0x27) = A")
    assert isinstance(cmd, AddEntry)
    assert [k.name for k in cmd.keys] == ["extra[0].h", "hdr.s[1].f"]
    assert cmd.handle == "A"


def test_setdefault() -> None:
    cmd = one("setdefault ethertype_match l2_packet()")
    assert cmd == SetDefault(cmd.where, "ethertype_match", ActionCall("l2_packet"))
    cmd = one("SETDEFAULT t set_port(port: 0x3)")
    assert isinstance(cmd, SetDefault) and cmd.action.args == (("port", 3),)


# --- packets and expects -------------------------------------------------------------------------


def test_packet_joins_hex_groups() -> None:
    cmd = one("packet 0 01010101 03030303 9999  88\t77")
    assert cmd == Packet(cmd.where, 0, bytes.fromhex("0101010103030303999988") + b"\x77")


def test_expect_wildcards_exact_and_empty() -> None:
    cmd = one("expect 1 *1010101 0303 ** ab $")
    assert isinstance(cmd, Expect)
    assert cmd.port == 1
    assert cmd.pattern == ExpectPattern("*10101010303**AB", exact=True)
    assert str(cmd.pattern) == "*1 01 01 01 03 03 ** AB $"
    cmd = one("expect 5")
    assert cmd == Expect(cmd.where, 5, None)
    cmd = one("expect 2 00 11")
    assert isinstance(cmd, Expect) and cmd.pattern == ExpectPattern("0011", exact=False)


def test_multicast_mirroring_registers_counters_and_misc() -> None:
    cmds = parse_stf(
        """
        mc_mgrp_create 1
        mc_node_create 400 1 2 3
        mc_node_associate 1 0
        mirroring_add 5 4
        mirroring_add_mc 6 1
        register_write MyIngress.reg 3 0x10
        check_counter cnt(10) packets == 2
        check_counter cntDum($A)
        meter_set_rates m 0 0.5:10 1:20
        remove all
        wait
        """
    )
    where = [c.where for c in cmds]
    assert cmds == [
        McMgrpCreate(where[0], 1),
        McNodeCreate(where[1], 400, (1, 2, 3)),
        McNodeAssociate(where[2], 1, 0),
        MirroringAdd(where[3], 5, 4),
        MirroringAddMc(where[4], 6, 1),
        RegisterWrite(where[5], "MyIngress.reg", 3, 16),
        CheckCounter(where[6], "cnt", 10, CounterCheck("packets", "==", 2)),
        CheckCounter(where[7], "cntDum", "$A", None),
        cmds[8],
        RemoveAll(where[9]),
        Wait(where[10]),
    ]
    assert isinstance(cmds[8], MeterSetRates)
    assert [(r.per_unit, r.burst) for r in cmds[8].rates] == [(0.5, 10), (1.0, 20)]
    assert CounterCheck("bytes", "<=", 100).holds(100)
    assert not CounterCheck("packets", ">", 2).holds(2)


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("frobnicate 1 2", "t.stf:2: unknown STF command 'frobnicate'"),
        ("packet 0 0a0", "odd number of hex digits"),
        ("packet 0 zz", "invalid character 'z'"),
        ("packet x 00", "expected a decimal port"),
        ("packet 0", "has no data"),
        ("packet 600 00", "does not fit the 9-bit"),
        ("expect 1 00 $ 11", "'$' may only end"),
        ("expect 1 0g", "invalid character 'G'"),
        ("add t k:1", "has no action"),
        ("add t k 1 a()", "expected ':' after key field 'k'"),
        ("add t k:1 a(x:1", "expected ')'"),
        ("add t k:1 a(x:1,x:2)", "given twice"),
        ("add t k:0x1*/8 a()", "'*' is not allowed with '/'"),
        ("add t k:5..1 a()", "empty range"),
        ("add t k:1 a() junk", "unexpected 'junk'"),
        ("add t k:@ a()", "unexpected text '@ a()'"),
        ("add t 0x10 k:1 a()", "expected a decimal priority"),
        ("setdefault t", "expected an action"),
        ("mc_node_create 1", "expected a port"),
        ("mirroring_add 1", "expected a port for 'mirroring_add'"),
        ("wait now", "'wait' takes no arguments"),
        ("remove t", "only 'remove all'"),
        ("check_counter c(1) packets = 2", "expected a comparison"),
    ],
)
def test_errors_name_file_and_line(text: str, message: str) -> None:
    with pytest.raises(StfError) as info:
        parse_stf("# first line\n" + text, "t.stf")
    assert str(info.value).startswith("t.stf:2: ")
    assert message in str(info.value)


def test_read_stf_reports_missing_file(tmp_path: Path) -> None:
    with pytest.raises(StfError, match="cannot read STF file"):
        read_stf(tmp_path / "nope.stf")
    path = tmp_path / "x.stf"
    path.write_text("packet 1 00 11\nexpect 2 00 11\n")
    assert [type(c) for c in read_stf(path)] == [Packet, Expect]
    assert read_stf(path)[1].where.file == str(path)


# --- resolving key values ------------------------------------------------------------------------


def key(text: str) -> KeyField:
    cmd = one(f"add t {text} a()")
    assert isinstance(cmd, AddEntry)
    return cmd.keys[0]


@pytest.mark.parametrize(
    ("text", "kind", "width", "spec"),
    [
        ("f:0x0a0b", "exact", 16, ExactMatch(0x0A0B)),
        ("f:12", "exact", 8, ExactMatch(12)),
        ("f:0x0a000001/24", "lpm", 32, None),  # host bits set: rejected below
        ("f:0x0a000000/24", "lpm", 32, LpmMatch(0x0A000000, 24)),
        ("f:0x0a**", "lpm", 16, LpmMatch(0x0A00, 8)),
        ("f:0x0a0b", "lpm", 16, LpmMatch(0x0A0B, 16)),
        ("f:10", "lpm", 32, LpmMatch(10, 32)),
        ("f:0xff000000&&&0xff000000", "lpm", 32, LpmMatch(0xFF000000, 8)),
        ("f:0x****0101", "ternary", 32, TernaryMatch(0x0101, 0xFFFF)),
        ("f:0x0101", "ternary", 32, TernaryMatch(0x0101, 0xFFFF)),  # bmv2stf: digits written
        ("f:0x0a&&&0x0f", "ternary", 8, TernaryMatch(0x0A, 0x0F)),
        ("f:0x0a00/8", "ternary", 16, TernaryMatch(0x0A00, 0xFF00)),
        ("f:7", "ternary", 8, TernaryMatch(7, 0xFF)),
        ("f:0x1b", "ternary", 5, TernaryMatch(0x1B, 0x1F)),
        ("f:10..20", "range", 16, RangeMatch(10, 20)),
        ("f:7", "range", 16, RangeMatch(7, 7)),
        ("f:7", "optional", 8, OptionalMatch(7)),
        ("f:0x**", "optional", 8, OptionalMatch(None)),
        ("f:0&&&0", "optional", 8, OptionalMatch(None)),
    ],
)
def test_resolve_key(text: str, kind: str, width: int, spec: object) -> None:
    if spec is None:
        with pytest.raises(StfError, match="beyond the prefix"):
            resolve_key(key(text), kind, width)
    else:
        assert resolve_key(key(text), kind, width) == spec


@pytest.mark.parametrize(
    ("text", "kind", "width", "message"),
    [
        ("f:0x1ff", "exact", 8, "does not fit in 8 bits"),
        ("f:0x1*", "exact", 8, "need a ternary field"),
        ("f:1/9", "lpm", 8, "longer than the field"),
        ("f:0x0f&&&0x0f", "lpm", 8, "cannot be used for a lpm field"),
        ("f:0x1f&&&0x0f", "ternary", 8, "outside the mask"),
        ("f:1..2", "exact", 8, "cannot be used for a exact field"),
        ("f:0x1*", "optional", 8, "all or nothing"),
        ("f:1", "selector", 8, "match kind 'selector'"),
    ],
)
def test_resolve_key_errors(text: str, kind: str, width: int, message: str) -> None:
    cmd = one(f"add t {text} a()")
    assert isinstance(cmd, AddEntry)
    with pytest.raises(StfError, match=message) as info:
        resolve_key(cmd.keys[0], kind, width, cmd.where)
    assert str(info.value).startswith("t.stf:1: key field 'f'")


# --- matching and diffs --------------------------------------------------------------------------


def pattern(text: str) -> ExpectPattern:
    cmd = one(f"expect 0 {text}")
    assert isinstance(cmd, Expect) and cmd.pattern is not None
    return cmd.pattern


def test_match_expected_follows_bmv2stf() -> None:
    got = bytes.fromhex("0a0b0c0d")
    assert match_expected(pattern("0a0b0c0d"), got)
    assert match_expected(pattern("0A0B0C0D $"), got)
    assert match_expected(pattern("0a0b"), got)  # extra trailing bytes are ignored
    assert not match_expected(pattern("0a0b $"), got)  # ... unless `$`
    assert match_expected(pattern("0* *b ** 0d"), got)
    assert not match_expected(pattern("0a0b0c0e"), got)
    assert not match_expected(pattern("0a0b0c0d0e"), got)  # too short never matches
    assert not match_expected(pattern("0a0b0c0d**"), got)  # not even with wildcards
    assert match_expected(pattern("0a0b0"), got)  # an odd nibble count is allowed


def test_format_packet_diff_marks_first_differing_nibble() -> None:
    want = pattern("00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff 01 02 03 *4")
    got = bytes.fromhex("00112233445566778899aabbccddeeff0102f3f4")
    text = format_packet_diff(want, got)
    lines = text.splitlines()
    assert "differs at byte 18 (high nibble)" in lines[0]
    # rows: exp/got for offset 0, exp/got for offset 0x10, then the marker
    assert lines[3] == "    exp 0010  01 02 03 *4"
    assert lines[4] == "    got 0010  01 02 f3 f4"
    marker = lines[5]
    assert marker.rstrip().endswith("^")
    assert lines[4][marker.index("^")] == "f"
    assert lines[3][marker.index("^")] == "0"
    assert lines[1] == "    exp 0000  00 11 22 33 44 55 66 77  88 99 aa bb cc dd ee ff"


def test_format_packet_diff_length_problems() -> None:
    text = format_packet_diff(pattern("0a0b0c"), bytes.fromhex("0a0b"))
    assert "too short: 2 bytes, expected at least 3 bytes" in text
    marker = text.splitlines()[-1]
    assert marker.index("^") == len("    got 0000  0a 0b ")
    text = format_packet_diff(pattern("0a0b$"), bytes.fromhex("0a0b0c"))
    assert "(exact length)" in text and "too long: 3 bytes, expected exactly 2 bytes" in text


def test_check_port_reports_missing_unexpected_and_different() -> None:
    p = [pattern("0a0b"), pattern("0c0d")]
    assert check_port(1, p, [bytes.fromhex("0a0b99"), bytes.fromhex("0c0d")]) is None
    report = check_port(1, p, [bytes.fromhex("0a0c")])
    assert report is not None
    assert report.splitlines()[0] == "port 1: expected 2 packet(s), got 1"
    assert "packet #1 on port 1: differs" in report
    assert "packet #2 on port 1: missing (expected 0C 0D)" in report
    report = check_port(3, [], [b"\x01\x02"])
    assert report is not None
    assert "packet #1 on port 3: unexpected (2 bytes)" in report
    assert "0000  01 02" in report


# --- the corpus parses ---------------------------------------------------------------------------


def test_every_corpus_stf_parses_and_has_a_program() -> None:
    stf_files = sorted((REPO / "tests" / "stf").glob("*.stf"))
    for path in stf_files:
        commands = read_stf(path)
        assert any(isinstance(c, Packet) for c in commands), path.name
        base = path.stem
        program = REPO / "tests" / "p4" / f"{base}.p4"
        if not program.exists():
            program = REPO / "tests" / "p4" / f"{base.rsplit('-', 1)[0]}.p4"
        assert program.exists(), f"no program for {path.name}"
