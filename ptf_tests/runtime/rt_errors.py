"""Writes the server must refuse, with the P4Runtime status code PI gives."""

from __future__ import annotations

from finsy.proto import p4r
from ptf.testutils import group
from runtime_base import RuntimeBasicsTest

from ptf_tests.base import autocleanup


@group("errors")
class DuplicateInsertTest(RuntimeBasicsTest):
    """Inserting an entry whose key exists fails with ALREADY_EXISTS and changes nothing."""

    @autocleanup
    def runTest(self) -> None:
        entry = self.add_route("10.20.0.0/16", 2)
        with self.assert_p4runtime_error("ALREADY_EXISTS"):
            self.insert_table_entry("ipv4_lpm", {"dst_addr": "10.20.0.0/16"}, "route",
                                    port=3, dmac="00:00:00:00:00:01")
        self.assertEqual(self.read_table_entries("ipv4_lpm"), [entry])
        with self.assert_p4runtime_error("ALREADY_EXISTS"):
            self.insert_multicast_group(1, [1])
            self.insert_multicast_group(1, [2])


@group("errors")
class MissingEntryTest(RuntimeBasicsTest):
    """Modifying or deleting an entry that does not exist fails with NOT_FOUND."""

    @autocleanup
    def runTest(self) -> None:
        with self.assert_p4runtime_error("NOT_FOUND"):
            self.delete_table_entry("ipv4_lpm", {"dst_addr": "10.21.0.0/16"})
        with self.assert_p4runtime_error("NOT_FOUND"):
            self.modify_table_entry("ipv4_lpm", {"dst_addr": "10.21.0.0/16"}, "drop")


@group("errors")
class BadFieldWidthTest(RuntimeBasicsTest):
    """Values wider than their field (sent raw: the client would refuse them) are
    INVALID_ARGUMENT."""

    def raw_insert(self, entity: p4r.Entity) -> None:
        self.conn.write([p4r.Update(type=p4r.Update.INSERT, entity=entity)])

    @autocleanup
    def runTest(self) -> None:
        entry = self.table_entry("ipv4_lpm", {"dst_addr": "10.22.0.0/16"}, "route",
                                 port=2, dmac="00:00:00:00:00:01")
        wide_match = entry.to_entity()
        wide_match.table_entry.match[0].lpm.value = b"\x01\x0a\x16\x00\x00"  # 33+ bits
        with self.assert_p4runtime_error("INVALID_ARGUMENT"):
            self.raw_insert(wide_match)

        wide_param = entry.to_entity()
        wide_param.table_entry.action.action.params[0].value = b"\x02\x00"  # port is bit<9>
        with self.assert_p4runtime_error("INVALID_ARGUMENT"):
            self.raw_insert(wide_param)

        self.assertEqual(self.read_table_entries("ipv4_lpm"), [])


@group("errors")
class UnknownActionIdTest(RuntimeBasicsTest):
    """An action id the P4Info does not define is INVALID_ARGUMENT ("Invalid P4 id", as PI's
    construct_action_data answers)."""

    @autocleanup
    def runTest(self) -> None:
        entry = self.table_entry("ipv4_lpm", {"dst_addr": "10.23.0.0/16"}, "drop").to_entity()
        entry.table_entry.action.action.action_id = 0x01FFFFFF
        with self.assert_p4runtime_error("INVALID_ARGUMENT"):
            self.conn.write([p4r.Update(type=p4r.Update.INSERT, entity=entry)])
        self.assertEqual(self.read_table_entries("ipv4_lpm"), [])
