"""Writes the matrix's classes again on topologies/medium.yaml (32 NICs, 4 planes, 4 T1s a
plane): the same failures, on this fabric's cables, rings in stride-4 order (every step crosses
T0s), 8 ms each. `make eval-medium` sweeps them; run this after changing it:

    python scenarios/matrix-medium/generate.py
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
NICS, PLANES, T0S, T1S = 32, 4, 8, 4
STRIDE = [4 * (k % T0S) + k // T0S for k in range(NICS)]   # nic0, nic4, ..., nic28, nic1, ...
UPLINKS = [f"p{p}-t0-{i}:{4 + j}" for p in range(PLANES) for i in range(T0S) for j in range(T1S)]
TRANSPORT = "transport: {rto_us: 100, reorder_us: 30}"


def ring(nics: list[int], size: int = 1 << 20) -> str:
    return (f"{{kind: ring_allreduce, bytes: {size}, nics: ["
            + ", ".join(f"nic{n}" for n in nics) + "]}")


def failures(*lines: str) -> str:
    return "failures:\n" + "".join(f"  - {line}\n" for line in lines)


def loss_everywhere(percent: float) -> str:
    return failures(*(f'{{at_us: 0, kind: loss, link: "{u}", percent: {percent}}}'
                      for u in UPLINKS))


RING = f"workload: {ring(STRIDE)}\n"
CLASSES: dict[str, tuple[str, str]] = {
    "burst-a2a": ("all-to-all of 32 KiB per pair, 2 rounds, rto 150 µs; no failure",
                  "transport: {rto_us: 150, reorder_us: 30}\n"
                  "workload: {kind: all_to_all, bytes: 32768, iterations: 2}\n"),
    "cable-blackhole": ("p0-t0-1 <-> p0-t1-1 silently blackholed from 50 µs",
                        TRANSPORT + "\n" + RING
                        + failures('{at_us: 50, kind: blackhole, link: "p0-t0-1:5"}')),
    "cable-cut": ("p0-t0-0 <-> p0-t1-0 cut at 50 µs", TRANSPORT + "\n" + RING
                  + failures('{at_us: 50, kind: link_down, link: "p0-t0-0:4"}')),
    "cable-loss-out": ("10 % loss on p0-t0-0 -> p0-t1-0 (one way)", TRANSPORT + "\n" + RING
                       + failures('{at_us: 0, kind: loss, link: "p0-t0-0:4", percent: 10, '
                                  'direction: out}')),
    # One rank under each T0 (14 steps of 32 packets, as the tiny fabric's ring), beside a flow
    # pinned to a 5 Gb/s cable: a ring over all 32 would wait on that queue at each of 62 steps.
    # As on the tiny fabric, the flow leaves from the T0 of the ring's leg nic0 -> nic4, for the
    # leg's destination (from nic0 itself it would pin that leg's connection too).
    "ecn-one-path": ("a ring of one NIC per T0 beside a 1 MiB flow nic1 -> nic4 pinned to a "
                     "5 Gb/s cable; ECN, no trims",
                     'cables:\n  - {link: "p0-t0-0:4", rate_gbps: 5}\n'
                     "qos: {ecn_threshold: 2, trim_threshold: 200}\n" + TRANSPORT + "\n"
                     f"workload:\n  - {ring(STRIDE[:T0S])}\n"
                     "  - {kind: flow, name: background, src: nic1, dst: nic4, bytes: 1048576, "
                     "path: [0, 0]}\n"),
    "ev-loss": ("nic0 loses 20 % of its packets on EV 3", TRANSPORT + "\n" + RING
                + failures("{at_us: 0, kind: ev_loss, nic: nic0, ev: 3, percent: 20}")),
    "flap-storm-6": ("p0-t0-1:4 flaps 6 times from 50 µs (80 µs down, 40 µs up)",
                     TRANSPORT + "\n" + RING
                     + failures('{at_us: 50, kind: flap, link: "p0-t0-1:4", count: 6, '
                                'down_us: 80, up_us: 40}')),
    "incast-7to1": ("7 senders on other T0s write 32 KiB each to nic0; the victim nic31 -> nic1 "
                    "writes 128 KiB meanwhile",
                    TRANSPORT + "\nworkload:\n  kind: incast\n  bytes: 32768\n"
                    "  senders: [" + ", ".join(f"nic{n}" for n in STRIDE[1:T0S]) + "]\n"
                    "  receiver: nic0\n  victim: [nic31, nic1]\n  victim_bytes: 131072\n"),
    "nic-port-down-up": ("nic1's plane-0 port down 50-400 µs", TRANSPORT + "\n" + RING
                         + failures("{at_us: 50, kind: nic_port_down, nic: nic1, plane: 0, "
                                    "until_us: 400}")),
    "ring-loss-0": ("no loss", TRANSPORT + "\n" + RING),
    "ring-loss-0.1": ("0.1 % random loss on every T0-T1 cable",
                      TRANSPORT + "\n" + RING + loss_everywhere(0.1)),
    "ring-loss-1": ("1 % random loss on every T0-T1 cable",
                    TRANSPORT + "\n" + RING + loss_everywhere(1)),
    "slow-plane": ("every cable of plane 1 at 5 Gb/s",
                   "cables:\n"
                   + "".join(f'  - {{link: "{u}", rate_gbps: 5}}\n' for u in UPLINKS
                             if u.startswith("p1-"))
                   + "".join(f'  - {{link: "nic{n}:1", rate_gbps: 5}}\n' for n in range(NICS))
                   + TRANSPORT + "\n" + RING),
    "t1-blackhole-reboot": ("p0-t1-1 blackholed 50-400 µs, then rebooted (300 µs)",
                            TRANSPORT + "\n" + RING
                            + failures("{at_us: 50, kind: blackhole, switch: p0-t1-1, "
                                       "until_us: 400}",
                                       "{at_us: 400, kind: switch_reboot, switch: p0-t1-1, "
                                       "down_us: 300}")),
    "t1-reboot-permutation": ("permutation of 128 KiB per NIC, 4 rounds; p0-t1-0 reboots at "
                              "50 µs (300 µs down)",
                              TRANSPORT
                              + "\nworkload: {kind: permutation, bytes: 131072, iterations: 4}\n"
                              + failures("{at_us: 50, kind: switch_reboot, switch: p0-t1-0, "
                                         "down_us: 300}")),
}


def write(out: Path) -> list[Path]:
    """Every class's file in `out`."""
    paths = []
    for name, (what, body) in CLASSES.items():
        text = (f"# Written by generate.py: the class of scenarios/matrix/{name}.yaml, medium.\n"
                f"name: {name}\ndescription: medium fabric; {what}\n"
                "topology: ../../topologies/medium.yaml\n"
                "links: {rate_gbps: 10, delay_ns: 500}\nseed: 1\nduration_us: 8000\n" + body)
        path = out / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    write(HERE)
