"""A controller that closes its stream and reconnects at once with the same election id is
primary again — the server must not refuse the id of a stream whose client already left, even
before it has seen that call end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from p4rt import SwitchConnection
from softswitch.runtime.device import Device
from softswitch.runtime.server.server import P4RuntimeServer


@pytest.fixture
def server() -> Iterator[P4RuntimeServer]:
    device = Device(device_id=1)
    device.start()
    srv = P4RuntimeServer(device, "127.0.0.1:0")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop(0)
        device.stop()


def test_reconnect_with_the_same_election_id_at_once(server: P4RuntimeServer) -> None:
    address = f"127.0.0.1:{server.port}"
    for _ in range(25):
        connection = SwitchConnection(address, device_id=1, election_id=(0, 7))
        assert connection.connect(timeout=5) is True
        connection.close()


def test_a_live_stream_keeps_its_election_id(server: P4RuntimeServer) -> None:
    address = f"127.0.0.1:{server.port}"
    with SwitchConnection(address, device_id=1, election_id=(0, 7)) as first:
        assert first.is_primary
        second = SwitchConnection(address, device_id=1, election_id=(0, 7))
        try:
            with pytest.raises(Exception, match=r"[Ee]lection id already exists"):
                second.connect(timeout=5)
        finally:
            second.close()
