"""uA (End.X with NEXT-CSID): shift-and-cross-connect, local /48 and combined uN:uA /64 forms.

uA forwards on its own port with its own MACs and never looks up route_v6: every case also
installs a route for the next uSID to another port, which must not be used.
"""

from __future__ import annotations

from ptf.testutils import group
from switch_base import (
    FABRIC_PORTS,
    LOCAL_UA,
    ROLE_NIC,
    ROLE_T0,
    ROLE_T1,
    UDT6,
    SwitchTest,
    carrier,
    routed,
    shifted,
    srv6_packet,
    usid,
)

from ptf_tests.base import autocleanup

IN_PORT = FABRIC_PORTS[0]
UA_PORT = FABRIC_PORTS[1]
ROUTE_PORT = FABRIC_PORTS[2]        # where route_v6 would send the next uSID: must stay unused
UA_SMAC = "00:00:00:00:0a:01"
UA_DMAC = "00:00:00:00:0a:02"
PACKET_KINDS = (("roce+inner", {"inner": True}), ("roce", {"inner": False}),
                ("udp+srh+inner", {"roce": False, "segments": [carrier(0x2199, 0xB199, UDT6)]}))


def cases(positions: int) -> list[tuple[int, int, str, dict[str, object]]]:
    """Every position x packet kind on plane 1, and every position on the other planes."""
    out = [(1, position, kind, options) for position in range(positions)
           for kind, options in PACKET_KINDS]
    out += [(plane, position, *PACKET_KINDS[0]) for plane in (0, 2, 3)
            for position in range(positions)]
    return out


def tail(plane: int, count: int) -> list[int]:
    """`count` uSIDs following the uA: T1, T0, T1, T0, NIC (then cut)."""
    roles = (ROLE_T1, ROLE_T0, ROLE_T1, ROLE_T0, ROLE_NIC)
    return [usid(role, plane, 0x20 + index) for index, role in enumerate(roles)][:count]


@group("srv6")
@group("ua")
class UaLocalTest(SwitchTest):
    """block:uA::/48 → shift by 16, out of the uA's port; uA at positions 0-4, every plane."""

    @autocleanup
    def runTest(self) -> None:
        self.set_default_roles()
        self.add_block_drop()
        for plane in (0, 1, 2, 3):
            ua = LOCAL_UA + plane          # one local uA per plane
            self.add_usid_ua(ua, UA_PORT, smac=UA_SMAC, dmac=UA_DMAC)
            for next_usid in tail(plane, 1):
                self.add_usid_route(next_usid, ROUTE_PORT)
        for plane, position, kind, options in cases(5):
            # The uA is followed by 5 - position uSIDs.
            with self.case(f"plane{plane}/pos{position}/{kind}"):
                packet = srv6_packet(carrier(LOCAL_UA + plane, *tail(plane, 5 - position)),
                                     psn=position, **options)  # type: ignore[arg-type]
                expected = routed(shifted(packet), smac=UA_SMAC, dmac=UA_DMAC)
                self.expect(IN_PORT, packet, expected, UA_PORT)


@group("srv6")
@group("ua")
class UaCombinedTest(SwitchTest):
    """block:uN:uA::/64 → shift by 32 (both consumed), out of the uA's port; positions 0-3."""

    @autocleanup
    def runTest(self) -> None:
        self.set_default_roles()
        self.add_block_drop()
        for plane in (0, 1, 2, 3):
            own = usid(ROLE_T0, plane, 0x01)
            ua = LOCAL_UA + plane
            self.add_usid_ua_combined(own, ua, UA_PORT, smac=UA_SMAC, dmac=UA_DMAC)
            self.add_usid_un(own)           # the /64 is longer: it wins over the uN /48
            self.add_usid_route(tail(plane, 1)[0], ROUTE_PORT)
            with self.case(f"plane{plane}/uN alone still shifts by 16 and routes"):
                packet = srv6_packet(carrier(own, *tail(plane, 3)))
                self.expect(IN_PORT, packet, routed(shifted(packet)), ROUTE_PORT)
        for plane, position, kind, options in cases(4):
            # own, uA, then 4 - position more uSIDs.
            own = usid(ROLE_T0, plane, 0x01)
            with self.case(f"plane{plane}/pos{position}/{kind}"):
                packet = srv6_packet(carrier(own, LOCAL_UA + plane, *tail(plane, 4 - position)),
                                     psn=position, **options)  # type: ignore[arg-type]
                expected = routed(shifted(packet, 32), smac=UA_SMAC, dmac=UA_DMAC)
                self.expect(IN_PORT, packet, expected, UA_PORT)
