"""Emulation scenarios: what `mrc-ctl emulate SCENARIO.yaml` runs, read from YAML.

The schema is documented field by field in scenarios/README.md. Every error names
FILE:LINE:COL and the field (controller/topology/yaml_nodes.py), and the scenario is checked
against its topology (NICs, switches and cables it names exist) before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from yaml.nodes import Node, ScalarNode

from controller.plan.nic_plan import EvProfile, PlanError
from controller.topology import yaml_io
from controller.topology.errors import TopologyError, YamlFileError
from controller.topology.generate import generate
from controller.topology.model import Tier, Topology
from controller.topology.yaml_nodes import NodeReader, compose, read_text
from mrc_transport.config import NIC_PSN_WINDOW

# Load balancing, all on the same P4 programs (emulation/modes.py says how each is configured).
MODES = ("ecmp", "spray", "mrc", "mrc_no_controller")
WORKLOADS = ("ring_allreduce", "all_to_all", "permutation", "incast")
FAILURES = ("link_down", "link_up", "switch_reboot", "flap", "loss", "nic_port_down")


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
class Workload:
    """What the NICs send. `nics` () = every NIC of the topology, in topology order.

    ring_allreduce: each rank reduces a `bytes` buffer with its ring neighbours: 2(N-1) steps,
    each a write of bytes/N to the next rank once the previous step's chunk has arrived.
    all_to_all: every rank writes `bytes` to every other rank at once. permutation: every rank
    writes `bytes` to one other (a seeded derangement). incast: `senders` write `bytes` each
    to `receiver`, while `victim` (sender, receiver: a NIC under the receiver's T0) writes
    `victim_bytes`. `iterations` repeats the whole pattern, each after the last finished."""

    kind: str
    bytes: int
    nics: tuple[str, ...] = ()
    iterations: int = 1
    senders: tuple[str, ...] = ()
    receiver: str = ""
    victim: tuple[str, str] | None = None
    victim_bytes: int = 0


@dataclass(frozen=True)
class Failure:
    """One scheduled failure (virtual µs from the start). Which fields matter by kind:
    link_down / link_up: `link`; switch_reboot: `switch`, `down_us`; flap: `link`, `count`,
    `down_us`, `up_us`; loss: `link`, `percent`, `until_us`; nic_port_down: `nic`, `plane`,
    `until_us` (0: for good)."""

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

    def describe(self) -> str:
        target = (f"{self.link[0]}:{self.link[1]}" if self.link else self.switch
                  or f"{self.nic} plane {self.plane}")
        extra = {"switch_reboot": f" for {self.down_us} µs",
                 "flap": f" x{self.count} ({self.down_us} µs down, {self.up_us} µs up)",
                 "loss": f" {self.percent:g}%"}.get(self.kind, "")
        return f"{self.kind} {target}{extra} at {self.at_us} µs"


@dataclass(frozen=True)
class ControllerTiming:
    """The repair loop in virtual time (controller/repair): how often it runs, the window in
    which EV reports from different NICs are correlated, how long reports naming a path just
    rewritten are ignored, the flap hold-down, and the link probes of a cable taken out
    (controller/daemon/probes.py): one every `probe_interval_us`, `probe_successes` back in a
    row to prove it healthy."""

    period_us: int = 20
    window_us: int = 10_000
    settle_us: int = 5_000
    hold_us: int = 1_000
    probe_interval_us: int = 50
    probe_successes: int = 3


@dataclass(frozen=True)
class TransportTiming:
    """The host transport's knobs (mrc_transport/config.py), in virtual µs."""

    window: int = 64
    rto_us: int = 500
    reorder_us: int = 150


@dataclass(frozen=True)
class Scenario:
    name: str
    topology: Topology
    workload: Workload
    description: str = ""
    source: str = "<string>"
    links: Links = Links()
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


def load(path: str | Path) -> Scenario:
    """Read and check a scenario file; ScenarioError names FILE:LINE:COL and the field."""
    return loads(read_text(path, ScenarioError, "scenario"), str(path),
                 base=Path(path).resolve().parent)


def loads(text: str, source: str = "<string>", base: Path | None = None) -> Scenario:
    """`base`: where a relative topology path is taken from (default: the working folder)."""
    root = compose(text, source, ScenarioError, "scenario")
    return _Reader(source, base or Path.cwd()).scenario(root)


TOP_KEYS = ("name", "description", "topology", "links", "mtu", "seed", "duration_us", "bin_us",
            "modes", "workload", "failures", "profile", "controller", "transport", "ecmp")


class _Reader(NodeReader):
    error = ScenarioError

    def __init__(self, source: str, base: Path) -> None:
        super().__init__(source)
        self.base = base

    def scenario(self, root: Node) -> Scenario:
        self._root = root
        top = self.mapping(root, "", TOP_KEYS, ("name", "topology", "workload"))
        topology = self.topology(top["topology"][1])
        get = top.get
        links = self.links(get("links"))
        modes = MODES
        if "modes" in top:
            node = top["modes"][1]
            modes = tuple(self.choice(n, f"modes[{k}]", MODES)
                          for k, n in enumerate(self.seq(node, "modes")))
            if not modes or len(set(modes)) != len(modes):
                raise self.fail(node, "modes", "list each mode once, at least one")
        scenario = Scenario(
            name=self.name(top["name"][1], "name"),
            description=self.str_(top["description"][1], "description") if "description" in top
            else "",
            source=self.source,
            topology=topology,
            workload=self.workload(top["workload"][1], topology),
            links=links,
            mtu=self.int_(top["mtu"][1], "mtu", 64, 8192) if "mtu" in top else 1024,
            seed=self.int_(top["seed"][1], "seed", 0, (1 << 32) - 1) if "seed" in top else 1,
            duration_us=(self.int_(top["duration_us"][1], "duration_us", 1, 10**9)
                         if "duration_us" in top else 20_000),
            bin_us=self.int_(top["bin_us"][1], "bin_us", 1, 10**6) if "bin_us" in top else 50,
            modes=modes,
            failures=tuple(self.failures(top["failures"][1], topology)) if "failures" in top
            else (),
            profile=self.profile(get("profile"), topology),
            controller=self.controller(get("controller")),
            transport=self.transport(get("transport")),
            ecmp_convergence_us=self.ecmp(get("ecmp")),
        )
        return scenario

    # -- sections --------------------------------------------------------------------------

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

    def workload(self, node: Node, topology: Topology) -> Workload:
        got = self.mapping(node, "workload", ("kind", "bytes", "nics", "iterations", "senders",
                                              "receiver", "victim", "victim_bytes"),
                           ("kind", "bytes"))
        kind = self.choice(got["kind"][1], "workload.kind", WORKLOADS)
        size = self.int_(got["bytes"][1], "workload.bytes", 1, 1 << 30)
        iterations = (self.int_(got["iterations"][1], "workload.iterations", 1, 1000)
                      if "iterations" in got else 1)
        if kind == "incast":
            if "nics" in got:
                raise self.fail(got["nics"][0], "workload.nics",
                                "an incast names senders and a receiver, not nics")
            for key in ("senders", "receiver"):
                if key not in got:
                    raise self.fail(node, "workload", f"an incast needs '{key}'")
            senders = self.nic_list(got["senders"][1], "workload.senders", topology)
            receiver = self.nic(got["receiver"][1], "workload.receiver", topology)
            if receiver in senders or not senders:
                raise self.fail(got["senders"][1], "workload.senders",
                                "senders: at least one, and not the receiver")
            victim = None
            if "victim" in got:
                pair = self.seq(got["victim"][1], "workload.victim")
                if len(pair) != 2:
                    raise self.fail(got["victim"][1], "workload.victim",
                                    "expected [SENDER, RECEIVER]")
                victim = (self.nic(pair[0], "workload.victim[0]", topology),
                          self.nic(pair[1], "workload.victim[1]", topology))
                busy = {*senders, receiver}
                if victim[0] in busy or victim[1] in busy or victim[0] == victim[1]:
                    raise self.fail(got["victim"][1], "workload.victim",
                                    "the victim's NICs must be two others")
                if not _same_rack(topology, victim[1], receiver):
                    raise self.fail(pair[1], "workload.victim[1]",
                                    f"the victim's receiver must sit under {receiver}'s T0s")
            victim_bytes = (self.int_(got["victim_bytes"][1], "workload.victim_bytes", 1, 1 << 30)
                            if "victim_bytes" in got else size)
            return Workload(kind, size, (), iterations, senders, receiver, victim, victim_bytes)
        for key in ("senders", "receiver", "victim", "victim_bytes"):
            if key in got:
                raise self.fail(got[key][0], f"workload.{key}", f"only an incast has '{key}'")
        nics = (self.nic_list(got["nics"][1], "workload.nics", topology) if "nics" in got
                else tuple(n.name for n in topology.nics))
        if len(nics) < 2:
            raise self.fail(got.get("nics", (node, node))[1], "workload.nics",
                            f"a {kind} needs at least two NICs")
        if kind == "ring_allreduce" and size < len(nics):
            raise self.fail(got["bytes"][1], "workload.bytes",
                            f"a ring of {len(nics)} needs at least {len(nics)} bytes")
        return Workload(kind, size, nics, iterations)

    def failures(self, node: Node, topology: Topology) -> list[Failure]:
        out = []
        cables = {end for link in topology.iter_links()
                  if link.a in _switch_names(topology) and link.b in _switch_names(topology)
                  for end in ((link.a, link.a_port), (link.b, link.b_port))}
        for k, item in enumerate(self.seq(node, "failures")):
            where = f"failures[{k}]"
            got = self.mapping(item, where, ("at_us", "kind", "link", "switch", "nic", "plane",
                                             "down_us", "up_us", "count", "percent", "until_us"),
                               ("at_us", "kind"))
            kind = self.choice(got["kind"][1], f"{where}.kind", FAILURES)
            needs = {"link_down": ("link",), "link_up": ("link",), "flap": ("link",),
                     "loss": ("link", "percent"), "switch_reboot": ("switch",),
                     "nic_port_down": ("nic",)}[kind]
            allowed = {"link_down": ("link",), "link_up": ("link",),
                       "flap": ("link", "count", "down_us", "up_us"),
                       "loss": ("link", "percent", "until_us"),
                       "switch_reboot": ("switch", "down_us"),
                       "nic_port_down": ("nic", "plane", "until_us")}[kind]
            for key in needs:
                if key not in got:
                    raise self.fail(item, where, f"a {kind} needs '{key}'")
            for key, (key_node, _) in got.items():
                if key not in ("at_us", "kind", *allowed):
                    raise self.fail(key_node, f"{where}.{key}", f"a {kind} has no '{key}'")
            values: dict[str, object] = {"at_us": self.int_(got["at_us"][1], f"{where}.at_us",
                                                            0, 10**9), "kind": kind}
            if "link" in got:
                ref = self.port_ref(got["link"][1], f"{where}.link")
                if ref not in cables:
                    raise self.fail(got["link"][1], f"{where}.link",
                                    f"{ref[0]}:{ref[1]} is not an end of a switch-to-switch "
                                    "cable of the topology")
                values["link"] = ref
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
            for key, lo in (("down_us", 1), ("up_us", 1), ("count", 1), ("until_us", 0)):
                if key in got:
                    values[key] = self.int_(got[key][1], f"{where}.{key}", lo, 10**9)
            if "percent" in got:
                values["percent"] = self.number(got["percent"][1], f"{where}.percent", 0.0,
                                                100.0, above=True)
            failure = Failure(**values)  # type: ignore[arg-type]
            if failure.until_us and failure.until_us <= failure.at_us:
                raise self.fail(got["until_us"][1], f"{where}.until_us",
                                "until_us must come after at_us")
            out.append(failure)
        return sorted(out, key=lambda f: f.at_us)

    def profile(self, item: tuple[Node, Node] | None, topology: Topology) -> EvProfile:
        default = Scenario.profile
        keys = ("ev_count", "backups", "ev_min_active", "probe_successes")
        got = self.mapping(item[1], "profile", keys) if item is not None else {}
        values = {key: self.int_(got[key][1], f"profile.{key}", 0, 256) if key in got
                  else getattr(default, key) for key in keys}
        profile = EvProfile(**values)
        try:
            profile.check(topology.planes)
        except PlanError as error:
            where = item[1] if item is not None else self._root
            raise self.fail(where, "profile", str(error)) from None
        return profile

    def _timing(self, item: tuple[Node, Node] | None, section: str,
                keys: tuple[str, ...]) -> tuple[dict[str, int], dict[str, tuple[Node, Node]]]:
        """The section's integers (1 or more) by key, and its nodes."""
        if item is None:
            return {}, {}
        got = self.mapping(item[1], section, keys)
        return {key: self.int_(got[key][1], f"{section}.{key}", 1, 10**9) for key in got}, got

    def controller(self, item: tuple[Node, Node] | None) -> ControllerTiming:
        values, _ = self._timing(item, "controller",
                                 ("period_us", "window_us", "settle_us", "hold_us",
                                  "probe_interval_us", "probe_successes"))
        return ControllerTiming(**values)

    def transport(self, item: tuple[Node, Node] | None) -> TransportTiming:
        values, got = self._timing(item, "transport", ("window", "rto_us", "reorder_us"))
        if values.get("window", 1) > NIC_PSN_WINDOW:
            raise self.fail(got["window"][1], "transport.window",
                            f"at most {NIC_PSN_WINDOW} (the NIC's PSN ring)")
        return TransportTiming(**values)

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
