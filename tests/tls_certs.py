"""Test certificates made with the openssl command: a CA, a server and a client it signed, and a
rogue CA with a client of its own (for mutual TLS tests; `make_certs(directory)`)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

OPENSSL = shutil.which("openssl")

# P-256 keys: made in milliseconds, unlike RSA, and every gRPC build accepts them.
_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


@dataclass(frozen=True)
class Certs:
    """PEM files: `ca` signed `server_*` (for 127.0.0.1 and localhost) and `client_*`;
    `rogue_ca`, unrelated to `ca`, signed `rogue_client_*`."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    rogue_ca: Path
    rogue_client_cert: Path
    rogue_client_key: Path


def _openssl(*args: str | Path) -> None:
    assert OPENSSL is not None, "the openssl command is needed to make test certificates"
    done = subprocess.run([OPENSSL, *map(str, args)], capture_output=True, text=True,
                          timeout=30, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(map(str, args))} failed:\n{done.stderr}")


def _ca(directory: Path, name: str) -> tuple[Path, Path]:
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    _openssl("req", "-x509", *_KEY, "-days", "2", "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             "-keyout", key, "-out", cert)
    return cert, key


def _signed(directory: Path, name: str, ca: tuple[Path, Path], extensions: str) -> tuple[Path, Path]:
    cert, key, csr = (directory / f"{name}.pem", directory / f"{name}.key",
                      directory / f"{name}.csr")
    ext = directory / f"{name}.ext"
    ext.write_text(extensions + "\n")
    _openssl("req", "-new", *_KEY, "-subj", f"/CN={name}", "-keyout", key, "-out", csr)
    _openssl("x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], "-CAcreateserial",
             "-days", "2", "-extfile", ext, "-out", cert)
    return cert, key


def make_certs(directory: Path) -> Certs:
    """Write every certificate and key of `Certs` into `directory` (about 0.1 s)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = _ca(directory, "ca")
    server = _signed(directory, "server", ca,
                     "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                     "extendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE")
    client = _signed(directory, "client", ca,
                     "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE")
    rogue = _ca(directory, "rogue-ca")
    rogue_client = _signed(directory, "rogue-client", rogue,
                           "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE")
    return Certs(ca[0], *server, *client, rogue[0], *rogue_client)
