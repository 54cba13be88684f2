"""Where a connection's EV rotation starts: the `rotation` of its `set_connection`.

A NIC sends each packet of a connection on the next slot of its rotation (the slot a cursor
counts to, plus `rotation`). Every connection of a profile lists its EVs in one order (slot `e`
is plane `e mod planes`, its T1s in turn), and every cursor starts at 0: without an offset of
its own, the connections that start together (a collective's step, an all-to-all) send their
first packets on the same T1 of every plane, then all move to the next one, in step. That
synchronisation is what the sources' pseudo-random EV choice exists to avoid (mrc-srv6.md
§3.3: "so QPs sharing a profile do not synchronise"). A hash of the connection gives each one
its own start; the rotation itself stays a rotation, so every plane still carries an equal
share and every slot its turn once per round.
"""

from __future__ import annotations

import zlib


def rotation(ev_count: int, sender: str, peer: str, peer_qp: int) -> int:
    """The slot (0..ev_count-1) the rotation of the connection from `sender` to (`peer`,
    `peer_qp`) starts at: a hash, so a plan made twice is the same."""
    return zlib.crc32(f"rotation {sender}>{peer}:{peer_qp}".encode()) % ev_count
