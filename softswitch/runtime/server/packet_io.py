"""PacketOut/PacketIn ⇄ raw packets with the ``@controller_header`` header (as PI does).

The header of P4Info's ``controller_packet_metadata`` "packet_out" (or "packet_in") is its
fields packed bit by bit in declaration order, padded with zero bits to whole bytes. A
PacketOut becomes that header followed by the payload (fields the client left out are zero);
a packet the device sends to the CPU port loses that header and its fields become the
PacketIn metadata, in canonical bytestrings. Without such a header the payload travels as is.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from finsy.proto import p4i, p4r

from softswitch.runtime.server import bytestrings
from softswitch.runtime.server.status import RpcError


class _Header:
    """The layout of one controller header: (id, name, bitwidth) per field."""

    def __init__(self, metadata: Sequence[p4i.ControllerPacketMetadata.Metadata]) -> None:
        self.fields = [(m.id, m.name, m.bitwidth) for m in metadata]
        self.bits = sum(width for _, _, width in self.fields)
        self.nbytes = (self.bits + 7) // 8
        self.index = {fid: i for i, (fid, _, _) in enumerate(self.fields)}


class PacketIO:
    """Packet-I/O codec of one P4Info."""

    def __init__(self, p4info: p4i.P4Info) -> None:
        self.packet_out: _Header | None = None
        self.packet_in: _Header | None = None
        for header in p4info.controller_packet_metadata:
            if header.preamble.name == "packet_out":
                self.packet_out = _Header(header.metadata)
            elif header.preamble.name == "packet_in":
                self.packet_in = _Header(header.metadata)

    def encode_packet_out(self, packet: p4r.PacketOut) -> bytes:
        """The raw packet a PacketOut injects; RpcError(INVALID_ARGUMENT) for bad metadata."""
        header = self.packet_out
        if header is None:
            if packet.metadata:
                raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                               "Unexpected metadata in PacketOut message: the P4Info has no "
                               "@controller_header(\"packet_out\") header")
            return packet.payload
        values = [0] * len(header.fields)
        seen: set[int] = set()
        for meta in packet.metadata:
            i = header.index.get(meta.metadata_id)
            if i is None:
                raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                               f"Unknown metadata id {meta.metadata_id} in PacketOut message")
            if meta.metadata_id in seen:
                raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                               f"Metadata id {meta.metadata_id} given twice in PacketOut message")
            seen.add(meta.metadata_id)
            _, name, width = header.fields[i]
            try:
                values[i] = bytestrings.decode(meta.value, width, f"packet_out metadata '{name}'")
            except Exception as exc:
                raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                               getattr(exc, "message", str(exc))) from exc
        word = 0
        for (_, _, width), value in zip(header.fields, values):
            word = (word << width) | value
        word <<= header.nbytes * 8 - header.bits
        return word.to_bytes(header.nbytes, "big") + packet.payload

    def decode_packet_in(self, data: bytes) -> p4r.PacketIn | None:
        """The PacketIn for a packet sent to the CPU port; None if it is shorter than the header."""
        header = self.packet_in
        if header is None:
            return p4r.PacketIn(payload=data)
        if len(data) < header.nbytes:
            return None
        word = int.from_bytes(data[:header.nbytes], "big") >> (header.nbytes * 8 - header.bits)
        metadata = []
        shift = header.bits
        for fid, _, width in header.fields:
            shift -= width
            value = (word >> shift) & ((1 << width) - 1)
            metadata.append(p4r.PacketMetadata(metadata_id=fid,
                                               value=bytestrings.encode(value)))
        return p4r.PacketIn(payload=data[header.nbytes:], metadata=metadata)
