"""The largest fabric the controller can address, enforced when a topology is generated or read
(so a hostile or mistyped size is refused at once, before any work in proportion to it).

The bounds are the data plane's, not a choice: a port is `bit<9>` in the switch and NIC programs
(and a switch's uA local SID is 0xfe00 + port), so a switch has at most 512 ports; a global uSID
holds the plane + 1 in its top nibble (0xf is the local SID space) and a switch's index in its
tier in 11 bits (controller/plan/usid.py). Raising one means widening those fields in p4src/ and
the uSID layout together, then these constants.

At the bounds a two-tier Clos has 512²/2 = 131,072 NICs and 14 x 768 = 10,752 switches.
"""

from __future__ import annotations

MAX_PLANES = 14        # uSID bits 15..12 hold plane + 1; 0xf is local
MAX_RADIX = 512        # bit<9> ports: 0..511
MAX_SWITCH_INDEX = 0x7FF   # uSID bits 10..0: a switch's index in its tier and plane
