"""The standard multi-plane two-tier Clos: P planes, each R T0s (R/2 NICs down, R/2 up) under
R/2 T1s, every NIC with one port per plane.

Names: switch `p{plane}-t{0|1}-{index}`, NIC `nic{n}`. Wiring (the model's "clos" rule): T0 i's
up-port R/2 + j ↔ T1 j's port i; NIC n's plane-p port ↔ T0 n // (R/2), port n % (R/2), of plane p.
Endpoints: switch k (its position in `switches`: plane by plane, T0s then T1s) listens on
host:(base_port + k) with device id k + 1.
"""

from __future__ import annotations

from controller.topology.bounds import MAX_PLANES, MAX_RADIX
from controller.topology.errors import TopologyError
from controller.topology.model import Endpoint, Nic, QosConfig, Switch, Tier, Topology

DEFAULT_SID_BLOCK = "fcbb:bbbb::/32"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_BASE_PORT = 50000


def switch_name(plane: int, tier: Tier, index: int) -> str:
    return f"p{plane}-{tier.value.lower()}-{index}"


def nic_name(index: int) -> str:
    return f"nic{index}"


def check_clos_shape(planes: int, radix: int, nics: int) -> None:
    """Raise TopologyError unless (planes, radix, nics) makes a standard two-tier Clos the
    controller can address (bounds.py), before anything is built."""
    if not 1 <= planes <= MAX_PLANES:
        raise TopologyError(f"planes must be 1..{MAX_PLANES} (the uSID's plane nibble), not "
                            f"{planes}", field="planes")
    if radix < 2 or radix % 2:
        raise TopologyError(f"radix must be even and at least 2, not {radix}", field="radix")
    if radix > MAX_RADIX:
        raise TopologyError(f"radix {radix} is above {MAX_RADIX}, the most ports a bit<9> port "
                            "number addresses (controller/topology/bounds.py)", field="radix")
    limit = radix * radix // 2
    if not 1 <= nics <= limit:
        raise TopologyError(
            f"{nics} NICs do not fit: radix {radix} holds 1..{limit} NICs (R²/2) per plane",
            field="nics")


def clos_switches(planes: int, radix: int, nics: int, *, host: str = DEFAULT_HOST,
                  base_port: int = DEFAULT_BASE_PORT, device_id_base: int = 1,
                  election_id: tuple[int, int] = (0, 1), role: str = "",
                  tls: tuple[str | None, str | None, str | None] = (None, None, None),
                  ) -> list[Switch]:
    """The switches of the standard Clos, in endpoint order, with the endpoint rule applied."""
    half = radix // 2
    n_t0 = -(-nics // half)
    out: list[Switch] = []
    for plane in range(planes):
        for tier, count in ((Tier.T0, n_t0), (Tier.T1, half)):
            for index in range(count):
                k = len(out)
                ep = Endpoint(f"{host}:{base_port + k}", device_id_base + k, election_id, role,
                              *tls)
                out.append(Switch(switch_name(plane, tier, index), tier, plane, index, ep))
    return out


def clos_nics(planes: int, radix: int, nics: int) -> list[Nic]:
    half = radix // 2
    # Share one name string per T0 across all NICs under it: 131,072 NICs x 8 planes otherwise
    # costs a million strings.
    t0_names = [[switch_name(p, Tier.T0, i) for p in range(planes)]
                for i in range(-(-nics // half))]
    return [Nic(nic_name(n), n, tuple((t0_names[n // half][p], n % half) for p in range(planes)))
            for n in range(nics)]


def generate(planes: int, radix: int, nics: int | None = None, *, name: str | None = None,
             wiring: str = "clos", sid_block: str = DEFAULT_SID_BLOCK,
             host: str = DEFAULT_HOST, base_port: int = DEFAULT_BASE_PORT,
             qos: QosConfig | None = None) -> Topology:
    """A full multi-plane Clos: `nics` defaults to R²/2 (the largest two-tier fabric); fewer
    NICs use ceil(N / (R/2)) T0s and still R/2 T1s per plane. `wiring="explicit"` lists every
    T0-T1 cable in `links` (for small fabrics); "clos" leaves them implied."""
    n = radix * radix // 2 if nics is None else nics
    check_clos_shape(planes, radix, n)
    if wiring not in ("clos", "explicit"):
        raise TopologyError(f"wiring must be 'clos' or 'explicit', not {wiring!r}",
                            field="wiring")
    if base_port < 0 or base_port + planes * (radix // 2 + -(-n // (radix // 2))) > 65536:
        raise TopologyError(f"base port {base_port} leaves no TCP port for every switch",
                            field="base_port")
    topo = Topology(
        name=name or f"clos-{planes}x{radix}-{n}",
        planes=planes,
        radix=radix,
        sid_block=sid_block,
        switches=clos_switches(planes, radix, n, host=host, base_port=base_port),
        nics=clos_nics(planes, radix, n),
        qos=qos or QosConfig(),
        wiring="clos",
    )
    if wiring == "explicit":
        names = {s.name for s in topo.switches}
        topo.links = [link for link in topo.iter_links() if link.b in names]
        topo.wiring = "explicit"
        topo.reindex()
    return topo
