"""p4rt/client.py's helpers for requests and answers as bytes (the push's fast path): they give
what the messages would, to the byte, and leave anything unusual to the protobuf parser."""

from __future__ import annotations

import pytest
from finsy.proto import p4r
from google.protobuf.message import DecodeError

from p4rt.client import (
    CONTINUE_ON_ERROR,
    chunks,
    encoded_chunks,
    encoded_write_request,
    read_response_entities,
    write_request,
)


def _updates(count: int) -> list[p4r.Update]:
    return [p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=p4r.TableEntry(
        table_id=7, priority=i, metadata=b"x" * (i % 200)))) for i in range(count)]


def test_encoded_write_request_is_the_request_to_the_byte() -> None:
    updates = _updates(300)   # lengths of one and two bytes
    for election, role in (((0, 1), ""), ((1 << 63, 5), "r")):
        want = write_request(3, election, role, updates, CONTINUE_ON_ERROR)
        got = encoded_write_request(3, election, role, [u.SerializeToString() for u in updates],
                                    CONTINUE_ON_ERROR)
        assert p4r.WriteRequest.FromString(got) == want


def test_encoded_chunks_cut_where_chunks_cut() -> None:
    updates = _updates(2500)
    raw = [u.SerializeToString() for u in updates]
    for size, limit in ((1000, 2 << 20), (64, 2 << 20), (1000, 20_000)):
        want = [(offset, [u.SerializeToString() for u in batch])
                for offset, batch in chunks(updates, size, limit)]
        assert list(encoded_chunks(iter(raw), size, limit)) == want
    assert list(encoded_chunks([], 10)) == []


def test_read_response_entities() -> None:
    entities = [p4r.Entity(table_entry=p4r.TableEntry(table_id=i, metadata=b"y" * (i % 300)))
                for i in range(1, 400)]
    data = p4r.ReadResponse(entities=entities).SerializeToString()
    assert read_response_entities(data) == [e.SerializeToString() for e in entities]
    assert read_response_entities(b"") == []
    # an unknown field: the parser's reading (it keeps the entities)
    assert read_response_entities(data + b"\x10\x05") == [e.SerializeToString()
                                                           for e in entities]
    with pytest.raises(DecodeError):   # cut short: the parser's error
        read_response_entities(data[:-3])
