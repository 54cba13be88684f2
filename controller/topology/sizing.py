"""Sizing of multi-plane two-tier Clos fabrics (mrc-srv6.md §2.2) and the single-plane comparison.

Per-plane radix R = switch capacity / (NIC rate / P). A full two-tier plane has R T0s (R/2 down,
R/2 up) and R/2 T1s, so N = R²/2 NICs and 1.5·P·R switches. The same switch run single-plane at
the full NIC rate has radix k = R/P: two tiers hold k²/2 NICs; a three-tier fat tree needs N/(k/2)
edge, as many aggregation and N/k core switches (5N/k). Optics are counted in NIC-rate link
ends: every NIC's bandwidth crosses two cable layers in two tiers (2N) and three in three (3N).
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.topology.errors import TopologyError
from controller.topology.model import Tier, Topology


@dataclass(frozen=True)
class FabricSize:
    planes: int
    radix: int  # per plane
    nics: int
    t0_per_plane: int
    t1_per_plane: int
    switches: int
    links: int  # cables: NIC ports + T0-T1, at the per-plane rate
    paths_per_plane: int  # per NIC pair under different T0s (one per T1); 1 under the same T0
    single_radix: int | None  # the same switch single-plane at the full NIC rate (k = R/P)
    switch_tbps: float | None = None
    nic_gbps: float | None = None

    @property
    def paths_total(self) -> int:
        return self.paths_per_plane * self.planes

    @property
    def link_ends(self) -> float:
        """Cables in NIC-rate units (each carries 1/P of a NIC's bandwidth)."""
        return self.links / self.planes

    @property
    def two_tier_max_nics(self) -> int | None:
        k = self.single_radix
        return None if k is None else k * k // 2

    @property
    def two_tier_switches(self) -> int | None:
        """Switches of a single-plane two-tier fabric for these NICs; None if it cannot hold
        them."""
        k = self.single_radix
        if k is None or self.nics > k * k // 2:
            return None
        return -(-self.nics // (k // 2)) + k // 2

    @property
    def three_tier_max_nics(self) -> int | None:
        k = self.single_radix
        return None if k is None else k ** 3 // 4

    @property
    def three_tier_switches(self) -> int | None:
        k = self.single_radix
        if k is None:
            return None
        edge = -(-self.nics // (k // 2))
        return 2 * edge + -(-self.nics // k)

    @property
    def three_tier_link_ends(self) -> int:
        return 3 * self.nics

    def switch_ratio(self) -> float | None:
        three = self.three_tier_switches
        return None if not three else self.switches / three

    def link_ratio(self) -> float:
        return self.link_ends / self.three_tier_link_ends


def _single_radix(radix: int, planes: int) -> int | None:
    k, rest = divmod(radix, planes)
    return k if rest == 0 and k >= 2 and k % 2 == 0 else None


def size_for(switch_tbps: float, nic_gbps: float, planes: int) -> FabricSize:
    """The largest two-tier fabric of a switch of `switch_tbps` with NICs of `nic_gbps` split
    over `planes` planes."""
    if switch_tbps <= 0 or nic_gbps <= 0 or planes < 1:
        raise TopologyError("switch capacity, NIC rate and planes must be positive")
    exact = switch_tbps * 1000 * planes / nic_gbps
    radix = round(exact)
    if abs(exact - radix) > 1e-6 or radix < 2 or radix % 2:
        raise TopologyError(f"{switch_tbps}T / ({nic_gbps}G / {planes}) = {exact:g} ports: "
                            "the per-plane radix must be an even whole number")
    half = radix // 2
    nics = radix * half
    return FabricSize(planes, radix, nics, radix, half, planes * (radix + half),
                      2 * planes * nics, half, _single_radix(radix, planes), switch_tbps,
                      nic_gbps)


def size_of(topo: Topology) -> FabricSize:
    """The size of a topology as given (it may be smaller than its radix allows)."""
    t0 = max((len(topo.switches_of(p, Tier.T0)) for p in range(topo.planes)), default=0)
    t1 = max((len(topo.switches_of(p, Tier.T1)) for p in range(topo.planes)), default=0)
    return FabricSize(topo.planes, topo.radix, len(topo.nics), t0, t1, len(topo.switches),
                      topo.link_count(), t1, _single_radix(topo.radix, topo.planes))


def render(size: FabricSize) -> str:
    """The sizing table, as `mrc-ctl topo size` prints it."""
    def n(value: float | None) -> str:
        if value is None:
            return "-"
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"

    head = f"{size.planes} plane(s), per-plane radix {size.radix}"
    if size.switch_tbps is not None:
        head = (f"{size.switch_tbps:g}T switch, {size.nic_gbps:g}G NIC, {head} "
                f"({size.nic_gbps / size.planes:g}G per plane)")
    rows = [
        ("NICs", n(size.nics)),
        ("T0 per plane", n(size.t0_per_plane)),
        ("T1 per plane", n(size.t1_per_plane)),
        ("switches total", n(size.switches)),
        ("links total (cables)", n(size.links)),
        ("paths per NIC pair per plane", f"{n(size.paths_per_plane)} (1 under the same T0)"),
        ("paths per NIC pair, all planes", n(size.paths_total)),
    ]
    width = max(len(r[0]) for r in rows)
    lines = [head] + [f"  {k:<{width}}  {v}" for k, v in rows]
    k = size.single_radix
    if k is None:
        lines.append("  (no single-plane comparison: radix / planes is not an even number)")
        return "\n".join(lines) + "\n"
    two = size.two_tier_switches
    three_max = size.three_tier_max_nics or 0
    note = "" if size.nics <= three_max else " *"
    table = [
        ("", f"{size.planes}-plane 2-tier", "1-plane 2-tier", "1-plane 3-tier"),
        ("radix", n(size.radix), n(k), n(k)),
        ("max NICs", n(size.radix * size.radix // 2), n(size.two_tier_max_nics), n(three_max)),
        ("switches for these NICs", n(size.switches),
         n(two) if two is not None else "cannot", n(size.three_tier_switches) + note),
        ("link ends (NIC-rate units)", n(size.link_ends),
         n(2 * size.nics) if two is not None else "-", n(size.three_tier_link_ends)),
        ("switch hops, longest path", "3", "3", "5"),
    ]
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    lines.append("")
    lines.append(f"Compared with the same switch single-plane (radix {k} at the full NIC rate):")
    for row in table:
        lines.append("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                      for i, (c, w) in enumerate(zip(row, widths))))
    ratio = size.switch_ratio()
    lines.append(f"  multi-plane / 3-tier: switches {n(ratio)}x, link ends "
                 f"{n(size.link_ratio())}x")
    if note:
        lines.append(f"  * {n(size.nics)} NICs exceed one 3-tier fat tree of radix {k} "
                     f"(k³/4 = {n(three_max)}); the count scales it as 5N/k.")
    return "\n".join(lines) + "\n"
