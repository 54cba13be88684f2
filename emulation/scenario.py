"""Emulation scenarios: what `mrc-ctl emulate SCENARIO.yaml` runs, read from YAML.

The schema is documented field by field in scenarios/README.md. Every error names
FILE:LINE:COL and the field (controller/topology/yaml_nodes.py), and the scenario is checked
against its topology (NICs, switches and cables it names exist) before anything runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from controller.plan.nic_plan import EvProfile, PlanError
from controller.topology import yaml_io
from controller.topology.errors import TopologyError, YamlFileError
from controller.topology.generate import generate
from controller.topology.model import QosConfig, Tier, Topology
from controller.topology.yaml_io import _QOS_LIMITS as QOS_LIMITS  # the topology's own bounds
from controller.topology.yaml_nodes import NodeReader, compose, read_text
from emulation.path_rtt import longest_path_rtt_us
from emulation.scenario_warnings import warnings as scenario_warnings
from mrc_transport.config import NIC_PSN_WINDOW
from mrc_transport.nscc import ALGORITHMS, NsccConfig, scaled_reference_bdp

# Load balancing, all on the same P4 programs (emulation/modes.py says how each is configured).
MODES = ("ecmp", "spray", "mrc", "mrc_no_controller")
WORKLOADS = ("ring_allreduce", "all_to_all", "permutation", "incast", "flow")
FAILURES = ("link_down", "link_up", "switch_reboot", "flap", "loss", "nic_port_down",
            "blackhole", "ev_loss")
DIRECTIONS = ("both", "out", "in")   # a loss: both ways, what the named end sends, receives
MAIN_FLOW = "main"       # the first workload's messages (the summary's completion times)
VICTIM_FLOW = "victim"   # an incast's victim


# 16 EVs over the planes, 2 backups per plane, at least 4 in service (the demo's).
DEFAULT_PROFILE = EvProfile(ev_count=16, backups=2, ev_min_active=4)


class ScenarioError(YamlFileError):
    """A bad scenario file, or a scenario that does not fit its topology."""


@dataclass(frozen=True)
class Links:
    """Every cable's line rate and one-way propagation delay (NIC-T0 and T0-T1 alike), and
    how many packets each egress queue of a port holds before it drops (a switch's buffer:
    trimming starts far below it, at the topology's `qos.trim_threshold`)."""

    rate_gbps: float = 10.0
    delay_ns: int = 500
    queue_packets: int = 512


@dataclass(frozen=True)
class CableOverride:
    """One cable's own line rate, propagation delay and egress queue depth (None: as
    `links`), both ways; named by one of its ends, SWITCH:PORT, or NIC:PLANE for a NIC's
    cable to its T0."""

    link: tuple[str, int]
    rate_gbps: float | None = None
    delay_ns: int | None = None
    queue_packets: int | None = None


@dataclass(frozen=True)
class Workload:
    """What the NICs send. `nics` () = every NIC of the topology, in topology order.

    ring_allreduce: each rank reduces a `bytes` buffer with its ring neighbours: 2(N-1) steps,
    each a write of bytes/N to the next rank once the previous step's chunk has arrived.
    all_to_all: every rank writes `bytes` to every other rank at once. permutation: every rank
    writes `bytes` to one other (a seeded derangement). incast: `senders` write `bytes` each
    to `receiver`, while `victim` (sender, receiver: a NIC under the receiver's T0) writes
    `victim_bytes`. flow: `src` writes `bytes` to `dst`, on one path (plane, T1 index) in
    every mode when `path` is given. `iterations` repeats the whole pattern, each after the
    last finished. The first messages are posted at `start_us`; `flow` labels the messages
    in the report (`label`: "main" for the first workload's)."""

    kind: str
    bytes: int
    nics: tuple[str, ...] = ()
    iterations: int = 1
    senders: tuple[str, ...] = ()
    receiver: str = ""
    victim: tuple[str, str] | None = None
    victim_bytes: int = 0
    src: str = ""
    dst: str = ""
    path: tuple[int, int] | None = None
    start_us: int = 0
    label: str = MAIN_FLOW


@dataclass(frozen=True)
class Failure:
    """One scheduled failure (virtual µs from the start). Which fields matter by kind:
    link_down / link_up: `link`; switch_reboot: `switch`, `down_us`; flap: `link`, `count`,
    `down_us`, `up_us`; loss: `link`, `percent`, `until_us`, `direction`; nic_port_down:
    `nic`, `plane`, `until_us` (0: for good); blackhole: `switch` or `link`, `until_us`;
    ev_loss: `nic`, `ev`, `percent`, `until_us`. A `link` is SWITCH:PORT, or NIC:PLANE for
    a NIC's cable (every kind with a `link`)."""

    at_us: int
    kind: str
    link: tuple[str, int] | None = None
    switch: str = ""
    nic: str = ""
    plane: int = 0
    down_us: int = 200
    up_us: int = 200
    count: int = 1
    percent: float = 0.0
    until_us: int = 0
    direction: str = "both"
    ev: int = 0

    def describe(self) -> str:
        target = (f"{self.link[0]}:{self.link[1]}" if self.link else self.switch
                  or (f"{self.nic} EV {self.ev}" if self.kind == "ev_loss"
                      else f"{self.nic} plane {self.plane}"))
        way = "" if self.direction == "both" else f" {self.direction}"
        extra = {"switch_reboot": f" for {self.down_us} µs",
                 "flap": f" x{self.count} ({self.down_us} µs down, {self.up_us} µs up)",
                 "loss": f" {self.percent:g}%{way}",
                 "ev_loss": f" {self.percent:g}%"}.get(self.kind, "")
        until = f" until {self.until_us} µs" if self.kind == "blackhole" and self.until_us else ""
        return f"{self.kind} {target}{extra} at {self.at_us} µs{until}"


@dataclass(frozen=True)
class ControllerTiming:
    """The repair loop in virtual time (controller/repair): how often it runs, the window in
    which EV reports from different NICs are correlated, how long reports naming a path just
    rewritten are ignored, the flap hold-down, and the link probes of a cable taken out
    (controller/daemon/probes.py): one every `probe_interval_us`, `probe_successes` back in a
    row to prove it healthy; and the confirmation of a suspect (controller/repair/confirm.py):
    `confirm_probes` lost in a row, each waited for `probe_timeout_us` (several fabric RTTs: a
    probe queued behind a burst is late, not lost); and idle monitoring
    (controller/daemon/idle_probes.py): every T0-T1 cable idle over the last interval probed
    once per `idle_probe_interval_us` (0: never), so that a failure no traffic crosses is found
    too (Clustermapper's ~1 ms, scaled as the emulator's RTOs are)."""

    period_us: int = 20
    window_us: int = 10_000
    settle_us: int = 5_000
    hold_us: int = 1_000
    probe_interval_us: int = 50
    probe_successes: int = 3
    confirm_probes: int = 3
    probe_timeout_us: int = 60
    idle_probe_interval_us: int = 100


@dataclass(frozen=True)
class TransportTiming:
    """The host transport's knobs (mrc_transport/config.py), in virtual µs."""

    window: int = 64
    rto_us: int = 500
    reorder_us: int = 150
    rto_min_us: int = 0     # 0: rto_us
    rto_max_us: int = 0     # 0: give_up_us
    give_up_us: int = 0     # 0: 20 x rto_us
    max_retries: int = 64
    retry_linear_cnt: int = 3   # timeouts in a row at the plain RTO before it doubles (0..7)
    probe_interval_us: int = 200   # the pace of a connection's probes of one ASSUMED_BAD EV
    # Congestion control, named as the OCP MRC API names it: "uet-1.0-nscc" (its default, and
    # ours: without a window to cut, a 15:1 incast's trims are all resent at once and no
    # message arrives) or "fixed" (the PSN window alone); NSCC's knobs (0: the spec's default,
    # from the fabric: base_rtt_us the unloaded RTT of an MTU packet over the longest path,
    # target_delay_us 0.75 of it, max_cwnd 1.5 x BDP of the NIC's aggregate line rate);
    # reference_bdp (bytes: the BDP at which NSCC's gains are the spec's table's; 0: the
    # spec's 150 kB scaled to this scenario's MTU, NsccConfig says why).
    cc_algorithm: str = "uet-1.0-nscc"
    base_rtt_us: float = 0.0
    target_delay_us: float = 0.0
    max_cwnd: int = 0
    reference_bdp: float = 0.0

    def nscc(self, path_rtt_us: float, mtu: int, linkspeed_gbps: float) -> NsccConfig | None:
        """A connection's NSCC configuration (None: "fixed"). `path_rtt_us`: the unloaded
        round trip of an MTU packet over the fabric's longest path (the default base RTT:
        Scenario.longest_path_rtt_us); `linkspeed_gbps`: the line rate of the NIC ports the
        connection sends on (the spec's max window is 1.5 x that line rate x base RTT: a slow
        cable inside the fabric is a path's matter, not the NIC's)."""
        if self.cc_algorithm != "uet-1.0-nscc":
            return None
        # A scenario is a scale model of MRC's fabric (1 KiB packets for 4 KiB ones): NSCC's
        # gains keep the spec's share of the BDP per round trip only with the reference BDP in
        # packets (NsccConfig.reference_bdp); at a 4 KiB MTU that is the spec's 150 kB.
        return NsccConfig(base_rtt_us=self.base_rtt_us or path_rtt_us,
                          linkspeed_gbps=linkspeed_gbps, mtu=mtu,
                          target_delay_us=self.target_delay_us or None,
                          max_cwnd=self.max_cwnd or None,
                          reference_bdp=self.reference_bdp or scaled_reference_bdp(mtu))


CC_KEYS = ("cc_algorithm", "base_rtt_us", "target_delay_us", "max_cwnd", "reference_bdp")


@dataclass(frozen=True)
class Scenario:
    """A checked scenario. `workloads` run together (the first is `workload`); `cables`
    override `links` cable by cable; the topology carries the scenario's `qos` overrides;
    `warnings` name what will not happen as written (FILE:LINE:COL: warning: ...)."""

    name: str
    topology: Topology
    workloads: tuple[Workload, ...]
    description: str = ""
    source: str = "<string>"
    links: Links = Links()
    cables: tuple[CableOverride, ...] = ()
    mtu: int = 1024
    seed: int = 1
    duration_us: int = 20_000
    bin_us: int = 50
    modes: tuple[str, ...] = MODES
    failures: tuple[Failure, ...] = ()
    profile: EvProfile = DEFAULT_PROFILE
    controller: ControllerTiming = ControllerTiming()
    transport: TransportTiming = TransportTiming()
    ecmp_convergence_us: int = 1_000   # ecmp: routing reconvergence after a cable fails
    extra: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def longest_path_rtt_us(self) -> float:
        """The unloaded round trip of an MTU packet and its SACK over the fabric's longest
        path, every cable at its own rate and delay (emulation/path_rtt.py)."""
        return longest_path_rtt_us(self.topology, self.mtu, self.cable_rate_delay)

    def cable_rate_delay(self, a: tuple[str, int], b: tuple[str, int]) -> tuple[float, float]:
        """The rate (Gb/s) and delay (ns) of the cable between ends `a` and `b` (a NIC's
        end: NIC, plane); an override names either end."""
        rate, delay = self.links.rate_gbps, float(self.links.delay_ns)
        for c in self.cables:
            if c.link in (a, b):
                rate = c.rate_gbps if c.rate_gbps is not None else rate
                delay = c.delay_ns if c.delay_ns is not None else delay
        return rate, delay

    def nic_line_rate_gbps(self, nic: str, planes: int) -> float:
        """A NIC's line rate: its cables to its T0s (one per plane) together."""
        return sum(self.nic_port_rate_gbps(nic, plane) for plane in range(planes))

    def nic_port_rate_gbps(self, nic: str, plane: int) -> float:
        """The line rate of a NIC's cable to its T0 in `plane` (an override names it
        NIC:PLANE)."""
        return self.cable_rate_delay((nic, plane), (nic, plane))[0]

    @property
    def workload(self) -> Workload:
        """The first (or only) workload: its messages are the "main" flow."""
        return self.workloads[0]


def load(path: str | Path) -> Scenario:
    """Read and check a scenario file; ScenarioError names FILE:LINE:COL and the field."""
    return loads(read_text(path, ScenarioError, "scenario"), str(path),
                 base=Path(path).resolve().parent)


def loads(text: str, source: str = "<string>", base: Path | None = None) -> Scenario:
    """`base`: where a relative topology path is taken from (default: the working folder)."""
    root = compose(text, source, ScenarioError, "scenario")
    return _Reader(source, base or Path.cwd()).scenario(root)


TOP_KEYS = ("name", "description", "topology", "qos", "links", "cables", "mtu", "seed",
            "duration_us", "bin_us", "modes", "workload", "failures", "profile", "controller",
            "transport", "ecmp")
# Workload keys: every kind's, and each kind's own.
WORKLOAD_COMMON = ("kind", "bytes", "iterations", "start_us", "name")
WORKLOAD_OWN = {"ring_allreduce": ("nics",), "all_to_all": ("nics",), "permutation": ("nics",),
                "incast": ("senders", "receiver", "victim", "victim_bytes"),
                "flow": ("src", "dst", "path")}
# Failure kinds: (required fields, optional fields) besides at_us and kind.
FAILURE_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "link_down": (("link",), ()),
    "link_up": (("link",), ()),
    "flap": (("link",), ("count", "down_us", "up_us")),
    "loss": (("link", "percent"), ("until_us", "direction")),
    "switch_reboot": (("switch",), ("down_us",)),
    "nic_port_down": (("nic",), ("plane", "until_us")),
    "blackhole": ((), ("switch", "link", "until_us")),   # a switch or a link
    "ev_loss": (("nic", "ev", "percent"), ("until_us",)),
}
FAILURE_KEYS = ("link", "switch", "nic", "plane", "ev", "down_us", "up_us", "count", "percent",
                "direction", "until_us")
# Their `link` may be a NIC's cable, NIC:PLANE (a cut or flap of it is the NIC's port going
# down and up: its PHY tells the NIC, as nic_port_down).
NIC_CABLE_KINDS = ("loss", "blackhole", "link_down", "link_up", "flap")
End = tuple[str, int]


class _Cables:
    """The topology's cables by their ends: switch-to-switch, and each NIC's per plane."""

    def __init__(self, topology: Topology) -> None:
        switches = _switch_names(topology)
        self.fabric: dict[End, End] = {}   # a switch end -> the other end
        self.nic: dict[End, End] = {}      # (NIC, plane) -> (T0, port)
        self.t0: dict[End, End] = {}       # (T0, port) facing a NIC -> (NIC, plane)
        for link in topology.iter_links():
            a, b = (link.a, link.a_port), (link.b, link.b_port)
            if link.a in switches and link.b in switches:
                self.fabric[a], self.fabric[b] = b, a
            else:
                nic, t0 = (b, a) if link.a in switches else (a, b)
                self.nic[nic], self.t0[t0] = t0, nic

    def key(self, end: End) -> tuple[End, End]:
        """The same for both ends of a cable."""
        other = self.fabric.get(end) or self.nic[end]
        return (end, other) if end < other else (other, end)


class _Reader(NodeReader):
    error = ScenarioError

    def __init__(self, source: str, base: Path) -> None:
        super().__init__(source)
        self.base = base
        self.notes: list[str] = []   # the warnings, in file order

    def place(self, node: Node, field: str) -> str:
        """`FILE:LINE:COL: warning: FIELD` for a warning about `node`."""
        mark = node.start_mark
        return f"{self.source}:{mark.line + 1}:{mark.column + 1}: warning: {field}"

    def warn(self, node: Node, field: str, message: str) -> None:
        self.notes.append(f"{self.place(node, field)}: {message}")

    def scenario(self, root: Node) -> Scenario:
        self._root = root
        top = self.mapping(root, "", TOP_KEYS, ("name", "topology", "workload"))
        get = top.get
        topology = self.qos(get("qos"), self.topology(top["topology"][1]))
        self._cables = _Cables(topology)
        links = self.links(get("links"))
        cables = self.cables(get("cables"), links)
        self.qos_warnings(topology, links, cables, get("qos") or get("links"))
        modes = MODES
        if "modes" in top:
            node = top["modes"][1]
            modes = tuple(self.choice(n, f"modes[{k}]", MODES)
                          for k, n in enumerate(self.seq(node, "modes")))
            if not modes or len(set(modes)) != len(modes):
                raise self.fail(node, "modes", "list each mode once, at least one")
        duration_us = (self.int_(top["duration_us"][1], "duration_us", 1, 10**9)
                       if "duration_us" in top else 20_000)
        profile = self.profile(get("profile"), topology)
        workloads = self.workloads(top["workload"][1], topology, duration_us)
        failures = (self.failures(top["failures"][1], topology, profile) if "failures" in top
                    else [])
        self.notes += scenario_warnings(failures, duration_us, self._cables.key)
        return Scenario(
            name=self.name(top["name"][1], "name"),
            description=self.str_(top["description"][1], "description") if "description" in top
            else "",
            source=self.source,
            topology=topology,
            workloads=workloads,
            links=links,
            cables=cables,
            mtu=self.int_(top["mtu"][1], "mtu", 64, 8192) if "mtu" in top else 1024,
            seed=self.int_(top["seed"][1], "seed", 0, (1 << 32) - 1) if "seed" in top else 1,
            duration_us=duration_us,
            bin_us=self.int_(top["bin_us"][1], "bin_us", 1, 10**6) if "bin_us" in top else 50,
            modes=modes,
            failures=tuple(f for f, _, _ in failures),
            profile=profile,
            controller=self.controller(get("controller")),
            transport=self.transport(get("transport")),
            ecmp_convergence_us=self.ecmp(get("ecmp")),
            warnings=tuple(self.notes),
        )

    # -- the fabric ------------------------------------------------------------------------

    def topology(self, node: Node) -> Topology:
        """A topology file (relative to the scenario), or `{generate: {planes, radix, nics}}`."""
        if isinstance(node, ScalarNode):
            path = self.base / self.str_(node, "topology")
            try:
                return yaml_io.load(path)
            except TopologyError as error:
                raise self.fail(node, "topology", f"the topology does not load: {error}") from None
        got = self.mapping(node, "topology", ("generate",), ("generate",))
        args = self.mapping(got["generate"][1], "topology.generate", ("planes", "radix", "nics"),
                            ("planes", "radix"))
        planes = self.int_(args["planes"][1], "topology.generate.planes", 1, 8)
        radix = self.int_(args["radix"][1], "topology.generate.radix", 2, 512)
        nics = (self.int_(args["nics"][1], "topology.generate.nics", 1)
                if "nics" in args else None)
        try:
            return generate(planes, radix, nics, wiring="explicit")
        except TopologyError as error:
            raise self.fail(node, "topology.generate", error.message) from None

    def qos(self, item: tuple[Node, Node] | None, topology: Topology) -> Topology:
        """The topology with the scenario's QoS values (thresholds, DSCPs) in place of its own:
        the switches are planned with them."""
        if item is None:
            return topology
        got = self.mapping(item[1], "qos", tuple(f.name for f in dataclasses.fields(QosConfig)))
        values = {key: self.int_(value, f"qos.{key}", *QOS_LIMITS.get(key, (0, 63)))
                  for key, (_, value) in got.items()}
        return dataclasses.replace(topology, qos=dataclasses.replace(topology.qos, **values))

    def links(self, item: tuple[Node, Node] | None) -> Links:
        if item is None:
            return Links()
        got = self.mapping(item[1], "links", ("rate_gbps", "delay_ns", "queue_packets"))
        rate = (self.number(got["rate_gbps"][1], "links.rate_gbps", 0.0, 1000.0, above=True)
                if "rate_gbps" in got else Links.rate_gbps)
        delay = (self.int_(got["delay_ns"][1], "links.delay_ns", 0, 10**9)
                 if "delay_ns" in got else Links.delay_ns)
        depth = (self.int_(got["queue_packets"][1], "links.queue_packets", 1, 1 << 20)
                 if "queue_packets" in got else Links.queue_packets)
        return Links(rate, delay, depth)

    def cable(self, node: Node, field: str, nic_cables: bool) -> End:
        """A cable named by one end: SWITCH:PORT of a switch-to-switch cable, or (when
        `nic_cables`) NIC:PLANE."""
        end = self.port_ref(node, field)
        if end in self._cables.fabric or (nic_cables and end in self._cables.nic):
            return end
        name = f"{end[0]}:{end[1]}"
        what = "a switch-to-switch cable" + (" or NIC:PLANE" if nic_cables else "")
        hint = ""
        if end in self._cables.t0:
            nic, plane = self._cables.t0[end]
            hint = (f" (it is {nic}'s cable in plane {plane}: name it {nic}:{plane})"
                    if nic_cables else
                    f" (it is {nic}'s cable in plane {plane}: see nic_port_down)")
        elif not nic_cables and end in self._cables.nic:
            hint = " (a NIC's cable: see nic_port_down)"
        raise self.fail(node, field, f"{name} is not an end of {what} of the topology{hint}")

    def cables(self, item: tuple[Node, Node] | None, links: Links
               ) -> tuple[CableOverride, ...]:
        if item is None:
            return ()
        out = []
        seen: dict[tuple[End, End], int] = {}
        for k, node in enumerate(self.seq(item[1], "cables")):
            where = f"cables[{k}]"
            got = self.mapping(node, where, ("link", "rate_gbps", "delay_ns", "queue_packets"),
                               ("link",))
            link_node = got["link"][1]
            end = self.cable(link_node, f"{where}.link", True)
            key = self._cables.key(end)
            if key in seen:
                raise self.fail(link_node, f"{where}.link", "this cable is already given "
                                f"(line {seen[key]}); each cable once")
            seen[key] = link_node.start_mark.line + 1
            if len(got) == 1:
                raise self.fail(node, where, "give its rate_gbps, delay_ns or queue_packets")
            override = CableOverride(
                end,
                self.number(got["rate_gbps"][1], f"{where}.rate_gbps", 0.0, 1000.0, above=True)
                if "rate_gbps" in got else None,
                self.int_(got["delay_ns"][1], f"{where}.delay_ns", 0, 10**9)
                if "delay_ns" in got else None,
                self.int_(got["queue_packets"][1], f"{where}.queue_packets", 1, 1 << 20)
                if "queue_packets" in got else None)
            if all(getattr(override, key) in (None, getattr(links, key))
                   for key in ("rate_gbps", "delay_ns", "queue_packets")):
                self.warn(node, where, "the same as `links`: nothing changes")
            out.append(override)
        return tuple(out)

    def qos_warnings(self, topology: Topology, links: Links,
                     cables: tuple[CableOverride, ...], item: tuple[Node, Node] | None) -> None:
        """Thresholds a queue never reaches: it drops before it trims (or marks)."""
        node = item[1] if item is not None else self._root
        depths = {links.queue_packets} | {c.queue_packets for c in cables if c.queue_packets}
        qos = topology.qos
        for key, does in (("trim_threshold", "trims"), ("ecn_threshold", "marks ECN")):
            value = getattr(qos, key)
            if value >= min(depths):
                self.warn(node, f"qos.{key}", f"{value} is not below the queue depth "
                          f"({min(depths)} packets): a full queue drops before it {does}")

    def nic(self, node: Node, field: str, topology: Topology) -> str:
        name = self.name(node, field)
        if name not in {n.name for n in topology.nics}:
            raise self.fail(node, field, f"no NIC '{name}' in topology {topology.name}")
        return name

    def nic_list(self, node: Node, field: str, topology: Topology) -> tuple[str, ...]:
        names = tuple(self.nic(n, f"{field}[{k}]", topology)
                      for k, n in enumerate(self.seq(node, field)))
        if len(set(names)) != len(names):
            raise self.fail(node, field, "a NIC is listed twice")
        return names

    # -- workloads -------------------------------------------------------------------------

    def workloads(self, node: Node, topology: Topology,
                  duration_us: int) -> tuple[Workload, ...]:
        """One workload (a mapping) or several run together (a list of them)."""
        if isinstance(node, SequenceNode):
            items = [(n, f"workload[{k}]") for k, n in enumerate(self.seq(node, "workload"))]
            if not items:
                raise self.fail(node, "workload", "list at least one workload")
        else:
            items = [(node, "workload")]
        out: list[Workload] = []
        labels: dict[str, int] = {}
        pinned: dict[frozenset[str], tuple[int, int]] = {}
        for position, (item, where) in enumerate(items):
            w = self.workload(item, where, topology, position)
            line = item.start_mark.line + 1
            if w.label in labels:
                raise self.fail(item, f"{where}.name", f"flow '{w.label}' is already the "
                                f"flow of the workload on line {labels[w.label]}")
            labels[w.label] = line
            if w.start_us >= duration_us:
                self.warn(item, f"{where}.start_us", f"{w.start_us} is not before duration_us "
                          f"{duration_us}: this workload never starts")
            if w.path is not None:
                pair = frozenset((w.src, w.dst))
                if pinned.setdefault(pair, w.path) != w.path:
                    raise self.fail(item, f"{where}.path", f"{w.src} and {w.dst} share one "
                                    "connection: it is already pinned to another path")
            out.append(w)
        return tuple(out)

    def workload(self, node: Node, where: str, topology: Topology, position: int) -> Workload:
        every = tuple(dict.fromkeys(k for keys in WORKLOAD_OWN.values() for k in keys))
        got = self.mapping(node, where, (*WORKLOAD_COMMON, *every), ("kind", "bytes"))
        kind = self.choice(got["kind"][1], f"{where}.kind", WORKLOADS)
        for key, (key_node, _) in got.items():
            if key in WORKLOAD_COMMON or key in WORKLOAD_OWN[kind]:
                continue
            owner = next(k for k, keys in WORKLOAD_OWN.items() if key in keys)
            if key == "nics":
                message = ("an incast names senders and a receiver, not nics"
                           if kind == "incast" else "a flow names src and dst, not nics")
            else:
                message = f"only {'an' if owner[0] in 'aeiou' else 'a'} {owner} has '{key}'"
            raise self.fail(key_node, f"{where}.{key}", message)
        common = {
            "kind": kind,
            "bytes": self.int_(got["bytes"][1], f"{where}.bytes", 1, 1 << 30),
            "iterations": (self.int_(got["iterations"][1], f"{where}.iterations", 1, 1000)
                           if "iterations" in got else 1),
            "start_us": (self.int_(got["start_us"][1], f"{where}.start_us", 0, 10**9)
                         if "start_us" in got else 0),
            "label": self.label(got.get("name"), where, kind, position),
        }
        if kind == "incast":
            return self.incast(node, where, got, topology, common)
        if kind == "flow":
            return self.flow(node, where, got, topology, common)
        nics = (self.nic_list(got["nics"][1], f"{where}.nics", topology) if "nics" in got
                else tuple(n.name for n in topology.nics))
        if len(nics) < 2:
            raise self.fail(got.get("nics", (node, node))[1], f"{where}.nics",
                            f"a {kind} needs at least two NICs")
        if kind == "ring_allreduce" and common["bytes"] < len(nics):
            raise self.fail(got["bytes"][1], f"{where}.bytes",
                            f"a ring of {len(nics)} needs at least {len(nics)} bytes")
        return Workload(nics=nics, **common)  # type: ignore[arg-type]

    def label(self, item: tuple[Node, Node] | None, where: str, kind: str,
              position: int) -> str:
        """The workload's flow label: "main" for the first, `name` or KIND+position after."""
        default = MAIN_FLOW if position == 0 else f"{kind}{position}"
        if item is None:
            return default
        name = self.name(item[1], f"{where}.name")
        if position == 0 and name != MAIN_FLOW:
            raise self.fail(item[1], f"{where}.name", f"the first workload's flow is "
                            f"'{MAIN_FLOW}' (the summary's completion times); name the others")
        if name == VICTIM_FLOW or (position and name == MAIN_FLOW):
            raise self.fail(item[1], f"{where}.name", f"'{name}' is the flow of "
                            + ("an incast's victim" if name == VICTIM_FLOW
                               else "the first workload"))
        return name

    def require(self, node: Node, where: str, got: dict[str, tuple[Node, Node]],
                what: str, keys: tuple[str, ...]) -> None:
        """Every one of `keys` is in `got` (the mapping at `node`), else "WHAT needs 'KEY'"."""
        for key in keys:
            if key not in got:
                raise self.fail(node, where, f"{what} needs '{key}'")

    def incast(self, node: Node, where: str, got: dict[str, tuple[Node, Node]],
               topology: Topology, common: dict[str, object]) -> Workload:
        self.require(node, where, got, "an incast", ("senders", "receiver"))
        senders = self.nic_list(got["senders"][1], f"{where}.senders", topology)
        receiver = self.nic(got["receiver"][1], f"{where}.receiver", topology)
        if receiver in senders or not senders:
            raise self.fail(got["senders"][1], f"{where}.senders",
                            "senders: at least one, and not the receiver")
        victim = None
        if "victim" in got:
            pair = self.seq(got["victim"][1], f"{where}.victim")
            if len(pair) != 2:
                raise self.fail(got["victim"][1], f"{where}.victim",
                                "expected [SENDER, RECEIVER]")
            victim = (self.nic(pair[0], f"{where}.victim[0]", topology),
                      self.nic(pair[1], f"{where}.victim[1]", topology))
            busy = {*senders, receiver}
            if victim[0] in busy or victim[1] in busy or victim[0] == victim[1]:
                raise self.fail(got["victim"][1], f"{where}.victim",
                                "the victim's NICs must be two others")
            if not _same_rack(topology, victim[1], receiver):
                raise self.fail(pair[1], f"{where}.victim[1]",
                                f"the victim's receiver must sit under {receiver}'s T0s")
        victim_bytes = (self.int_(got["victim_bytes"][1], f"{where}.victim_bytes", 1, 1 << 30)
                        if "victim_bytes" in got else common["bytes"])
        return Workload(senders=senders, receiver=receiver, victim=victim,  # type: ignore[arg-type]
                        victim_bytes=victim_bytes, **common)

    def flow(self, node: Node, where: str, got: dict[str, tuple[Node, Node]],
             topology: Topology, common: dict[str, object]) -> Workload:
        self.require(node, where, got, "a flow", ("src", "dst"))
        src = self.nic(got["src"][1], f"{where}.src", topology)
        dst = self.nic(got["dst"][1], f"{where}.dst", topology)
        if src == dst:
            raise self.fail(got["dst"][1], f"{where}.dst", "a flow goes to another NIC")
        path = None
        if "path" in got:
            pair = self.seq(got["path"][1], f"{where}.path")
            if len(pair) != 2:
                raise self.fail(got["path"][1], f"{where}.path", "expected [PLANE, T1_INDEX]")
            plane = self.int_(pair[0], f"{where}.path[0]", 0, topology.planes - 1)
            t1s = topology.switches_of(plane, Tier.T1)
            index = self.int_(pair[1], f"{where}.path[1]", 0, max(len(t1s) - 1, 0))
            t1 = t1s[index].name if t1s else ""
            for nic in (src, dst):
                t0 = topology.nic(nic).attachments[plane][0]
                if t1 not in {peer for _, peer, _ in topology.neighbors(t0)}:
                    raise self.fail(pair[1], f"{where}.path[1]", f"no cable joins T1 "
                                    f"{t1 or index} to {nic}'s T0 {t0} in plane {plane}")
            path = (plane, index)
        return Workload(src=src, dst=dst, path=path, **common)  # type: ignore[arg-type]

    # -- failures --------------------------------------------------------------------------

    def failures(self, node: Node, topology: Topology,
                 profile: EvProfile) -> list[tuple[Failure, str, int]]:
        """The failures in time order (ties as listed), each with where a warning names it
        and its place in the list."""
        out = []
        for k, item in enumerate(self.seq(node, "failures")):
            where = f"failures[{k}]"
            got = self.mapping(item, where, ("at_us", "kind", *FAILURE_KEYS), ("at_us", "kind"))
            kind = self.choice(got["kind"][1], f"{where}.kind", FAILURES)
            needs, optional = FAILURE_FIELDS[kind]
            self.require(item, where, got, f"a {kind}", needs)
            for key, (key_node, _) in got.items():
                if key not in ("at_us", "kind", *needs, *optional):
                    raise self.fail(key_node, f"{where}.{key}", f"a {kind} has no '{key}'")
            if kind == "blackhole" and ("switch" in got) == ("link" in got):
                raise self.fail(item, where, "a blackhole needs a 'switch' or a 'link' "
                                "(one of them)")
            values: dict[str, object] = {"at_us": self.int_(got["at_us"][1], f"{where}.at_us",
                                                            0, 10**9), "kind": kind}
            if "link" in got:
                values["link"] = self.cable(got["link"][1], f"{where}.link",
                                            kind in NIC_CABLE_KINDS)
            if "switch" in got:
                name = self.name(got["switch"][1], f"{where}.switch")
                if name not in _switch_names(topology):
                    raise self.fail(got["switch"][1], f"{where}.switch", f"no switch '{name}'")
                values["switch"] = name
            if "nic" in got:
                values["nic"] = self.nic(got["nic"][1], f"{where}.nic", topology)
            if "plane" in got:
                values["plane"] = self.int_(got["plane"][1], f"{where}.plane", 0,
                                            topology.planes - 1)
            if "ev" in got:
                values["ev"] = self.ev(got["ev"][1], f"{where}.ev", topology, profile)
            for key, lo in (("down_us", 1), ("up_us", 1), ("count", 1), ("until_us", 0)):
                if key in got:
                    values[key] = self.int_(got[key][1], f"{where}.{key}", lo, 10**9)
            if "percent" in got:
                values["percent"] = self.number(got["percent"][1], f"{where}.percent", 0.0,
                                                100.0)
            if "direction" in got:
                values["direction"] = self.choice(got["direction"][1], f"{where}.direction",
                                                  DIRECTIONS)
            failure = Failure(**values)  # type: ignore[arg-type]
            if failure.until_us and failure.until_us <= failure.at_us:
                raise self.fail(got["until_us"][1], f"{where}.until_us",
                                "until_us must come after at_us")
            out.append((failure, self.place(item, where), k))
        return sorted(out, key=lambda pair: pair[0].at_us)

    def ev(self, node: Node, field: str, topology: Topology, profile: EvProfile) -> int:
        """An EV of the profile: an active one or a backup."""
        ev = self.int_(node, field, 0)
        total = profile.ev_count + profile.backups * topology.planes
        if ev >= total:
            raise self.fail(node, field, f"EV {ev} is not in the profile: its EVs are "
                            f"0..{total - 1} ({profile.ev_count} + {profile.backups} backups x "
                            f"{topology.planes} planes)")
        return ev

    # -- knobs -----------------------------------------------------------------------------

    def profile(self, item: tuple[Node, Node] | None, topology: Topology) -> EvProfile:
        default = DEFAULT_PROFILE
        highest = {"ev_count": 256, "backups": 256, "ev_min_active": 256,
                   "probe_successes": 256, "skip_us": 10**6}
        got = self.mapping(item[1], "profile", tuple(highest)) if item is not None else {}
        values = {key: self.int_(got[key][1], f"profile.{key}", 0, most) if key in got
                  else getattr(default, key) for key, most in highest.items()}
        profile = EvProfile(**values)
        try:
            profile.check(topology.planes)
        except PlanError as error:
            where = item[1] if item is not None else self._root
            raise self.fail(where, "profile", str(error)) from None
        return profile

    def _timing(self, item: tuple[Node, Node] | None, section: str, keys: tuple[str, ...],
                zero_ok: tuple[str, ...] = ()
                ) -> tuple[dict[str, int], dict[str, tuple[Node, Node]]]:
        """The section's integers (1 or more; 0 too for `zero_ok`) by key, and its nodes."""
        if item is None:
            return {}, {}
        got = self.mapping(item[1], section, keys)
        return {key: self.int_(got[key][1], f"{section}.{key}", 0 if key in zero_ok else 1,
                               10**9) for key in got}, got

    def controller(self, item: tuple[Node, Node] | None) -> ControllerTiming:
        values, _ = self._timing(item, "controller",
                                 ("period_us", "window_us", "settle_us", "hold_us",
                                  "probe_interval_us", "probe_successes", "confirm_probes",
                                  "probe_timeout_us", "idle_probe_interval_us"),
                                 zero_ok=("idle_probe_interval_us",))   # 0: no idle probes
        return ControllerTiming(**values)

    def transport(self, item: tuple[Node, Node] | None) -> TransportTiming:
        cc, item = self._cc_knobs(item)
        values, got = self._timing(item, "transport", (
            "window", "rto_us", "reorder_us", "rto_min_us", "rto_max_us", "give_up_us",
            "max_retries", "retry_linear_cnt", "probe_interval_us"))
        if values.get("retry_linear_cnt", 0) > 7:
            raise self.fail(got["retry_linear_cnt"][1], "transport.retry_linear_cnt",
                            "at most 7 (the OCP MRC API's retry.linear_cnt)")
        if values.get("window", 1) > NIC_PSN_WINDOW:
            raise self.fail(got["window"][1], "transport.window",
                            f"at most {NIC_PSN_WINDOW} (the NIC's PSN ring)")
        timing = TransportTiming(**values)
        floor = timing.rto_min_us or timing.rto_us
        if floor > (timing.rto_max_us or max(timing.give_up_us or 20 * timing.rto_us, floor)):
            raise self.fail(got["rto_max_us"][1], "transport.rto_max_us",
                            f"below the RTO's floor {floor} µs (rto_min_us, or rto_us)")
        return TransportTiming(**values, **cc)  # type: ignore[arg-type]

    def _cc_knobs(self, item: tuple[Node, Node] | None
                  ) -> tuple[dict[str, object], tuple[Node, Node] | None]:
        """The congestion-control keys of `transport` (CC_KEYS), and the section without
        them (its integer knobs are read as the other sections' are)."""
        if item is None or not isinstance(item[1], MappingNode):
            return {}, item
        node = item[1]
        cc: dict[str, object] = {}
        rest = []
        for key, value in node.value:
            name = key.value if isinstance(key, ScalarNode) else None
            if name not in CC_KEYS:
                rest.append((key, value))
            elif name == "cc_algorithm":
                cc[name] = ("fixed" if isinstance(value, ScalarNode) and value.value == "none"
                            else self.choice(value, "transport.cc_algorithm",
                                             (*ALGORITHMS, "none")))
            elif name == "max_cwnd":
                cc[name] = self.int_(value, "transport.max_cwnd", 1, 1 << 40)
            else:
                cc[name] = self.number(value, f"transport.{name}", 0.0, 1e9, above=True)
        trimmed = MappingNode(node.tag, rest, node.start_mark, node.end_mark,
                              node.flow_style)
        return cc, (item[0], trimmed)

    def ecmp(self, item: tuple[Node, Node] | None) -> int:
        values, _ = self._timing(item, "ecmp", ("convergence_us",))
        return values.get("convergence_us", Scenario.ecmp_convergence_us)


def _switch_names(topology: Topology) -> set[str]:
    return {s.name for s in topology.switches}


def _same_rack(topology: Topology, a: str, b: str) -> bool:
    """`a` and `b` sit under the same T0 in every plane."""
    ta = [t0 for t0, _ in topology.nic(a).attachments]
    tb = [t0 for t0, _ in topology.nic(b).attachments]
    return ta == tb and all(topology.switch(t).tier == Tier.T0 for t in ta)
