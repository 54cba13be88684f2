"""`mrc-ctl fabric up`: a topology as an in-process fabric of softswitches, programmed by `push`.

One softswitch Device per topology switch (no program: the push installs it, as it would on
`simple_switch_grpc --no-p4`), each with its P4Runtime server on its endpoint's address, links
wired as the topology says, one host per NIC port (named `<nic>.p<plane>`) on its T0 port. The
controller then programs the switches over gRPC exactly as it programs real ones.

With a NIC program, each NIC is a device of its own instead (named as the NIC, its P4Runtime
server on a free port, device id NIC_DEVICE_ID_BASE + index): plane p on its port 2 + p, cabled
to the T0, and one host (`<nic>.host`) on its host port 1, where a host transport attaches.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from controller.devices.push import PlanLike, Progress, PushReport, push
from controller.devices.session import Program
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import HOST_PORT, plane_port
from controller.topology.model import Endpoint, Topology
from softswitch.clock import VirtualClock
from softswitch.fabric import Fabric, Host, ProgramSource

CPU_PORT = 255  # p4src/README.md
PRIORITY_QUEUES = 8  # the switch uses priorities 0-7
EPHEMERAL = "127.0.0.1:0"
NIC_DEVICE_ID_BASE = 1 << 16


def host_name(nic: str, plane: int) -> str:
    return f"{nic}.p{plane}"


def nic_host_name(nic: str) -> str:
    """The host behind a NIC device's host port."""
    return f"{nic}.host"


@dataclass
class RunningFabric:
    """A started fabric, the topology with the addresses its servers really listen on, and the
    report of the push that programmed it."""

    fabric: Fabric
    topology: Topology
    report: PushReport | None = None

    def host(self, nic: str, plane: int) -> Host:
        return self.fabric.host(host_name(nic, plane))

    def close(self) -> None:
        self.fabric.close()

    def __enter__(self) -> RunningFabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def build_fabric(topology: Topology, *, ephemeral_ports: bool = False,
                 priority_queues: int = PRIORITY_QUEUES, nic_program: ProgramSource | None = None,
                 clock: VirtualClock | Callable[[], int] | None = None,
                 link_delay_ns: int = 0) -> tuple[Fabric, Topology]:
    """The fabric (not started) and a copy of `topology` whose endpoints name the servers'
    actual addresses (and `target: bmv2`, as softswitches): with `ephemeral_ports`, or for a
    switch without an endpoint, a free port on 127.0.0.1 is taken instead of the endpoint's. `nic_program` makes every NIC a device
    running it; `clock` (µs) is the fabric's injected clock, a VirtualClock for virtual time;
    `link_delay_ns` is every cable's propagation delay (virtual time only)."""
    fabric = Fabric(clock=clock)
    switches = []
    try:
        for switch in topology.switches:
            endpoint = switch.endpoint or Endpoint(EPHEMERAL, device_id=len(switches) + 1)
            address = EPHEMERAL if ephemeral_ports else endpoint.grpc_address
            node = fabric.add_switch(switch.name, None, device_id=endpoint.device_id,
                                     cpu_port=CPU_PORT, grpc_address=address,
                                     priority_queues=priority_queues)
            actual = dataclasses.replace(endpoint, grpc_address=node.grpc_address)
            # A softswitch runs the v1model program whatever the topology's target says.
            switches.append(dataclasses.replace(switch, endpoint=actual, target="bmv2"))
        names = {switch.name for switch in topology.switches}
        for link in topology.iter_links():
            if link.a in names and link.b in names:  # NIC ends become hosts below
                fabric.link(link.a, link.a_port, link.b, link.b_port, link_delay_ns)
        for nic in topology.nics:
            if nic_program is not None:
                # Data in queue 0, SACKs and NACKs in 7 (p4src/README.md: --priority-queues 8).
                fabric.add_switch(nic.name, nic_program, device_id=NIC_DEVICE_ID_BASE + nic.index,
                                  cpu_port=CPU_PORT, grpc_address=EPHEMERAL,
                                  priority_queues=priority_queues)
                fabric.add_host(nic_host_name(nic.name), nic.name, HOST_PORT)
            for plane, (t0, port) in enumerate(nic.attachments):
                if nic_program is None:
                    fabric.add_host(host_name(nic.name, plane), t0, port)
                else:
                    fabric.link(nic.name, plane_port(plane), t0, port, link_delay_ns)
    except BaseException:
        fabric.close()
        raise
    running = dataclasses.replace(topology, switches=switches)
    return fabric, running


def fabric_up(topology: Topology, plan: PlanLike | Mapping[str, Sequence[PlannedEntry]],
              program: Program, *, ephemeral_ports: bool = False, concurrency: int = 64,
              progress: Progress | bool = False) -> RunningFabric:
    """Build and start the fabric, push the plan; the caller closes it (or uses `with`)."""
    fabric, running = build_fabric(topology, ephemeral_ports=ephemeral_ports)
    try:
        fabric.start()
        report = push(running, plan, program, concurrency=concurrency, progress=progress)
    except BaseException:
        fabric.close()
        raise
    return RunningFabric(fabric, running, report)
