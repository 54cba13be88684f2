"""Mutual TLS end to end: `mrc-ctl push` and `p4rt.SwitchConnection` against a `softswitch run`
that serves P4Runtime over TLS and requires a client certificate signed by its CA.

One switch process for the module (a one-switch topology: one T0, one NIC); every client runs
as a user would run it (`mrc-ctl push` is a subprocess). The good client pushes the plan and a
second push writes nothing; a client with no certificate, one with a certificate from another
CA, one that does not trust the server, and a plaintext one are each refused with a one-line
error naming the switch and its address, and exit status 1.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from finsy.proto import p4r
from tls_certs import OPENSSL, Certs, make_certs

from controller.devices.session import Program
from controller.plan.plan import build_plan
from controller.topology import yaml_io
from p4rt import SwitchConnection
from p4rt.errors import P4RuntimeConnectionError, unreachable_error

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"
READY_TIMEOUT = 30.0   # s: a cold `softswitch run` imports grpc
CONNECT_TIMEOUT = 1.0  # s: a refused handshake fails in milliseconds; this bounds each refusal

pytestmark = [
    pytest.mark.skipif(OPENSSL is None, reason="needs the openssl command to make certificates"),
    pytest.mark.skipif(not PROGRAM.is_file(), reason=f"{PROGRAM.name} is not written yet"),
]


@dataclass
class TlsSwitch:
    address: str
    certs: Certs
    p4info: Path
    config: Path
    directory: Path

    def topology(self, name: str, tls: dict[str, Path] | None) -> Path:
        """A one-switch topology whose endpoint is this switch, with `tls` files (or none)."""
        files = "" if tls is None else ", tls: {" + ", ".join(
            f"{key}: {path}" for key, path in tls.items()) + "}"
        path = self.directory / f"{name}.yaml"
        path.write_text(
            f"name: {name}\nplanes: 1\nradix: 2\nswitches:\n"
            f"  - {{name: t0, tier: T0, plane: 0, index: 0,\n"
            f"     endpoint: {{grpc: \"{self.address}\", device_id: 0{files}}}}}\n"
            "nics:\n  - {name: nic0, ports: [t0:0]}\n")
        return path

    def push(self, topology: Path) -> subprocess.CompletedProcess[str]:
        """`mrc-ctl push TOPO` with the compiled program, as a separate process."""
        return subprocess.run(
            [sys.executable, "-m", "controller.cli", "push", str(topology),
             "--p4info", str(self.p4info), "--config", str(self.config),
             "--connect-timeout", str(CONNECT_TIMEOUT)],
            cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)

    def credentials(self, *, ca: Path, cert: Path | None = None,
                    key: Path | None = None) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            ca.read_bytes(), key.read_bytes() if key else None, cert.read_bytes() if cert else None)

    def good_client(self) -> SwitchConnection:
        certs = self.certs
        return SwitchConnection(self.address, 0, (0, 1), credentials=self.credentials(
            ca=certs.ca, cert=certs.client_cert, key=certs.client_key))


@pytest.fixture(scope="module")
def switch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsSwitch]:
    directory = tmp_path_factory.mktemp("tls")
    certs = make_certs(directory / "certs")
    p4info, config = directory / "srv6_switch.p4info.txtpb", directory / "srv6_switch.json"
    subprocess.run([sys.executable, "-m", "softswitch.cli", "compile", str(PROGRAM),
                    "--p4info", str(p4info), "--ir", str(config)],
                   cwd=ROOT, check=True, capture_output=True, timeout=120)
    out = directory / "switch.out"
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "softswitch.cli", "run", "--no-p4", "--device-id", "0",
             "--", "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255",
             "--grpc-server-ssl", "--grpc-server-cacert", str(certs.ca),
             "--grpc-server-cert", str(certs.server_cert),
             "--grpc-server-key", str(certs.server_key), "--grpc-server-with-client-auth"],
            cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        address = ""
        while not address:
            for line in out.read_text(errors="replace").splitlines():
                if "ready: Server listening on" in line:
                    address = "127.0.0.1:" + line.rsplit(":", 1)[1]
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"softswitch run not ready:\n{out.read_text()}")
            time.sleep(0.05)  # polling for the ready line, bounded by the deadline
        yield TlsSwitch(address, certs, p4info, config, directory)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_push_over_mutual_tls_then_nothing_to_write(switch: TlsSwitch) -> None:
    certs = switch.certs
    topology = switch.topology("mtls", {"ca": certs.ca, "cert": certs.client_cert,
                                        "key": certs.client_key})
    first = switch.push(topology)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "1 switch(es), 0 failed" in first.stdout
    planned = [e for e in build_plan(yaml_io.load(topology)).switch("t0") if not e.is_default]
    # The switch started with no program and nothing else in this module writes to it.
    assert "pipeline pushed" in first.stdout
    assert f"+{len(planned)} " in first.stdout
    again = switch.push(topology)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "1 switch(es), 0 failed; entries: +0 ~0 -0" in again.stdout
    assert "pipeline kept" in again.stdout
    # Read back over mutual TLS with the synchronous client: the pushed pipeline and entries.
    with switch.good_client() as conn:
        assert conn.is_primary
        cookie = conn.get_pipeline("COOKIE_ONLY").cookie.cookie
        entries = list(conn.read_raw(p4r.Entity(table_entry=p4r.TableEntry())))
    assert cookie == Program.from_files(switch.p4info, switch.config).cookie
    assert len(entries) == len(planned)


# (the endpoint's tls files, or None for plaintext; what the one error line must say)
REFUSALS: dict[str, tuple[Callable[[Certs], dict[str, Path] | None], str]] = {
    "no-client-cert": (lambda c: {"ca": c.ca},
                       "TLS handshake failed: the server closed the connection: does it require "
                       "a client certificate? (this client sent none)"),
    "rogue-ca-client-cert": (lambda c: {"ca": c.ca, "cert": c.rogue_client_cert,
                                        "key": c.rogue_client_key},
                             "TLS handshake failed: the server refused this client's "
                             "certificate"),
    "server-not-trusted": (lambda c: {"ca": c.rogue_ca, "cert": c.client_cert,
                                      "key": c.client_key},
                           "TLS handshake failed: CERTIFICATE_VERIFY_FAILED"),
    "plaintext": (lambda c: None,
                  "the server closed the connection: does it require TLS? "
                  "(this client is plaintext)"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_push_refused(switch: TlsSwitch, case: str) -> None:
    files, expected = REFUSALS[case]
    topology = switch.topology(case, files(switch.certs))
    done = switch.push(topology)
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stdout
    assert errors[0].startswith(f"error: t0: t0 ({switch.address}, device 0): {expected}"), \
        done.stdout
    assert "1 switch(es), 1 failed; entries: +0 ~0 -0 =0" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    # The switch is up all along: the good client still gets in.
    with switch.good_client() as conn:
        assert conn.is_primary


def test_switch_connection_mutual_tls(switch: TlsSwitch) -> None:
    certs = switch.certs
    with switch.good_client() as conn:
        assert conn.is_primary
        assert conn.capabilities()
    no_cert = SwitchConnection(switch.address, 0, (0, 1),
                               credentials=switch.credentials(ca=certs.ca))
    with pytest.raises(P4RuntimeConnectionError,
                       match=f"cannot reach a P4Runtime server at {switch.address}: "
                             "TLS handshake failed"):
        no_cert.connect(timeout=CONNECT_TIMEOUT)
    rogue = SwitchConnection(switch.address, 0, (0, 1), credentials=switch.credentials(
        ca=certs.ca, cert=certs.rogue_client_cert, key=certs.rogue_client_key))
    with pytest.raises(P4RuntimeConnectionError, match="TLS handshake failed"):
        rogue.connect(timeout=CONNECT_TIMEOUT)
    with pytest.raises(P4RuntimeConnectionError, match="does it require TLS"):
        SwitchConnection(switch.address, 0, (0, 1)).connect(timeout=CONNECT_TIMEOUT)


class _Failed(grpc.RpcError):
    """What a fail-fast RPC on a channel that never became ready raises."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


LAST = "failed to connect to all addresses; last error: "


@pytest.mark.parametrize(("security", "details", "expected"), [
    ("mutual TLS", LAST + "UNKNOWN: ipv4:10.0.0.5:9559: Custom verification check failed with "
     "error: UNAUTHENTICATED: Hostname Verification Check failed.",
     "TLS handshake failed: Custom verification check failed with error: UNAUTHENTICATED: "
     "Hostname Verification Check failed."),
    ("TLS", LAST + "UNKNOWN: ipv6:[::1]:9559: Tls handshake failed (TSI_PROTOCOL_FAILURE): "
     "SSL_ERROR_SSL: error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER: Invalid "
     "certificate verification context: OK",
     "TLS handshake failed: WRONG_VERSION_NUMBER: Invalid certificate verification context "
     "(does the server serve TLS?)"),
    ("plaintext", LAST + "UNKNOWN: ipv4:10.0.0.5:9559: Failed to connect to remote host: "
     "Connection refused", "no P4Runtime server answers within 2 s (connection refused)"),
    ("secure", LAST + "UNAVAILABLE: ipv4:10.0.0.5:9559: Socket closed",
     "TLS handshake failed: the server closed the connection (it refused this client's "
     "certificate, or requires one)"),
])
def test_unreachable_reasons(security: str, details: str, expected: str) -> None:
    """The other causes gRPC reports, without a server (the addresses are never dialled)."""
    error = unreachable_error("sw (10.0.0.5:9559)", 2.0, security,
                              _Failed(grpc.StatusCode.UNAVAILABLE, details))
    assert str(error) == f"sw (10.0.0.5:9559): {expected}"
    assert str(unreachable_error("sw", 2.0, security, None)) == \
        "sw: no P4Runtime server answers within 2 s"
    deadline = _Failed(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
    assert str(unreachable_error("sw", 2.0, security, deadline)) == \
        "sw: no P4Runtime server answers within 2 s"
