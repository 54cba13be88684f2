"""Packet ports: nanomsg framing against a PTF-side peer, port routing, pcap taps, AF_PACKET."""

from __future__ import annotations

import os
import queue
import shutil
import struct
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pynng
import pytest
from scapy.utils import rdpcap

from softswitch.runtime.ports import PortError, PortMap
from softswitch.runtime.ports.afpacket import (
    PACKET_AUXDATA,
    SOL_PACKET,
    TP_STATUS_VLAN_VALID,
    TPACKET_AUXDATA,
    restore_vlan_tag,
)
from softswitch.runtime.ports.nanomsg import (
    HEADER,
    MsgType,
    NanomsgPorts,
    decode,
    encode,
    packet_in,
    packet_out,
)
from softswitch.runtime.ports.pcap import PcapTap, PcapWriter

FRAME = bytes.fromhex("ffffffffffff 020000000001 88b5") + b"softswitch port test"


# --- nanomsg framing -----------------------------------------------------------------------


def test_header_is_three_little_endian_int32() -> None:
    message = packet_in(7, b"\xaa\xbb")
    assert message == struct.pack("<iii", 3, 7, 2) + b"\xaa\xbb"
    assert packet_out(300, b"xyz")[:HEADER.size] == struct.pack("<iii", 4, 300, 3)


def test_decode_round_trip_and_short_message() -> None:
    msg = decode(encode(MsgType.PORT_SET_STATUS, 5, 1))
    assert (msg.type, msg.port, msg.more, msg.payload) == (2, 5, 1, b"")
    msg = decode(packet_out(9, FRAME))
    assert (msg.type, msg.port, msg.more, msg.payload) == (4, 9, len(FRAME), FRAME)
    with pytest.raises(ValueError, match="shorter than the header"):
        decode(b"\x03\x00\x00\x00")


class PtfPeer:
    """The PTF `nn` platform's side: dials the switch and speaks <type, port, more> messages."""

    def __init__(self, address: str) -> None:
        self.socket = pynng.Pair0(recv_timeout=2000, send_timeout=2000)
        self.socket.dial(address, block=True)

    def send(self, msg_type: int, port: int, more: int, payload: bytes = b"") -> None:
        self.socket.send(encode(msg_type, port, more, payload))

    def recv(self) -> tuple[int, int, int, bytes]:
        msg = decode(self.socket.recv())
        return msg.type, msg.port, msg.more, msg.payload

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def nn_switch(tmp_path: Path) -> Iterator[tuple[NanomsgPorts, PtfPeer, queue.Queue]]:
    address = f"ipc://{tmp_path}/switch.ipc"
    ports = NanomsgPorts(address)
    received: queue.Queue[tuple[int, bytes]] = queue.Queue()
    ports.start(lambda port, data: received.put((port, data)))
    peer = PtfPeer(address)
    yield ports, peer, received
    peer.close()
    ports.close()


def test_packet_in_reaches_the_device_and_packet_out_reaches_the_peer(nn_switch) -> None:
    ports, peer, received = nn_switch
    peer.send(MsgType.PORT_ADD, 1, 0)
    peer.send(MsgType.PACKET_IN, 1, len(FRAME), FRAME)
    assert received.get(timeout=2) == (1, FRAME)
    # BMv2 does not enforce ports: a packet on a port never added is received too
    peer.send(MsgType.PACKET_IN, 42, 3, b"abc")
    assert received.get(timeout=2) == (42, b"abc")

    ports.send(2, FRAME)
    assert peer.recv() == (MsgType.PACKET_OUT, 2, len(FRAME), FRAME)


def test_info_request_is_answered_not_supported(nn_switch) -> None:
    _, peer, _ = nn_switch
    peer.send(MsgType.INFO_REQ, 3, 0)  # PTF's MAC address request
    msg_type, port, more, payload = peer.recv()
    assert (msg_type, port, more) == (MsgType.INFO_REP, 3, 0)
    assert struct.unpack("<i", payload) == (1,)  # MSG_INFO_STATUS_NOT_SUPPORTED


def test_port_messages_are_tracked(nn_switch) -> None:
    ports, peer, received = nn_switch
    peer.send(MsgType.PORT_ADD, 1, 0)
    peer.send(MsgType.PORT_ADD, 2, 0)
    peer.send(MsgType.PORT_SET_STATUS, 2, 0)  # BMv2 numbering: 0 = down
    peer.send(MsgType.PORT_REMOVE, 1, 0)
    peer.send(MsgType.PACKET_IN, 9, 1, b"!")  # a marker: everything before it is handled
    assert received.get(timeout=2) == (9, b"!")
    assert ports.port_status() == {2: False}


def test_malformed_messages_do_not_stop_the_receiver(nn_switch) -> None:
    _, peer, received = nn_switch
    peer.socket.send(b"\x01\x02")  # shorter than a header
    peer.send(MsgType.PACKET_IN, 1, 100, b"short")  # length larger than the data
    peer.send(MsgType.PACKET_OUT, 1, 0)  # only the switch sends these
    peer.send(99, 1, 0)
    peer.send(MsgType.PACKET_IN, 1, 2, b"okEXTRA")  # extra bytes after `more` are cut
    assert received.get(timeout=2) == (1, b"ok")
    assert received.empty()


def test_an_empty_message_is_skipped_and_the_next_frame_received(nn_switch) -> None:
    ports, peer, received = nn_switch
    peer.socket.send(b"")  # pynng cannot even unpack this one
    peer.socket.send(b"")
    peer.send(MsgType.PACKET_IN, 1, 2, b"ok")
    assert received.get(timeout=2) == (1, b"ok")
    assert ports.bad_messages == 2


def test_a_failing_device_does_not_stop_the_receiver(tmp_path: Path) -> None:
    address = f"ipc://{tmp_path}/fail.ipc"
    ports = NanomsgPorts(address)
    received: queue.Queue[bytes] = queue.Queue()

    def receive(port: int, data: bytes) -> None:
        if data == b"boom":
            raise RuntimeError("device failure")
        received.put(data)

    ports.start(receive)
    peer = PtfPeer(address)
    try:
        peer.send(MsgType.PACKET_IN, 1, 4, b"boom")
        peer.send(MsgType.PACKET_IN, 1, 4, b"fine")
        assert received.get(timeout=2) == b"fine"
    finally:
        peer.close()
        ports.close()


def test_bad_address_is_a_port_error() -> None:
    with pytest.raises(PortError, match="cannot listen on"):
        NanomsgPorts("bogus://nowhere")


def test_ptf_nn_packet_source_interoperates(tmp_path: Path) -> None:
    """PTF's own `nn` platform class (as `ptf --platform nn` uses it) against our socket."""
    dataplane = pytest.importorskip("ptf.dataplane")
    address = f"ipc://{tmp_path}/ptf.ipc"
    ports = NanomsgPorts(address)
    received: queue.Queue[tuple[int, bytes]] = queue.Queue()
    ports.start(lambda port, data: received.put((port, data)))
    source = dataplane.DataPlanePacketSourceNN(0, address, 2000, 2000)
    try:
        source.port_add(3)
        assert source.send(3, FRAME) == len(FRAME)
        assert received.get(timeout=2) == (3, FRAME)
        ports.send(3, FRAME[::-1])
        device, port, data, _ = source.recv()
        assert (device, port, data) == (0, 3, FRAME[::-1])
        # get_mac waits for the INFO_REP that PTF's dataplane thread passes to recv()
        macs: list[object] = []
        asker = threading.Thread(target=lambda: macs.append(source.get_mac(3, timeout=5)))
        asker.start()
        assert source.recv() is None  # an INFO_REP, not a packet
        asker.join(timeout=5)
        assert macs == [None]  # NOT_SUPPORTED, as BMv2 answers
        assert source.mac_addresses == {3: None}
    finally:
        source.close()
        ports.close()


# --- PortMap ---------------------------------------------------------------------------------


class FakeBackend:
    def __init__(self) -> None:
        self.sent: list[tuple[int, bytes]] = []
        self.receive = None
        self.closed = False

    def start(self, receive) -> None:
        self.receive = receive

    def send(self, port: int, data: bytes) -> None:
        if data == b"fail":
            raise OSError("link down")
        self.sent.append((port, data))

    def close(self) -> None:
        self.closed = True


class ListTap:
    def __init__(self) -> None:
        self.rx: list[bytes] = []
        self.tx: list[bytes] = []
        self.closed = False

    def received(self, data: bytes) -> None:
        self.rx.append(data)

    def sent(self, data: bytes) -> None:
        self.tx.append(data)

    def close(self) -> None:
        self.closed = True


def test_port_map_routes_output_and_input() -> None:
    one, other, rest = FakeBackend(), FakeBackend(), FakeBackend()
    ports = PortMap()
    ports.add(one, [1])
    ports.add(other, [2, 3])
    ports.add(rest)
    tap = ListTap()
    ports.add_tap(2, tap)
    got: list[tuple[int, bytes]] = []
    ports.start(lambda port, data: got.append((port, data)))

    for port in (1, 2, 3, 7):
        ports.send(port, bytes([port]))
    assert one.sent == [(1, b"\x01")]
    assert other.sent == [(2, b"\x02"), (3, b"\x03")]
    assert rest.sent == [(7, b"\x07")]
    ports.send(1, b"fail")  # a backend error is logged, not raised into the dataplane

    other.receive(2, b"in")
    assert got == [(2, b"in")]
    assert (tap.rx, tap.tx) == ([b"in"], [b"\x02"])
    assert ports.ports() == [1, 2, 3]

    ports.close()
    ports.close()
    assert one.closed and other.closed and rest.closed and tap.closed


def test_port_map_without_default_drops_unknown_ports() -> None:
    backend = FakeBackend()
    ports = PortMap()
    ports.add(backend, [1])
    ports.send(5, b"x")
    assert backend.sent == []
    with pytest.raises(PortError, match="attached twice"):
        ports.add(FakeBackend(), [1])
    ports.add(FakeBackend())
    with pytest.raises(PortError, match="every port"):
        ports.add(FakeBackend())


def test_tap_factory_makes_one_tap_per_port() -> None:
    made: dict[int, ListTap] = {}

    def factory(port: int) -> ListTap:
        made[port] = ListTap()
        return made[port]

    ports = PortMap()
    ports.add(FakeBackend())
    ports.set_tap_factory(factory)
    ports.send(4, b"a")
    ports.send(4, b"b")
    ports.send(6, b"c")
    assert sorted(made) == [4, 6]
    assert made[4].tx == [b"a", b"b"] and made[6].tx == [b"c"]
    ports.close()
    assert all(tap.closed for tap in made.values())


class FailingTap(ListTap):
    def received(self, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    sent = received


def test_a_failing_capture_is_stopped_and_costs_no_packet() -> None:
    backend, good, bad = FakeBackend(), ListTap(), FailingTap()
    ports = PortMap()
    ports.add(backend)
    ports.add_tap(3, bad)
    ports.add_tap(3, good)
    got: list[tuple[int, bytes]] = []
    ports.start(lambda port, data: got.append((port, data)))
    backend.receive(3, b"in1")
    backend.receive(3, b"in2")
    ports.send(3, b"out")
    assert got == [(3, b"in1"), (3, b"in2")] and backend.sent == [(3, b"out")]
    assert bad.closed and not good.closed  # the failed capture is closed, the other goes on
    assert (good.rx, good.tx) == ([b"in1", b"in2"], [b"out"])
    ports.close()


# --- pcap ------------------------------------------------------------------------------------


def test_pcap_tap_files_are_readable_by_scapy(tmp_path: Path) -> None:
    times = iter([1700000000.25, 1700000001.5, 1700000002.75])
    tap = PcapTap(tmp_path, "veth1", clock=lambda: next(times))
    tap.received(FRAME)
    tap.sent(FRAME + b"!")
    tap.sent(b"\x00" * 70000)  # longer than the snaplen: cut, original length kept
    # readable while open: every packet is flushed
    assert bytes(rdpcap(str(tmp_path / "veth1_in.pcap"))[0]) == FRAME
    tap.close()

    outs = rdpcap(str(tmp_path / "veth1_out.pcap"))
    assert [len(bytes(p)) for p in outs] == [len(FRAME) + 1, 65535]
    assert bytes(outs[0]) == FRAME + b"!"
    assert float(outs[0].time) == pytest.approx(1700000001.5)
    assert outs[1].wirelen == 70000


def test_pcap_writer_reports_unwritable_path(tmp_path: Path) -> None:
    with pytest.raises(PortError, match="cannot write pcap file"):
        PcapWriter(tmp_path / "missing" / "x.pcap")


# --- AF_PACKET -------------------------------------------------------------------------------


def test_vlan_tag_from_auxdata_is_put_back() -> None:
    aux = TPACKET_AUXDATA.pack(TP_STATUS_VLAN_VALID, 0, 0, 0, 0, 0x2064, 0)
    tagged = restore_vlan_tag(FRAME, [(SOL_PACKET, PACKET_AUXDATA, aux)])
    assert tagged == FRAME[:12] + bytes.fromhex("81002064") + FRAME[12:]
    untagged = TPACKET_AUXDATA.pack(0, 0, 0, 0, 0, 0, 0)
    assert restore_vlan_tag(FRAME, [(SOL_PACKET, PACKET_AUXDATA, untagged)]) == FRAME
    assert restore_vlan_tag(FRAME, []) == FRAME


AF_PACKET_SCRIPT = textwrap.dedent("""
    import queue, socket, sys
    from softswitch.runtime.ports.afpacket import AfPacketPort
    frame = bytes.fromhex(sys.argv[1])
    got = queue.Queue()
    port = AfPacketPort(5, "ssa")
    port.start(lambda p, data: got.put((p, data)))
    peer = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    peer.bind(("ssb", 0))
    peer.settimeout(2)
    def mine(data):  # ignore the kernel's own traffic on the link
        return data[12:14] == frame[12:14]
    peer.send(frame)
    p, data = got.get(timeout=2)
    while not mine(data):
        p, data = got.get(timeout=2)
    assert (p, data) == (5, frame), (p, data)
    port.send(5, frame[:12] + frame[12:14] + b"reply")
    data = peer.recv(2048)
    while not mine(data):
        data = peer.recv(2048)
    assert data[14:19] == b"reply", data
    # a VLAN tag the kernel strips into metadata (VLAN offload) is put back
    tagged = frame[:12] + bytes.fromhex("81000064") + frame[12:]
    peer.send(tagged)
    p, data = got.get(timeout=2)
    while data[16:18] != frame[12:14]:
        p, data = got.get(timeout=2)
    assert (p, data) == (5, tagged), (p, data)
    # the frame the port itself sent is not seen as input
    try:
        while True:
            p, data = got.get(timeout=0.3)
            assert not mine(data), data
    except queue.Empty:
        pass
    port.close()
    print("ok")
""")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                    reason="AF_PACKET needs root and iproute2")
def test_af_packet_port_on_a_veth_pair() -> None:
    ns = f"sstest-{uuid.uuid4().hex[:8]}"
    try:
        subprocess.run(["ip", "netns", "add", ns], check=True)
    except subprocess.CalledProcessError:
        pytest.skip("cannot create a network namespace here")
    try:
        for cmd in (["link", "add", "ssa", "type", "veth", "peer", "name", "ssb"],
                    ["link", "set", "ssa", "up"], ["link", "set", "ssb", "up"]):
            subprocess.run(["ip", "-n", ns, *cmd], check=True)
        root = Path(__file__).resolve().parents[2]
        result = subprocess.run(
            ["ip", "netns", "exec", ns, sys.executable, "-c", AF_PACKET_SCRIPT, FRAME.hex()],
            capture_output=True, text=True, timeout=20, cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)})
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "ok"
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


def test_missing_interface_is_a_port_error() -> None:
    from softswitch.runtime.ports.afpacket import AfPacketPort

    with pytest.raises(PortError, match="no such interface"):
        AfPacketPort(1, "nonexistent-if0")
