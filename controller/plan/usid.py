"""uSID allocation and addresses: F3216 (32-bit SID block, 16-bit uSIDs), plane in every uSID.

Global uSIDs (one per switch, its uN SID `block:uSID::/48`)::

    bits 15..12  plane + 1        (1..14; so a uSID is never 0)
    bit  11      tier             (0 = T0, 1 = T1)
    bits 10..0   index in its tier and plane (0..2047)

so plane 0's T0 3 is 0x1003, plane 2's T1 5 is 0x3805, plane 7's T0 511 is 0x81ff: the plane and
the role read off the hex, and an EV → path expansion is a bit copy. The top nibble 0xf is never
global: it is the local SID space (RFC 9800's LIB), meaningful only to the node that owns it:

    0xfe00 + port   uA of a switch: shift, then forward on that port (the last hop to a NIC is
                    the destination T0's uA for the NIC's port, `block:uN(T0):uA::/64`)
    0xfd00          the NIC's own decapsulation function (End.DT6), the carrier's last uSID

At 131,072 NICs 16 bits cannot name every NIC; naming a NIC by (its T0, its T0 port) keeps the
global space to the 6,144 switches (8 planes of 768).
"""

from __future__ import annotations

import ipaddress

from controller.topology.bounds import MAX_PLANES, MAX_RADIX, MAX_SWITCH_INDEX
from controller.topology.model import Nic, Switch, Tier

MAX_INDEX = MAX_SWITCH_INDEX
MAX_PORT = MAX_RADIX - 1  # bit<9> ports: 0xfe00..0xffff
UA_BASE = 0xFE00
NIC_DECAP_USID = 0xFD00
LOCAL_MIN = 0xF000  # every uSID >= this is local

_SWITCH_MAC_OUI = 0x0253_0000_0000  # locally administered, "S"
_NIC_MAC_OUI = 0x024E_0000_0000  # locally administered, "N"


class PlanError(Exception):
    """The topology cannot be planned (out of uSID space, inconsistent wiring); names the source."""


def switch_usid(switch: Switch) -> int:
    """The switch's global uSID (see the module docstring)."""
    if not 0 <= switch.plane < MAX_PLANES:
        raise PlanError(f"switch {switch.name}: plane {switch.plane} is outside 0..{MAX_PLANES - 1}"
                        " (the uSID's plane nibble)")
    if not 0 <= switch.index <= MAX_INDEX:
        raise PlanError(f"switch {switch.name}: index {switch.index} is outside 0..{MAX_INDEX}")
    tier_bit = 1 if switch.tier == Tier.T1 else 0
    return (switch.plane + 1) << 12 | tier_bit << 11 | switch.index


def decode_usid(usid: int) -> tuple[int, Tier, int] | None:
    """(plane, tier, index) of a global uSID, None for 0 and local uSIDs."""
    if usid <= 0 or usid >= LOCAL_MIN or usid > 0xFFFF:
        return None
    return (usid >> 12) - 1, Tier.T1 if usid & 0x800 else Tier.T0, usid & MAX_INDEX


def ua_usid(port: int) -> int:
    """The local uA SID for a switch port."""
    if not 0 <= port <= MAX_PORT:
        raise PlanError(f"port {port} is outside 0..{MAX_PORT}")
    return UA_BASE + port


def is_local(usid: int) -> bool:
    return usid >= LOCAL_MIN


def parse_block(block: str) -> int:
    """The 128-bit value of a /32 SID block such as "fcbb:bbbb::/32"."""
    try:
        net = ipaddress.IPv6Network(block)
    except ValueError as e:
        raise PlanError(f"sid_block {block!r}: {e}") from None
    if net.prefixlen != 32:
        raise PlanError(f"sid_block {block!r}: F3216 needs a /32 block, not /{net.prefixlen}")
    return int(net.network_address)


def usid_prefix(block: int, *usids: int) -> tuple[int, int]:
    """`block:u1:u2...::/(32 + 16·n)` as an lpm match value."""
    value = block
    for i, u in enumerate(usids):
        value |= u << (80 - 16 * i)
    return value, 32 + 16 * len(usids)


def carrier(block: int, usids: tuple[int, ...] | list[int]) -> int:
    """A uSID carrier: the block followed by up to six uSIDs, the rest zero."""
    if len(usids) > 6:
        raise PlanError(f"a carrier holds at most 6 uSIDs, not {len(usids)}")
    return usid_prefix(block, *usids)[0]


def carrier_usids(address: int) -> list[int]:
    """The six uSID slots of an address (after the block), zeros included."""
    return [(address >> (80 - 16 * i)) & 0xFFFF for i in range(6)]


def format_address(address: int) -> str:
    return str(ipaddress.IPv6Address(address))


def format_mac(mac: int) -> str:
    return ":".join(f"{b:02x}" for b in mac.to_bytes(6, "big"))


def switch_mac(usid: int) -> int:
    """One MAC per switch, derived from its uSID (so every MAC in the plan is predictable)."""
    return _SWITCH_MAC_OUI | usid


def nic_mac(nic: Nic, plane: int) -> int:
    """The NIC port's MAC in a plane: the topology's when given, else derived (plane, index)."""
    if nic.mac:
        return nic.mac
    return _NIC_MAC_OUI | plane << 24 | (nic.index & 0xFF_FFFF)
