"""Fixtures shared by the controller tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from softswitch.runtime.device import Device
from softswitch.runtime.server.server import P4RuntimeServer


@pytest.fixture
def server() -> Iterator[P4RuntimeServer]:
    """A softswitch P4Runtime server with no pipeline (device id 1, CPU port 255, 8 queues)."""
    srv = P4RuntimeServer(Device(1, cpu_port=255, priority_queues=8), "127.0.0.1:0")
    srv.start()
    yield srv
    srv.stop(0)
