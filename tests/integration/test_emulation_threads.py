"""An emulated network's threads: its devices' P4Runtime servers share one digest sweeper and
one worker pool, and while it is open the GIL's switch interval is long enough that hundreds of
waiting threads do not convoy (emulation/network.py SWITCH_INTERVAL_S), nor wake ten times a
second each in grpc's blocking waits (GRPC_WAIT_S)."""

from __future__ import annotations

import sys
import threading

import grpc._common as grpc_common
import pytest
from emulated import scenario

from controller.devices.session import Program
from emulation.command import NIC_PROGRAM
from emulation.modes import mode
from emulation.network import GRPC_WAIT_S, SWITCH_INTERVAL_S, Network
from emulation.workloads import connections, messages
from softswitch.fabric import RPC_WORKERS


def test_a_network_shares_its_servers_threads_and_lengthens_the_switch_interval_and_waits(
        switch_program: Program) -> None:
    s = scenario()
    chosen = mode("mrc", s.profile)
    before = sys.getswitchinterval()
    assert before < SWITCH_INTERVAL_S   # CPython's default, 5 ms
    grpc_wait = grpc_common.MAXIMUM_WAIT_TIMEOUT
    assert grpc_wait < GRPC_WAIT_S      # grpc's default, 0.1 s
    sweepers = sum(t.name == "p4rt-digests" for t in threading.enumerate())
    with Network.of(s, switch_program, str(NIC_PROGRAM), chosen,
                    connections(messages(s.workloads, s.seed))) as network:
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S)
        assert grpc_common.MAXIMUM_WAIT_TIMEOUT == GRPC_WAIT_S
        servers = [node.server for node in network.fabric.switches if node.server is not None]
        assert len(servers) == len(network.fabric.switches) > RPC_WORKERS // 2
        assert len({id(server.sweeper) for server in servers}) == 1
        assert len({id(server.pool) for server in servers}) == 1
        assert sum(t.name == "p4rt-digests" for t in threading.enumerate()) == sweepers + 1
        assert servers[0].pool.threads <= RPC_WORKERS + len(network.nics)  # + their streams
    assert sys.getswitchinterval() == pytest.approx(before)
    assert grpc_wait == grpc_common.MAXIMUM_WAIT_TIMEOUT
