"""The controller's probes around one repair poll, in the order the loop needs them; one
implementation for `mrc-ctl run` (controller.py) and the emulator's controller (emulation/run.py).

    rounds.take(repairer, now_s, packet_ins)          # answers and losses in, before the poll
    repairer.poll(now_s)
    healthy = rounds.send(repairer, now_s, packet_ins, send)   # the probes due out, after it

- `confirm` (probes.ProbeLoop): the suspects and their alternatives (repair/confirm.py);
- `link_prober` (probes.LinkProber): the cables taken out, until proven healthy again (those
  go back to the NICs after the damper's hold-down: `proven_healthy`);
- `idle` (idle_probes.IdleSweep, optional): the cables idle over the last interval, but those
  the other two probe already and those the caller names (`idle_skip`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass

from controller.daemon.idle_probes import IdleSweep
from controller.daemon.probes import LinkProber, ProbeLoop
from controller.repair.correlate import FabricLink
from controller.repair.repairer import Repairer
from p4rt import PacketIn

Send = Callable[[str, int, bytes], bool]   # (T0, port, frame) -> sent


@dataclass
class ProbeRounds:
    """See the module docstring."""

    link_prober: LinkProber
    confirm: ProbeLoop
    idle: IdleSweep | None = None

    def take(self, repairer: Repairer, now_s: float, received: Sequence[PacketIn]) -> None:
        """The confirmation and idle probes back (or lost) in `received`, to the repairer:
        what they prove is acted on by this round's poll."""
        repairer.probed(self.confirm.take(now_s, received), now_s)
        if self.idle is not None:
            repairer.idle_probed(self.idle.take(now_s, received), now_s)

    def send(self, repairer: Repairer, now_s: float, received: Sequence[PacketIn], send: Send,
             idle_skip: Set[FabricLink] = frozenset()) -> set[FabricLink]:
        """Send the probes due now; the cables the link prober has just proven healthy (the
        repairer is told: `proven_healthy`)."""
        confirming, taken_out = repairer.confirm_targets(), repairer.probe_targets()
        self.confirm.send(now_s, confirming, send)
        healthy = self.link_prober.round(now_s, taken_out, send, received)
        if self.idle is not None:
            self.idle.send(now_s, send, confirming | taken_out | idle_skip)
        if healthy:
            repairer.proven_healthy(healthy, now_s)
        return healthy
