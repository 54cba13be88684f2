"""Session.write_encoded and Session.read_encoded (the push's byte paths) against a softswitch
P4Runtime server: the same entries, errors and refusals as Session.write and Session.read."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from finsy.proto import p4r

from controller.devices.codec import PlanCodec
from controller.devices.session import Program, Session
from controller.plan.entries import PlannedEntry
from controller.topology.model import Endpoint
from p4rt.entities import INSERT
from p4rt.errors import P4RuntimeWriteError
from softswitch.runtime.device import Device
from softswitch.runtime.server.server import P4RuntimeServer

ROOT = Path(__file__).resolve().parents[2]
ROUTE = 0x2001_0DB8 << 96


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.compile(ROOT / "bench" / "p4" / "ipv6_lpm.p4")


@pytest.fixture
def server() -> Iterator[P4RuntimeServer]:
    srv = P4RuntimeServer(Device(1), "127.0.0.1:0")
    srv.start()
    yield srv
    srv.stop(0)


def routes(count: int, start: int = 0) -> list[PlannedEntry]:
    return [PlannedEntry.make("route_v6", {"dst_addr": (ROUTE | i << 64, 64)}, "set_nexthop",
                              {"port": 1 + i % 8, "dmac": i, "smac": 1})
            for i in range(start, start + count)]


async def _session(server: P4RuntimeServer, batch_size: int) -> Session:
    session = Session("sw", Endpoint(f"127.0.0.1:{server.port}", 1), batch_size=batch_size)
    assert await session.connect()
    return session


def test_encoded_writes_and_reads_match_the_message_paths(server, program) -> None:
    async def run() -> None:
        session = await _session(server, batch_size=7)
        try:
            await session.set_pipeline(program)
            codec = PlanCodec(program.schema)
            first = routes(20)
            assert await session.write_encoded(codec.encode(INSERT, e) for e in first) == []
            # duplicates of entries 3 and 11 among new ones: failures indexed in the updates,
            # across batches, worded as `write` words them
            again = [*routes(3, 100), first[3], *routes(7, 200), first[11], *routes(2, 300)]
            failed = await session.write_encoded(codec.encode(INSERT, e) for e in again)
            assert [f.index for f in failed] == [3, 11]
            assert all(f.code == "ALREADY_EXISTS" for f in failed)
            assert str(failed[0]) == ("update 3 (INSERT table Lpm.route_v6): ALREADY_EXISTS: "
                                      "table 'Lpm.route_v6': an entry with this match key "
                                      "exists")
            wildcard = [p4r.Entity(table_entry=p4r.TableEntry())]
            entities = await session.read(wildcard)
            assert len(entities) == 20 + 12
            raw = await session.read_encoded(wildcard)
            assert [p4r.Entity.FromString(e) for e in raw] == entities
            decoded = [codec.decode_entity(e) for e in raw]
            assert decoded == [codec.from_entity(e) for e in entities]
            assert sorted(decoded[:20], key=str) == sorted(
                (codec.canonical(e) for e in first), key=str)
        finally:
            await session.close()
    asyncio.run(run())


def test_a_request_refused_whole_raises(server, program) -> None:
    async def run() -> None:
        session = await _session(server, batch_size=5)
        try:   # no pipeline: every request is refused (FAILED_PRECONDITION), as by `write`
            codec = PlanCodec(program.schema)
            with pytest.raises(P4RuntimeWriteError) as refused:
                await session.write_encoded(codec.encode(INSERT, e) for e in routes(12))
            assert refused.value.code == "FAILED_PRECONDITION" and not refused.value.errors
            with pytest.raises(P4RuntimeWriteError) as same:
                await session.write([codec.update(INSERT, e) for e in routes(12)])
            assert same.value.code == refused.value.code
        finally:
            await session.close()
    asyncio.run(run())
