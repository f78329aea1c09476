"""Optional TLS for the Arena service (issue 8, item 3): `arena serve --tls-cert/--tls-key` serves over TLS and the
CLI talks to it with `--tls-ca` (or ARENA_TLS_CA); a plaintext client gets no answer. The certificate is made here:
with the `cryptography` package when installed, else the `openssl` command; the test is skipped when neither is."""

from __future__ import annotations

import datetime
import ipaddress
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.server.app import ArenaServer
from arena_sdk.pb import arena_pb2, arena_pb2_grpc


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 / localhost and its key, as PEM files in ``folder``."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        if shutil.which("openssl") is None:
            pytest.skip("neither the cryptography package nor the openssl command is available to make a certificate")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "2", "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert),
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
        return cert, key
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(private.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                    x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                       critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return cert, key


@pytest.fixture
def tls_arena(redis_url: str, tmp_path: Path) -> Iterator[tuple[str, Path, ArenaServer]]:
    cert, key = _self_signed(tmp_path)
    server = ArenaServer("127.0.0.1:0", redis_url, workers=0, verify_bots=False,
                         tls=(cert.read_bytes(), key.read_bytes()))
    port = server.start()
    try:
        yield f"127.0.0.1:{port}", cert, server
    finally:
        server.stop()


def test_the_cli_reads_and_organises_over_tls(tls_arena: tuple[str, Path, ArenaServer]) -> None:
    address, cert, server = tls_arena
    env = {"ARENA_ADMIN_TOKEN": server.admin_token, "ARENA_TLS_CA": str(cert)}
    result = CliRunner(env=env).invoke(cli, ["ladder", "--rebuild", "--json", "--server", address])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["equal"] is True
    result = CliRunner(env={"ARENA_TLS_CA": None}).invoke(cli, ["--tls-ca", str(cert), "ladder", "--json",
                                                                "--server", address])
    assert result.exit_code == 0, result.output
    # a plaintext client gets no answer from a TLS port
    with grpc.insecure_channel(address) as channel, pytest.raises(grpc.RpcError) as excinfo:
        arena_pb2_grpc.ArenaStub(channel).GetLadder(arena_pb2.GetLadderRequest(game="take5"), timeout=3)
    assert excinfo.value.code() == grpc.StatusCode.UNAVAILABLE


def test_serve_takes_a_certificate_with_its_key(tmp_path: Path) -> None:
    cert = tmp_path / "cert.pem"
    cert.write_text("not used")
    result = CliRunner(env={"ARENA_ADMIN_TOKEN": None}).invoke(
        cli, ["serve", "--tls-cert", str(cert), "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 1
    assert result.stderr.strip() == "Error: --tls-cert and --tls-key go together: give both (PEM files) or neither"


def test_a_tls_mix_up_says_what_to_change(tls_arena: tuple[str, Path, ArenaServer], redis_url: str) -> None:
    """The CLI without --tls-ca at a TLS arena is told it speaks TLS; with --tls-ca at a plaintext arena, that the
    arena speaks no TLS: never "not an arena referee" nor grpc core's raw handshake error alone."""
    address, cert, _server = tls_arena
    plain = CliRunner(env={"ARENA_TLS_CA": None}).invoke(cli, ["ladder", "--server", address])
    assert plain.exit_code == 1
    assert f"the server at {address} speaks TLS: give the CLI the CA that signed its certificate with --tls-ca" \
        in plain.stderr, plain.stderr
    server = ArenaServer("127.0.0.1:0", redis_url, workers=0, verify_bots=False)
    port = server.start()
    try:
        mixed = CliRunner(env={"ARENA_TLS_CA": str(cert)}).invoke(cli, ["ladder", "--server", f"127.0.0.1:{port}"])
    finally:
        server.stop()
    assert mixed.exit_code == 1
    assert f"no TLS with the server at 127.0.0.1:{port} (" in mixed.stderr, mixed.stderr
    assert "a plaintext arena needs no --tls-ca" in mixed.stderr, mixed.stderr
