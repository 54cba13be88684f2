"""controller/repair/damping.py: down at once, up after a hold-down that doubles per flap."""

from __future__ import annotations

from controller.repair.correlate import Verdict
from controller.repair.damping import Damper

LINK = (0, "p0-t0-0", "p0-t1-0")
DOWN, UP = Verdict(links_down={LINK}), Verdict()


def test_down_is_at_once_and_up_waits_for_the_hold_down() -> None:
    d = Damper(hold_s=1.0)
    assert d.effective(DOWN, 0.0).links_down == {LINK}
    assert d.effective(UP, 0.5).links_down == {LINK}      # up since 0.5
    assert d.effective(UP, 1.4).links_down == {LINK}
    assert d.effective(UP, 1.5) == Verdict()               # 1 s up: back


def test_a_flap_storm_costs_one_change_and_doubles_the_hold_down() -> None:
    d = Damper(hold_s=1.0, max_hold_s=8.0)
    changes, last = 0, Verdict()
    t = 0.0
    for i in range(100):                                   # down/up every 100 ms for 10 s
        now = d.effective(DOWN if i % 2 == 0 else UP, t)
        changes += now != last
        last, t = now, t + 0.1
    assert changes == 1 and last.links_down == {LINK}      # taken out once, kept out
    assert d.hold_of(LINK) == 8.0                          # doubled up to the cap
    # The storm's last sample (t = 9.9 s) said up: 8 s of hold-down from there.
    assert d.effective(UP, 9.9 + 7.9).links_down == {LINK}
    assert d.effective(UP, 9.9 + 8.0) == Verdict()


def test_a_quiet_link_starts_over() -> None:
    d = Damper(hold_s=1.0, flap_window_s=30.0)
    d.effective(DOWN, 0.0)
    d.effective(UP, 0.1)
    d.effective(UP, 1.2)                                   # restored at 1.2
    d.effective(DOWN, 5.0)                                 # a flap within the window
    assert d.hold_of(LINK) == 2.0
    d.effective(UP, 5.1)
    d.effective(UP, 7.2)                                   # restored at 7.2
    d.effective(UP, 40.0)                                  # quiet: forgotten
    d.effective(DOWN, 41.0)
    assert d.hold_of(LINK) == 1.0
