"""Small v1model programs written inline in tests: a fixed pipeline around a test's ingress."""

from __future__ import annotations

from pathlib import Path

from softswitch.compiler import compile_file
from softswitch.engine.switch import Switch

# Parser extracts hdr.h; ingress sends to port 1 and runs %BODY% with %DECLS% as its locals;
# %TOP% is for top-level declarations (sub-controls, functions). The caller's prelude declares
# h_t, headers_t and meta_t.
PIPELINE = """
%TOP%
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    %DECLS%
    apply { sm.egress_spec = 1; %BODY% }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def build_switch(tmp_path: Path, source: str, **switch_options: object) -> Switch:
    """Compile `source` (written to a file, as p4c would read it) into a Switch."""
    path = tmp_path / "prog.p4"
    path.write_text(source)
    return Switch(compile_file(path), **switch_options)  # type: ignore[arg-type]


def ingress_program(prelude: str, body: str, decls: str = "", top: str = "") -> str:
    """`prelude` + the fixed pipeline with the test's ingress body, locals and top-level code."""
    return prelude + PIPELINE.replace("%TOP%", top).replace("%DECLS%", decls).replace(
        "%BODY%", body)
