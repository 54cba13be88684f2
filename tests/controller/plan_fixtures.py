"""Hand-built topologies for the planner and checker tests (independent of the generator)."""

from __future__ import annotations

from controller.topology.model import Link, Nic, Switch, Tier, Topology


def clos(planes: int = 2, radix: int = 4, nics: int | None = None,
         explicit: bool = False) -> Topology:
    """A full two-tier Clos per plane (R T0s, R/2 T1s) with the standard wiring, implied
    (`wiring="clos"`) or listed link by link (`explicit=True`)."""
    half = radix // 2
    n_t0, n_t1 = radix, half
    n_nics = n_t0 * half if nics is None else nics
    switches: list[Switch] = []
    for p in range(planes):
        switches += [Switch(f"p{p}-t0-{i:02d}", Tier.T0, p, i) for i in range(n_t0)]
        switches += [Switch(f"p{p}-t1-{j:02d}", Tier.T1, p, j) for j in range(n_t1)]
    nic_list = [Nic(f"n{k}", k, tuple((f"p{p}-t0-{k // half:02d}", k % half)
                                      for p in range(planes)))
                for k in range(n_nics)]
    links: list[Link] = []
    if explicit:
        for p in range(planes):
            for i in range(n_t0):
                for j in range(n_t1):
                    links.append(Link(f"p{p}-t0-{i:02d}", half + j, f"p{p}-t1-{j:02d}", i))
        for nic in nic_list:
            for p, (t0, port) in enumerate(nic.attachments):
                links.append(Link(nic.name, p, t0, port))
    return Topology(name=f"clos-{planes}x{radix}", planes=planes, radix=radix,
                    sid_block="fcbb:bbbb::/32", switches=switches, nics=nic_list, links=links,
                    wiring="explicit" if explicit else "clos")
