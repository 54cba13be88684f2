"""A keeper whose election id is raised (its controller took over elsewhere) while a connect
is under way ends up holding the new id on that device, not the one it connected with
(controller/daemon/keeper.py). Otherwise a rebooted device keeps a stream with the old id,
and the next standby, which may hold that id, is refused on it for ever."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from controller.daemon.keeper import DesiredState, DeviceKeeper
from controller.devices.session import Program
from controller.topology.model import Endpoint
from p4rt import SwitchConnection
from softswitch.runtime.server.server import P4RuntimeServer

ROOT = Path(__file__).resolve().parents[2]


def test_an_id_raised_during_a_connect_is_the_one_the_device_keeps(
        server: P4RuntimeServer) -> None:
    program = Program.compile(ROOT / "p4src" / "nic" / "mrc_nic.p4")
    address = f"127.0.0.1:{server.port}"
    connected, release = threading.Event(), threading.Event()

    def observe(session: SwitchConnection) -> None:
        # The first connect is primary with (0, 5) and reconciled; it holds here while the
        # takeover elsewhere raises the keeper's id.
        connected.set()
        release.wait(30)

    log: list[dict[str, object]] = []
    with ThreadPoolExecutor(2) as pool:
        keeper = DeviceKeeper("t1", Endpoint(address, 1, election_id=(0, 5)),
                              lambda: DesiredState(program, []), pool, log.append,
                              observe=observe)
        try:
            keeper.tick(0.0)
            assert connected.wait(30), log
            keeper.raise_election_id((0, 11))
            release.set()
            deadline = time.monotonic() + 30
            now = 0.0
            while not keeper.ready:
                assert time.monotonic() < deadline, (keeper.state, log)
                keeper.wait(1.0)
                now += 0.001
                keeper.tick(now)
            assert keeper.session is not None and keeper.session.election_id == (0, 11)
            # The old id is free again: a standby holding it stands by at once.
            standby = SwitchConnection(address, 1, (0, 5))
            try:
                assert standby.connect(timeout=10) is False
            finally:
                standby.close()
        finally:
            keeper.close()
    events = [r["event"] for r in log]
    assert events[:2] == ["device_reconnect", "device_ready"], events
