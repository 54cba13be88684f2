"""The emulation benchmark's time by component (bench/emulation.py): the compiled transport's
methods, C to cProfile, and the native fabric core are charged where they belong, not to the
loop that calls them or to setup."""

from __future__ import annotations

import pytest

from bench.emulation import _component


@pytest.mark.parametrize(("filename", "function", "component"), [
    ("~", "<method 'poll' of 'NicHost' objects>", "mrc_transport"),
    ("~", "<method 'on_frame' of 'NicHost' objects>", "mrc_transport"),
    ("~", "<method 'write' of 'Sender' objects>", "mrc_transport"),
    ("~", "<method 'append' of 'list' objects>", None),   # its callers' component
    ("/r/softswitch/native/fabric_core.py", "_run", "device/queues/fabric"),
    ("/r/softswitch/native/fabric_device.py", "receive", "device/queues/fabric"),
    ("/r/softswitch/schedule.py", "wake", "device/queues/fabric"),
    ("/r/softswitch/native/pipeline.py", "process", "softswitch engine/pipeline"),
    ("/r/softswitch/frontend/parser.py", "parse", "compile"),
    ("/r/mrc_transport/sender.py", "poll", "mrc_transport"),
    ("/r/emulation/run.py", "_settle", "emulation loop"),
])
def test_each_kind_of_frame_is_charged_to_its_component(filename: str, function: str,
                                                        component: str | None) -> None:
    assert _component(filename, function) == component
