"""Soak: one `softswitch run` (nanomsg ports, tests/p4/runtime/big_tables.p4) under fuzzed
packets, a P4Runtime client making random valid changes and a hostile P4Runtime client, all
at once for SOAK_SECONDS (default 60). Afterwards the switch must still forward, hold exactly
what the valid client's accepted updates say, answer P4Runtime, have lost no thread, and exit
with status 0.

Seeded (SOAK_SEED, printed) so that a failure can be replayed, as far as thread timing allows;
nothing is asserted about timing.
"""

from __future__ import annotations

import contextlib
import os
import random
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pynng
import pytest
from finsy.proto import p4r, p4r_grpc

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is a folder of the repository, not an installed package
    sys.path.insert(0, str(ROOT))

from bench.runtime_rate import SwitchProcess, switch_process  # noqa: E402
from p4rt import (  # noqa: E402
    DELETE,
    INSERT,
    MODIFY,
    P4RuntimeWriteError,
    Schema,
    SwitchConnection,
    TableEntry,
)
from p4rt.client import CHANNEL_OPTIONS, arbitration_request, to_update, uint128  # noqa: E402
from softswitch.runtime.ports.nanomsg import (  # noqa: E402
    HEADER,
    MsgType,
    decode,
    encode,
    packet_in,
)
from softswitch.runtime.server.status import decode_details  # noqa: E402

PROGRAM = ROOT / "tests" / "p4" / "runtime" / "big_tables.p4"
TABLES = ("I.hosts", "I.peers")
KEYS = 1500          # per table: collisions are frequent, and reads span several chunks
HOSTILE_KEY = 1 << 40  # keys of the hostile client's (refused) writes: never in the model
PROBE = bytes.fromhex("02000000bb01" "02000000bb02" "88b6") + b"soak probe" + bytes(40)
# Codes that mean "the server has a bug", not "the request was bad".
BUG_CODES = {"INTERNAL", "UNKNOWN"}
BUG_NUMBERS = {grpc.StatusCode.INTERNAL.value[0], grpc.StatusCode.UNKNOWN.value[0]}

Model = dict[tuple[str, int], tuple[str, tuple[int, ...]]]   # (table, key) → (action, params)


@dataclass
class Stats:
    """What the workers did, and what they saw that they must not have."""

    packets: int = 0          # nanomsg messages sent by the fuzzer
    received: int = 0         # messages the switch sent back
    batches: int = 0          # the valid client's Write batches
    updates: int = 0
    accepted: int = 0
    reads: int = 0
    hostile: Counter[str] = field(default_factory=Counter)   # hostile requests by kind
    surprises: list[str] = field(default_factory=list)

    def surprise(self, what: str) -> None:
        if len(self.surprises) < 50:
            self.surprises.append(what)


@dataclass
class Ids:
    """big_tables' P4Info ids."""

    tables: dict[str, int]
    actions: dict[str, int]

    @classmethod
    def of(cls, schema: Schema) -> Ids:
        info = schema.p4info
        return cls({t.preamble.name: t.preamble.id for t in info.tables},
                   {a.preamble.name: a.preamble.id for a in info.actions})


def _worker(name: str, errors: list[str], body: Callable[[], None]) -> threading.Thread:
    def run() -> None:
        try:
            body()
        except Exception as exc:   # reported by the test, not lost in a thread
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
    return threading.Thread(target=run, name=name, daemon=True)


# -- (i) fuzzed packets ---------------------------------------------------------------------------

def _fuzz_message(rng: random.Random) -> bytes:
    kind = rng.randrange(9)
    if kind == 0:                                   # garbage
        return rng.randbytes(rng.randrange(64))
    if kind == 1:                                   # empty
        return b""
    if kind == 2:                                   # a truncated header
        return rng.randbytes(rng.randrange(1, HEADER.size))
    if kind == 3:                                   # PACKET_IN whose length lies
        data = rng.randbytes(rng.randrange(0, 200))
        more = rng.choice([len(data) + rng.randrange(1, 5000), -rng.randrange(1, 1 << 31),
                           rng.randrange(1 << 31)])
        return encode(MsgType.PACKET_IN, rng.randrange(-5, 600), more, data)
    if kind == 4:                                   # a type out of range
        msg_type = rng.choice([rng.randrange(7, 1 << 31), -rng.randrange(1, 1 << 31)])
        return encode(msg_type, rng.randrange(1 << 31), rng.randrange(-1, 100),
                      rng.randbytes(rng.randrange(32)))
    if kind == 5:                                   # port management and info requests
        msg_type = rng.choice([MsgType.PORT_ADD, MsgType.PORT_REMOVE, MsgType.PORT_SET_STATUS,
                               MsgType.INFO_REQ, MsgType.INFO_REP, MsgType.PACKET_OUT])
        return encode(msg_type, rng.randrange(-1, 600), rng.randrange(-1, 4),
                      rng.randbytes(rng.randrange(8)))
    port = rng.choice([1, 2, 3, rng.randrange(-(1 << 31), 1 << 31), 255, 511, 512])
    return packet_in(port, rng.randbytes(rng.randrange(2001)))   # random frames, 0..2000 bytes


def fuzz_packets(peer: pynng.Pair0, rng: random.Random, stop: threading.Event,
                 stats: Stats) -> None:
    while not stop.is_set():
        for _ in range(rng.randrange(1, 50)):
            with contextlib.suppress(pynng.Timeout):   # the switch applies back pressure
                peer.send(_fuzz_message(rng))
                stats.packets += 1
        time.sleep(0.001)


def drain(peer: pynng.Pair0, stop: threading.Event, stats: Stats) -> None:
    """Read what the switch sends, so that it never waits on us."""
    while not stop.is_set():
        with contextlib.suppress(pynng.Timeout):
            peer.recv()
            stats.received += 1


# -- (ii) the valid client ------------------------------------------------------------------------

def _entry(schema: Schema, table: str, key: int, action: tuple[str, tuple[int, ...]] | None
           ) -> TableEntry:
    field_name = "dst_addr" if table == "I.hosts" else "src_addr"
    entry = TableEntry(schema, table).match(**{field_name: key})
    if action is not None:
        entry.action(action[0], *action[1])
    return entry


def _random_update(rng: random.Random) -> tuple[int, str, int, tuple[str, tuple[int, ...]]]:
    action = ("I.tag", (rng.randrange(256),)) if rng.random() < 0.7 else ("I.nop", ())
    return rng.choice([INSERT, INSERT, MODIFY, DELETE]), rng.choice(TABLES), \
        rng.randrange(1, KEYS + 1), action


def valid_writes(sw: SwitchConnection, rng: random.Random, stop: threading.Event,
                 model: Model, stats: Stats) -> None:
    """Random INSERT/MODIFY/DELETE batches; the model takes exactly the accepted updates.
    The verdicts must be the ones the model predicts (ALREADY_EXISTS / NOT_FOUND)."""
    assert sw.schema is not None
    while not stop.is_set():
        ops = [_random_update(rng) for _ in range(rng.randrange(1, 120))]
        updates = [to_update((kind, _entry(sw.schema, table, key,
                                           None if kind == DELETE else action)))
                   for kind, table, key, action in ops]
        failed: dict[int, str] = {}
        try:
            sw.write(updates)
        except P4RuntimeWriteError as error:
            if not error.errors:
                raise   # refused as a whole: the model cannot know what happened
            failed = {e.index: e.code for e in error.errors}
        stats.batches += 1
        stats.updates += len(ops)
        for index, (kind, table, key, action) in enumerate(ops):
            present = (table, key) in model
            expected = {INSERT: None if not present else "ALREADY_EXISTS",
                        MODIFY: None if present else "NOT_FOUND",
                        DELETE: None if present else "NOT_FOUND"}[kind]
            if failed.get(index) != expected:
                stats.surprise(f"update {kind} {table} {key}: got {failed.get(index)}, "
                               f"model expected {expected}")
            if index in failed:
                continue
            stats.accepted += 1
            if kind == DELETE:
                del model[table, key]
            else:
                model[table, key] = action
        if rng.random() < 0.05:   # reads interleaved with the writes (not a snapshot)
            list(sw.read_raw(p4r.TableEntry()))
            stats.reads += 1


# -- (iii) the hostile client ---------------------------------------------------------------------

def _exact(value: bytes, field_id: int = 1) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=field_id, exact=p4r.FieldMatch.Exact(value=value))


def _malformed_update(rng: random.Random, ids: Ids) -> p4r.Update:
    """An update the server must refuse (its key, when it has one, is a hostile one)."""
    hosts, tag, nop = ids.tables["I.hosts"], ids.actions["I.tag"], ids.actions["I.nop"]
    key = (HOSTILE_KEY + rng.randrange(1 << 20)).to_bytes(6, "big")
    tag1 = p4r.TableAction(action=p4r.Action(action_id=tag, params=[
        p4r.Action.Param(param_id=1, value=b"\x01")]))

    def entry(**fields: object) -> p4r.Entity:
        base: dict[str, object] = {"table_id": hosts, "match": [_exact(key)], "action": tag1}
        base.update(fields)
        return p4r.Entity(table_entry=p4r.TableEntry(**base))  # type: ignore[arg-type]

    def action(action_id: int, *params: tuple[int, bytes]) -> p4r.TableAction:
        return p4r.TableAction(action=p4r.Action(action_id=action_id, params=[
            p4r.Action.Param(param_id=i, value=v) for i, v in params]))

    bad_entities = [
        entry(table_id=0x02FFFFFF),                                   # unknown table
        entry(table_id=ids.actions["I.tag"]),                         # an action's id
        entry(action=action(0x01FFFFFF)),                             # unknown action
        entry(action=action(tag, (1, b"\x01\x00"))),                  # 9 bits in bit<8>
        entry(action=action(tag)),                                    # missing parameter
        entry(action=action(tag, (1, b"\x01"), (9, b"\x01"))),        # unknown parameter
        entry(action=action(nop, (1, b"\x01"))),                      # nop takes none
        entry(match=[_exact(b"\x01" + key)]),                         # 56 bits in bit<48>
        entry(match=[_exact(key, field_id=7)]),                       # unknown field
        entry(match=[]),                                              # exact key missing
        entry(match=[_exact(key), _exact(key)]),                      # field twice
        entry(match=[p4r.FieldMatch(field_id=1, ternary=p4r.FieldMatch.Ternary(
            value=key, mask=key))]),                                  # ternary on exact
        entry(match=[_exact(b"")]),                                   # empty bytestring
        entry(priority=rng.randrange(1, 1 << 31)),                    # priority, exact table
        entry(is_default_action=True),                                # default with a key
        entry(action=p4r.TableAction()),                              # no action
        entry(action=p4r.TableAction(action_profile_member_id=5)),    # no action profile
        p4r.Entity(),                                                 # no entity at all
        p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=0x12345678)),
        p4r.Entity(register_entry=p4r.RegisterEntry(register_id=0x12345678)),
    ]
    update_type = rng.choice([p4r.Update.INSERT, p4r.Update.MODIFY])
    if rng.random() < 0.1:
        return p4r.Update(type=p4r.Update.UNSPECIFIED, entity=entry())
    if rng.random() < 0.05:
        return p4r.Update(type=99, entity=entry())   # type: ignore[arg-type]
    return p4r.Update(type=update_type, entity=rng.choice(bad_entities))


def _valid_hostile_update(rng: random.Random, schema: Schema) -> p4r.Update:
    """A well-formed INSERT with a hostile key: only the missing authority makes it fail."""
    return to_update((INSERT, _entry(schema, rng.choice(TABLES),
                                     HOSTILE_KEY + rng.randrange(1 << 20), ("I.nop", ()))))


class Hostile:
    """Requests that must each fail (or be harmless), never hurt the server."""

    def __init__(self, address: str, schema: Schema, rng: random.Random, stats: Stats) -> None:
        self.channel = grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self.schema = schema
        self.ids = Ids.of(schema)
        self.rng = rng
        self.stats = stats
        # No (de)serializers: the bytes go to the server as they are.
        self.raw_write = self.channel.unary_unary("/p4.v1.P4Runtime/Write")
        self.raw_read = self.channel.unary_stream("/p4.v1.P4Runtime/Read")
        self.raw_capabilities = self.channel.unary_unary("/p4.v1.P4Runtime/Capabilities")
        self.raw_stream = self.channel.stream_stream("/p4.v1.P4Runtime/StreamChannel")

    def close(self) -> None:
        self.channel.close()

    def run(self, stop: threading.Event) -> None:
        actions = [self.malformed_write, self.unauthorised_write, self.duplicate_wildcards,
                   self.unknown_table_read, self.cancelled_stream, self.bad_device_arbitration,
                   self.random_bytes]
        while not stop.is_set():
            action = self.rng.choice(actions)
            action()
            self.stats.hostile[action.__name__] += 1

    def _must_fail(self, what: str, call: Callable[[], object], *, write: bool) -> None:
        """`call` must fail, with neither INTERNAL (the server's own bug) nor, but for a Write
        batch (UNKNOWN + one error per update), UNKNOWN (an exception grpcio caught)."""
        try:
            call()
        except grpc.RpcError as error:
            code = error.code().name   # type: ignore[attr-defined]
            details = decode_details(error.trailing_metadata())   # type: ignore[attr-defined]
            bugs = [d for d in details if d.canonical_code in BUG_NUMBERS]
            if code == "INTERNAL" or (code == "UNKNOWN" and not (write and details)) or bugs:
                self.stats.surprise(f"{what}: {code} {error.details()} {bugs[:1]}")  # type: ignore[attr-defined]
        else:
            self.stats.surprise(f"{what}: accepted")

    def malformed_write(self) -> None:
        updates = [_malformed_update(self.rng, self.ids) for _ in range(self.rng.randrange(1, 6))]
        request = p4r.WriteRequest(device_id=0, election_id=uint128((0, 1)), updates=updates)
        self._must_fail(f"malformed write {updates}", lambda: self.stub.Write(request, timeout=30),
                        write=True)

    def unauthorised_write(self) -> None:
        update = _valid_hostile_update(self.rng, self.schema)
        request = p4r.WriteRequest(device_id=0, updates=[update])
        match self.rng.randrange(4):
            case 0:
                what = "write without election id"
            case 1:
                what = "write with another election id"
                request.election_id.CopyFrom(uint128((0, self.rng.randrange(2, 1000))))
            case 2:
                what = "write for an unknown role"
                request.election_id.CopyFrom(uint128((0, 1)))
                request.role = f"nobody-{self.rng.randrange(1000)}"
            case _:
                what = "write to another device"
                request.election_id.CopyFrom(uint128((0, 1)))
                request.device_id = self.rng.randrange(1, 1 << 64)
        self._must_fail(what, lambda: self.stub.Write(request, timeout=30), write=True)

    def duplicate_wildcards(self) -> None:
        copies = self.rng.randrange(1000, 5000)
        request = p4r.ReadRequest(device_id=0, entities=[
            p4r.Entity(table_entry=p4r.TableEntry()) for _ in range(copies)])
        try:
            seen = [(e.table_entry.table_id, e.table_entry.match[0].exact.value)
                    for reply in self.stub.Read(request, timeout=60) for e in reply.entities]
        except grpc.RpcError as error:
            self.stats.surprise(f"read of {copies} wildcards: {error.code()} {error.details()}")  # type: ignore[attr-defined]
            return
        if len(seen) != len(set(seen)) or len(seen) > 2 * KEYS:
            self.stats.surprise(f"read of {copies} wildcards: {len(seen)} entities, "
                                f"{len(set(seen))} distinct")

    def unknown_table_read(self) -> None:
        entity = self.rng.choice([
            p4r.Entity(table_entry=p4r.TableEntry(table_id=self.rng.randrange(1, 1 << 32))),
            p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=self.rng.randrange(1, 1 << 32))),
            p4r.Entity(table_entry=p4r.TableEntry(table_id=self.ids.tables["I.hosts"],
                                                  match=[_exact(b"\x01" * 9)])),
        ])
        request = p4r.ReadRequest(device_id=0, entities=[entity])
        self._must_fail(f"read {entity}", lambda: list(self.stub.Read(request, timeout=30)),
                        write=False)

    def cancelled_stream(self) -> None:
        """A stream for a random role, cancelled at a random moment."""
        done = threading.Event()
        role = f"soak-{self.rng.randrange(1 << 30):x}"   # never the valid client's role ""
        election = (self.rng.randrange(2), self.rng.randrange(1 << 64))
        first = arbitration_request(0, election, role)
        packet = p4r.StreamMessageRequest(packet=p4r.PacketOut(
            payload=self.rng.randbytes(self.rng.randrange(100))))
        send_packet = self.rng.random() < 0.5   # decided here: gRPC's thread runs requests()

        def requests() -> Iterator[p4r.StreamMessageRequest]:
            yield first
            if send_packet:
                yield packet
            done.wait(2)

        call = self.stub.StreamChannel(requests(), timeout=2)
        time.sleep(self.rng.random() * 0.02)
        with contextlib.suppress(grpc.RpcError, StopIteration):
            if self.rng.random() < 0.5:
                next(call)
        call.cancel()
        done.set()

    def bad_device_arbitration(self) -> None:
        device = self.rng.choice([1, 7, self.rng.randrange(2, 1 << 64)])
        done = threading.Event()

        def requests() -> Iterator[p4r.StreamMessageRequest]:
            yield arbitration_request(device, (0, self.rng.randrange(1, 1 << 64)),
                                      self.rng.choice(["", "soak-bad-device"]))
            done.wait(2)

        call = self.stub.StreamChannel(requests(), timeout=2)
        try:
            reply = next(call)
            if reply.arbitration.status.code == 0:
                self.stats.surprise(f"arbitration for device {device} accepted")
        except grpc.RpcError as error:
            if error.code().name in BUG_CODES:   # type: ignore[attr-defined]
                self.stats.surprise(f"arbitration for device {device}: {error.code()}")  # type: ignore[attr-defined]
        except StopIteration:
            pass
        finally:
            call.cancel()
            done.set()

    def random_bytes(self) -> None:
        data = self.rng.randbytes(self.rng.randrange(1, 300))
        target = self.rng.choice(["Write", "Read", "Capabilities", "StreamChannel"])
        try:
            if target == "Write":
                self.raw_write(data, timeout=30)
            elif target == "Read":
                list(self.raw_read(data, timeout=30))
            elif target == "Capabilities":
                self.raw_capabilities(data, timeout=30)
            else:
                call = self.raw_stream(iter([data]), timeout=2)
                with contextlib.suppress(StopIteration):
                    next(call)
                call.cancel()
        except grpc.RpcError as error:
            code = error.code().name   # type: ignore[attr-defined]
            if code == "INTERNAL" or (code == "UNKNOWN" and target != "Write"):
                self.stats.surprise(f"random bytes to {target} ({data.hex()}): {code} "
                                    f"{error.details()}")  # type: ignore[attr-defined]


# -- the checks at the end ------------------------------------------------------------------------

def read_tables(sw: SwitchConnection, ids: Ids) -> Model:
    names = {v: k for k, v in ids.tables.items()}
    actions = {v: k for k, v in ids.actions.items()}
    out: Model = {}
    for entity in sw.read_raw(p4r.TableEntry()):
        te = entity.table_entry
        [match] = te.match
        key = (names[te.table_id], int.from_bytes(match.exact.value, "big"))
        assert key not in out, f"read twice: {key}"
        out[key] = (actions[te.action.action.action_id],
                    tuple(int.from_bytes(p.value, "big") for p in te.action.action.params))
    return out


def probe_comes_back(peer: pynng.Pair0) -> bool:
    """The known frame sent on port 1 comes back byte-exact on port 2 (other traffic still
    in flight is skipped)."""
    peer.send(packet_in(1, PROBE))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(pynng.Timeout):
            msg = decode(peer.recv())
            if msg.type == MsgType.PACKET_OUT and msg.payload == PROBE:
                return msg.port == 2 and msg.more == len(PROBE)
    return False


@contextlib.contextmanager
def soak_switch(workdir: Path, log: Path) -> Iterator[SwitchProcess]:
    with switch_process(workdir, program=PROGRAM,
                        options=["--log-file", str(log), "-L", "info"]) as switch:
        yield switch


@pytest.mark.slow
def test_softswitch_survives_a_soak(tmp_path: Path) -> None:
    seconds = float(os.environ.get("SOAK_SECONDS", "60"))
    seed = int(os.environ.get("SOAK_SEED", str(time.time_ns() % 1_000_000)))
    print(f"soak: {seconds:g} s, SOAK_SEED={seed}")
    log = tmp_path / "switch.log"
    stats, model, errors = Stats(), {}, []
    stop_work, stop_drain = threading.Event(), threading.Event()
    with soak_switch(tmp_path, log) as switch, \
            pynng.Pair0(dial=switch.ipc, recv_timeout=200, send_timeout=200) as peer, \
            SwitchConnection(switch.grpc_addr, device_id=0, election_id=(0, 1)) as sw:
        assert sw.is_primary
        sw.set_pipeline(switch.p4info, switch.ir.read_bytes())
        assert sw.schema is not None
        ids = Ids.of(sw.schema)
        hostile = Hostile(switch.grpc_addr, sw.schema, random.Random(seed + 3), stats)
        workers = [
            _worker("fuzz", errors, lambda: fuzz_packets(peer, random.Random(seed + 1),
                                                          stop_work, stats)),
            _worker("valid", errors, lambda: valid_writes(sw, random.Random(seed + 2),
                                                           stop_work, model, stats)),
            _worker("hostile", errors, lambda: hostile.run(stop_work)),
        ]
        drainer = _worker("drain", errors, lambda: drain(peer, stop_drain, stats))
        drainer.start()
        for worker in workers:
            worker.start()
        time.sleep(seconds)
        stop_work.set()
        for worker in workers:
            worker.join(120)
        stop_drain.set()
        drainer.join(10)
        hostile.close()
        print(f"soak: {stats.packets} nanomsg messages sent, {stats.received} received back; "
              f"{stats.batches} write batches ({stats.updates} updates, {stats.accepted} "
              f"accepted), {stats.reads} reads; {stats.hostile.total()} hostile requests "
              f"{dict(stats.hostile)}; {len(model)} entries at the end")

        assert errors == []
        assert stats.surprises == []
        assert switch.process.poll() is None, "softswitch run exited during the soak"
        assert probe_comes_back(peer)
        assert read_tables(sw, ids) == model
        assert sw.capabilities()
        with SwitchConnection(switch.grpc_addr, device_id=0, election_id=(0, 1),
                              role="soak-after") as other:   # streams are still accepted
            assert other.is_primary
        switch.process.terminate()
        status = switch.process.wait(30)
    text = log.read_text(errors="replace")
    print(f"soak: switch log {len(text.splitlines())} lines, "
          f"{text.count('nanomsg message')} about skipped nanomsg messages")
    assert "died" not in text, text[-5000:]
    assert status == 0
    tracebacks = text.count("Traceback")
    assert tracebacks == 0, f"{tracebacks} logged tracebacks, e.g.\n" + text[
        text.index("Traceback") - 500:][:3000]


def test_fuzz_messages_cover_every_kind() -> None:
    """The fuzzer's generator makes each of its message shapes (a cheap self-check)."""
    rng = random.Random(1)
    messages = [_fuzz_message(rng) for _ in range(2000)]
    assert b"" in messages
    assert any(0 < len(m) < HEADER.size for m in messages)
    typed = [struct.unpack_from("<iii", m) for m in messages if len(m) >= HEADER.size]
    assert any(t[0] > MsgType.INFO_REP or t[0] < 0 for t in typed)
    frames = [m for m in messages if len(m) >= HEADER.size and decode(m).type == 3]
    assert any(len(decode(m).payload) > 1500 for m in frames)
    assert any(decode(m).more != len(decode(m).payload) for m in frames)
