"""P4RuntimeTest: the generic PTF base class for P4Runtime tests (any program, any target).

Test parameters (`ptf --test-params "k=v;..."`, set by ptf_tests/runner.py):
  grpcaddr         P4Runtime server address          (default "localhost:9559")
  device_id        P4Runtime device id               (default 0)
  election_id      this controller's election id     (default 1)
  p4info           P4Info file (.txtpb, .bin, .json)  (required)
  config           device config file: softswitch IR JSON or BMv2 JSON (required unless pushed)
  cpu_port         the switch's --cpu-port           (default 255)
  pipeline_pushed  True when the runner already pushed the pipeline (default False)

Each test connects as primary, pushes the pipeline (VERIFY_AND_COMMIT, so every test starts from
empty tables) unless the runner did, and talks to the switch through the `p4rt` client. Writes
made through the helpers are remembered; a test method decorated with `@autocleanup` deletes
every entity it inserted (in reverse order) and restores every default action it changed, so
tests stay independent even when the pipeline is pushed only once. P4Runtime errors are raised
as `p4rt.P4RuntimeWriteError`/`P4RuntimeRpcError`, whose text names each failed update.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import ptf
import ptf.testutils as testutils
from ptf.base_tests import BaseTest
from ptf.mask import Mask

from p4rt import (
    CloneSessionEntry,
    CounterData,
    CounterEntry,
    DigestEntry,
    DigestList,
    DirectCounterEntry,
    MulticastGroupEntry,
    P4RuntimeClientError,
    P4RuntimeWriteError,
    PacketIn,
    Schema,
    SwitchConnection,
    TableEntry,
)
from p4rt.entities import Entity

LOG = logging.getLogger("p4runtime_test")

DEFAULT_PACKET_IN_TIMEOUT = 2.0  # s; a positive check waits this long at most
DEFAULT_NEGATIVE_TIMEOUT = 0.3   # s; "nothing arrives" is checked for this long

F = TypeVar("F", bound=Callable[..., Any])


def _param(key: str, default: Any = None) -> Any:
    return testutils.test_param_get(key, default)


def _required_param(key: str) -> Any:
    value = _param(key)
    if value is None:
        raise RuntimeError(f"test parameter '{key}' is missing: run the suite with "
                         "`python -m ptf_tests.runner` or pass --test-params")
    return value


def same_key(first: Entity, second: Entity) -> bool:
    """Whether two entities name the same switch object (a delete needs only the key)."""
    if isinstance(first, TableEntry) and isinstance(second, TableEntry):
        return (first.name, first.matches, first.priority, first.is_default) == \
            (second.name, second.matches, second.priority, second.is_default)
    if isinstance(first, MulticastGroupEntry) and isinstance(second, MulticastGroupEntry):
        return first.group_id == second.group_id
    if isinstance(first, CloneSessionEntry) and isinstance(second, CloneSessionEntry):
        return first.session_id == second.session_id
    if isinstance(first, DigestEntry) and isinstance(second, DigestEntry):
        return first.info.preamble.id == second.info.preamble.id
    return first == second


def autocleanup(method: F) -> F:
    """Undo every write the test made through the helpers, even when it fails."""

    @functools.wraps(method)
    def wrapper(self: P4RuntimeTest, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        finally:
            self.undo_writes()

    return wrapper  # type: ignore[return-value]


class P4RuntimeTest(BaseTest):
    """Connection, pipeline, write/read helpers, packet-in/out and digest helpers."""

    conn: SwitchConnection
    schema: Schema

    # -- lifecycle ------------------------------------------------------------------------------
    def setUp(self) -> None:
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        if self.dataplane is not None:
            self.dataplane.flush()
        self.device_id = int(_param("device_id", 0))
        self.cpu_port = int(_param("cpu_port", 255))
        self.target = str(_param("target", "softswitch"))
        self.arch = str(_param("arch", "v1model"))  # the program's architecture (the runner's)
        self.p4info_path = Path(_required_param("p4info"))
        self._inserted: list[Entity] = []
        self._defaults: list[TableEntry] = []   # original default entries, to restore
        self.conn = SwitchConnection(str(_param("grpcaddr", "localhost:9559")), self.device_id,
                                     election_id=int(_param("election_id", 1)))
        if not self.conn.connect():
            self.conn.close()
            self.fail(f"not primary for device {self.device_id} at {self.conn.address}: another "
                      "controller holds a higher election id")
        try:   # tearDown does not run when setUp fails: close the stream here
            if _param("pipeline_pushed", False):
                self.conn.schema = Schema.load(self.p4info_path)
            else:
                self.conn.set_pipeline(self.p4info_path, Path(_required_param("config")))
        except BaseException:
            self.conn.close()
            raise
        assert self.conn.schema is not None
        self.schema = self.conn.schema

    def tearDown(self) -> None:
        self.conn.close()
        BaseTest.tearDown(self)

    # -- cases ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def case(self, name: str) -> Iterator[None]:
        """Name a table-driven case in the log and in any failure it raises."""
        logging.getLogger("ptf_tests").info("case %s", name)
        try:
            yield
        except AssertionError as error:
            raise AssertionError(f"case {name}: {error}") from None

    # -- writes ---------------------------------------------------------------------------------
    def insert(self, *entities: Entity) -> None:
        """Insert entities (in one write) and remember them for `@autocleanup`."""
        try:
            self.conn.insert(list(entities))
        except P4RuntimeWriteError as error:
            failed = {item.index for item in error.errors}
            if failed:  # the others went in and must still be cleaned up
                self._inserted.extend(e for i, e in enumerate(entities) if i not in failed)
            raise
        self._inserted.extend(entities)

    def modify(self, *entities: Entity) -> None:
        self.conn.modify(list(entities))

    def was_inserted(self, entity: Entity) -> bool:
        """Whether this test inserted (and has not deleted) the object `entity` names."""
        return any(same_key(known, entity) for known in self._inserted)

    def delete(self, *entities: Entity) -> None:
        """Delete entities; those inserted by this test are no longer cleaned up."""
        self.conn.delete(list(entities))
        for entity in entities:
            for position, known in enumerate(self._inserted):
                if same_key(known, entity):
                    del self._inserted[position]
                    break

    def undo_writes(self) -> None:
        """Delete what the test inserted (last first); restore changed default actions."""
        failures: list[str] = []
        for entity in reversed(self._inserted):
            try:
                self.conn.delete([entity])
            except P4RuntimeClientError as error:
                failures.append(f"{entity!r}: {error}")
        self._inserted.clear()
        for default in reversed(self._defaults):
            try:
                self.conn.modify([default])
            except P4RuntimeClientError as error:
                failures.append(f"{default!r}: {error}")
        self._defaults.clear()
        if failures:
            LOG.warning("autocleanup could not undo:\n  %s", "\n  ".join(failures))

    # -- table entries --------------------------------------------------------------------------
    def table_entry(self, table: str, match: Mapping[str, object] | None = None,
                    action: str | None = None, priority: int = 0,
                    **params: object) -> TableEntry:
        """A TableEntry builder: match fields and action params by (suffix) name."""
        entry = TableEntry(self.schema, table, match=match)
        if action is not None:
            entry.action(action, **params)
        return entry.with_priority(priority)

    def insert_table_entry(self, table: str, match: Mapping[str, object] | None = None,
                           action: str | None = None, priority: int = 0,
                           **params: object) -> TableEntry:
        entry = self.table_entry(table, match, action, priority, **params)
        self.insert(entry)
        return entry

    def modify_table_entry(self, table: str, match: Mapping[str, object] | None = None,
                           action: str | None = None, priority: int = 0,
                           **params: object) -> TableEntry:
        entry = self.table_entry(table, match, action, priority, **params)
        self.modify(entry)
        return entry

    def delete_table_entry(self, table: str, match: Mapping[str, object] | None = None,
                           priority: int = 0) -> None:
        self.delete(self.table_entry(table, match, priority=priority))

    def read_table_entries(self, table: str | None = None) -> list[TableEntry]:
        """Every (non-default) entry of a table, or of all tables."""
        wildcard = TableEntry(self.schema, table)
        return [entry for entry in self.conn.read(wildcard) if isinstance(entry, TableEntry)]

    def read_default_entry(self, table: str) -> TableEntry:
        entries = list(self.conn.read(TableEntry(self.schema, table).as_default()))
        if len(entries) != 1 or not isinstance(entries[0], TableEntry):
            self.fail(f"reading the default entry of {table} returned {entries!r}")
        return entries[0]

    def set_default_action(self, table: str, action: str, **params: object) -> TableEntry:
        """Change a table's default action; `@autocleanup` restores the one it replaced."""
        original = self.read_default_entry(table)
        entry = TableEntry(self.schema, table).as_default().action(action, **params)
        self.conn.modify([entry])
        if not any(known.name == original.name for known in self._defaults):
            self._defaults.append(original)
        return entry

    # -- packet replication ---------------------------------------------------------------------
    def insert_multicast_group(self, group_id: int,
                               replicas: Iterable[int | tuple[int, int]]) -> MulticastGroupEntry:
        """A multicast group of ports (instance 0) or (port, instance) pairs."""
        entry = MulticastGroupEntry(group_id, replicas)
        self.insert(entry)
        return entry

    def insert_clone_session(self, session_id: int, replicas: Iterable[int | tuple[int, int]],
                             packet_length_bytes: int = 0,
                             class_of_service: int = 0) -> CloneSessionEntry:
        entry = CloneSessionEntry(session_id, replicas, class_of_service=class_of_service,
                                  packet_length_bytes=packet_length_bytes)
        self.insert(entry)
        return entry

    # -- counters -------------------------------------------------------------------------------
    def read_counter(self, counter: str, index: int) -> CounterData:
        entries = list(self.conn.read(CounterEntry(self.schema, counter, index)))
        if len(entries) != 1 or not isinstance(entries[0], CounterEntry):
            self.fail(f"reading {counter}[{index}] returned {entries!r}")
        return entries[0].data or CounterData()

    def read_direct_counter(self, entry: TableEntry) -> CounterData:
        entries = list(self.conn.read(DirectCounterEntry(entry)))
        if len(entries) != 1 or not isinstance(entries[0], DirectCounterEntry):
            self.fail(f"reading the direct counter of {entry!r} returned {entries!r}")
        return entries[0].data or CounterData()

    def wait_for_counter(self, read: Callable[[], CounterData], packets: int,
                         timeout: float = DEFAULT_PACKET_IN_TIMEOUT) -> CounterData:
        """Poll a counter until it reaches `packets` (the data plane may still be working)."""
        deadline = time.monotonic() + timeout
        data = read()
        while data.packet_count < packets and time.monotonic() < deadline:
            time.sleep(0.02)
            data = read()
        return data

    # -- packet I/O -----------------------------------------------------------------------------
    def send_packet(self, port: int, packet: Any) -> None:
        testutils.send_packet(self, port, bytes(packet))

    def send_packet_out(self, payload: Any, **metadata: int) -> None:
        """A PacketOut; packet_out fields not given (padding...) are sent as 0."""
        values: dict[str, int] = {}
        if self.schema.has_controller_header("packet_out"):
            values = {field.name: 0 for field in self.schema.packet_metadata("packet_out")}
            for key, value in metadata.items():
                values[self.schema.packet_metadata("packet_out").get(key).name] = value
        elif metadata:
            self.fail(f"the P4Info has no packet_out header for metadata {sorted(metadata)}")
        self.conn.packet_out(bytes(payload), **values)

    def get_packet_in(self, timeout: float = DEFAULT_PACKET_IN_TIMEOUT) -> PacketIn | None:
        return self.conn.get_packet_in(timeout)

    def verify_packet_in(self, expected: Any, timeout: float = DEFAULT_PACKET_IN_TIMEOUT,
                         **metadata: int) -> PacketIn:
        """The next PacketIn carries `expected` (bytes, scapy packet or Mask) and `metadata`."""
        received = self.get_packet_in(timeout)
        if received is None:
            self.fail(f"no PacketIn within {timeout:g} s (expected one with {metadata})")
        if isinstance(expected, Mask):
            if not expected.pkt_match(received.payload):
                self.fail(f"PacketIn payload does not match the mask:\n"
                          f"got      {received.payload.hex()}\n{expected}")
        elif received.payload != bytes(expected):
            self.fail(f"PacketIn payload differs:\nexpected {bytes(expected).hex()}\n"
                      f"got      {received.payload.hex()}")
        for key, value in metadata.items():
            if received.metadata.get(key) != value:
                self.fail(f"PacketIn metadata {key} is {received.metadata.get(key)!r}, "
                          f"expected {value} (all: {received.metadata})")
        return received

    def verify_no_packet_in(self, timeout: float = DEFAULT_NEGATIVE_TIMEOUT) -> None:
        received = self.get_packet_in(timeout)
        if received is not None:
            self.fail(f"unexpected PacketIn: {received.metadata} {received.payload.hex()}")

    # -- digests --------------------------------------------------------------------------------
    def enable_digest(self, digest: str, max_timeout_ns: int = 0, max_list_size: int = 1,
                      ack_timeout_ns: int = 1_000_000_000) -> DigestEntry:
        """Insert the digest's DigestEntry so the switch starts sending its lists."""
        entry = DigestEntry(self.schema, digest, max_timeout_ns, max_list_size, ack_timeout_ns)
        self.insert(entry)
        return entry

    def get_digest(self, timeout: float = DEFAULT_PACKET_IN_TIMEOUT) -> DigestList | None:
        return self.conn.get_digest(timeout)

    def verify_digest(self, digest: str, data: list[Any],
                      timeout: float = DEFAULT_PACKET_IN_TIMEOUT, ack: bool = True) -> DigestList:
        """The next DigestList is of `digest` (any unique name suffix) and holds `data`."""
        received = self.get_digest(timeout)
        if received is None:
            self.fail(f"no DigestList within {timeout:g} s (expected {digest}: {data})")
        wanted = self.schema.digest(digest).preamble.name
        self.assertEqual(received.digest, wanted, f"DigestList of the wrong digest: {received}")
        self.assertEqual(received.data, data, f"DigestList {received.list_id} data differs")
        if ack:
            self.conn.ack_digest(received)
        return received

    def verify_no_digest(self, timeout: float = DEFAULT_NEGATIVE_TIMEOUT) -> None:
        received = self.get_digest(timeout)
        if received is not None:
            self.fail(f"unexpected DigestList: {received}")

    # -- errors ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def assert_p4runtime_error(self, code: str) -> Iterator[None]:
        """The block must fail with P4Runtime status `code` ("ALREADY_EXISTS"...).

        For a write, every failed update must carry `code`; the error text is logged so a
        test report shows what the server said.
        """
        try:
            yield
        except P4RuntimeWriteError as error:
            LOG.info("expected write error: %s", error)
            codes = [item.code for item in error.errors] or [error.code]
            if any(item != code for item in codes):
                self.fail(f"expected {code}, got: {error}")
        except P4RuntimeClientError as error:
            LOG.info("expected error: %s", error)
            if error.code != code:
                self.fail(f"expected {code}, got {error.code}: {error}")
        else:
            self.fail(f"expected the request to fail with {code}, but it succeeded")
