"""Optional TLS for calls to bots (issue 8, item 3) on real processes: a bot started with ``--tls-cert/--tls-key``
serves TLS only (a plaintext client gets no answer) and prints its ``tls://`` endpoint; the arena registers it
there, verifying its certificate against the CA bundle the operator gives (``bot_ca``), and plays it through the
queue like any bot; a bot whose certificate the arena does not trust is refused at registration with a message that
says what to check. The certificates are made here with the ``cryptography`` package."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner
from cryptography import x509  # a dev dependency: without it the test fails, never skips
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from platform_helpers import rpc_error, wait_until

from arena.cli import cli
from arena.match.channels import BotChannels, BotDialer, split_endpoint
from arena.match.record import SeatSpec
from arena.match.referee import run_match
from arena.store import Store
from arena.worker.health import probe
from arena_sdk.games.take5 import Take5Config
from arena_sdk.pb import arena_pb2, bot_pb2, bot_pb2_grpc


def _name(common: str) -> Any:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem_key(key: Any) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def make_ca(folder: Path, common: str) -> tuple[Path, Any, Any]:
    """A CA certificate (PEM file in ``folder``), its certificate object and key."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(_name(common)).issuer_name(_name(common))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(key, hashes.SHA256()))
    path = folder / f"{common}.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path, cert, key


def make_leaf(folder: Path, common: str, ca_cert: Any, ca_key: Any) -> tuple[Path, Path]:
    """A bot certificate for 127.0.0.1 and localhost signed by the CA, and its key (PEM files)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(_name(common)).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    cert_path, key_path = folder / f"{common}.crt", folder / f"{common}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(_pem_key(key))
    return cert_path, key_path


@pytest.fixture
def pki(tmp_path: Path) -> dict[str, Path]:
    """The arena's CA and a bot certificate it signed; a rogue CA and a bot certificate that one signed."""
    ca, ca_cert, ca_key = make_ca(tmp_path, "arena-ca")
    cert, key = make_leaf(tmp_path, "tls-bot", ca_cert, ca_key)
    _, rogue_cert, rogue_key = make_ca(tmp_path, "rogue-ca")
    rogue, rogue_key_path = make_leaf(tmp_path, "rogue-bot", rogue_cert, rogue_key)
    return {"ca": ca, "cert": cert, "key": key, "rogue_cert": rogue, "rogue_key": rogue_key_path}


def _tls_bot(start_bot: Callable[..., Any], cert: Path, key: Path, name: str = "tls-bot") -> Any:
    return start_bot("sample:random", extra_args=["--tls-cert", str(cert), "--tls-key", str(key), "--name", name])


def _register(stub: Any, name: str, endpoint: str) -> arena_pb2.BotRecord:
    return stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=endpoint, game="take5"))


def test_a_tls_bot_is_registered_and_plays_a_tournament_through_the_queue(
        pki: dict[str, Path], start_bot: Callable[..., Any], arena_server: Any, store: Store) -> None:
    bot = _tls_bot(start_bot, pki["cert"], pki["key"])
    target, tls = split_endpoint(bot.endpoint)
    assert tls and bot.endpoint == f"tls://{target}"  # its ready line gives the endpoint to register
    with grpc.insecure_channel(target) as channel:  # a plaintext client gets no answer
        code, _ = rpc_error(lambda: bot_pb2_grpc.BotStub(channel).GetInfo(bot_pb2.GetInfoRequest(), timeout=3))
    assert code == grpc.StatusCode.UNAVAILABLE
    plain = start_bot("sample:random", extra_args=["--name", "plain-bot"])

    _, stub = arena_server(bot_ca=pki["ca"].read_bytes(), workers=1, concurrency=2)
    record = _register(stub, "tls-bot", bot.endpoint)
    assert (record.endpoint, record.version) == (bot.endpoint, "1.0")
    _register(stub, "plain-bot", plain.endpoint)
    listed = stub.ListBots(arena_pb2.ListBotsRequest(game="take5", check_endpoints=True)).bots
    assert {(b.name, b.endpoint_checked, b.endpoint_problem) for b in listed} == {
        ("tls-bot", True, ""), ("plain-bot", True, "")}
    created = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["tls-bot", "plain-bot"], seats_per_match=2, rounds=3,
        config=bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=20))))
    info = wait_until(lambda: (t := store.get_tournament(created.id)) and t.state == "finished" and t,
                      "the tournament over TLS to finish")
    assert (info.matches_done, info.matches_failed) == (3, 0)
    matches = stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=created.id)).matches
    assert len(matches) == 3
    for match in matches:  # every call to the TLS bot was answered: no fault in any match
        assert list(match.faults) == [0, 0], match


def test_a_bot_whose_certificate_is_not_trusted_is_refused_at_registration(
        pki: dict[str, Path], start_bot: Callable[..., Any], arena_server: Any) -> None:
    rogue = _tls_bot(start_bot, pki["rogue_cert"], pki["rogue_key"], "rogue")
    trusted = _tls_bot(start_bot, pki["cert"], pki["key"])
    plain = start_bot("sample:random", extra_args=["--name", "rogue"])
    _, stub = arena_server(bot_ca=pki["ca"].read_bytes())
    for endpoint in (rogue.endpoint, f"tls://{plain.endpoint}"):  # signed by another CA; no TLS at all
        code, details = rpc_error(lambda e=endpoint: _register(stub, "rogue", e))  # type: ignore[misc]
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert details.startswith(f"no arena bot answered GetInfo at {endpoint} within ")
        assert "its certificate names that host and is signed by a CA the arena trusts" in details
        assert "--bot-ca FILE" in details
    code, details = rpc_error(lambda: _register(stub, "tls-bot", split_endpoint(trusted.endpoint)[0]))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "certificate" not in details  # plaintext to a TLS bot
    # without the arena's CA (the system's roots), the trusted bot is refused too
    _, no_ca = arena_server()
    code, details = rpc_error(lambda: _register(no_ca, "tls-bot", trusted.endpoint))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "--bot-ca FILE" in details
    assert _register(stub, "tls-bot", trusted.endpoint).endpoint == trusted.endpoint


def test_the_referee_and_the_health_probe_dial_tls_with_the_ca(
        pki: dict[str, Path], start_bot: Callable[..., Any]) -> None:
    bot = _tls_bot(start_bot, pki["cert"], pki["key"])
    other = start_bot("sample:random")
    seats = [SeatSpec("tls-bot", bot.endpoint), SeatSpec("plain", other.endpoint)]
    dialer = BotDialer(pki["ca"].read_bytes())

    async def scenario() -> tuple[Any, Any, str | None, str | None, int]:
        pool = BotChannels(dialer)
        try:
            trusted = await run_match("tls-0", "take5", seats, Take5Config(limit=1), seed=3, channels=pool)
            # one address, two credentials: the plaintext and the TLS endpoint never share a channel
            leases = [pool.lease(bot.endpoint), pool.lease(split_endpoint(bot.endpoint)[0])]
            distinct = len({id(lease.stub) for lease in leases})
            for lease in leases:
                pool.release(lease)
        finally:
            await pool.close()
        untrusted = await run_match("tls-1", "take5", seats, Take5Config(limit=1), seed=3)  # system roots
        return (trusted, untrusted, await probe(bot.endpoint, 3.0, dialer), await probe(bot.endpoint, 3.0),
                distinct)

    trusted, untrusted, probed, probed_without_ca, distinct = asyncio.run(scenario())
    assert trusted.faults == ()
    assert untrusted.faults and {f.seat for f in untrusted.faults} == {0}
    assert {f.kind for f in untrusted.faults} == {"unreachable"}
    assert probed is None and probed_without_ca is not None and probed_without_ca.startswith("UNAVAILABLE")
    assert distinct == 2


def test_bad_tls_files_stop_the_bot_and_the_arena_with_a_message(pki: dict[str, Path], tmp_path: Path) -> None:
    base = [sys.executable, "-m", "sample_bots.random_bot", "--port", "0"]
    half = subprocess.run([*base, "--tls-cert", str(pki["cert"])], capture_output=True, text=True, timeout=60)
    assert half.returncode == 2
    assert half.stderr.strip().endswith("error: --tls-cert and --tls-key go together: give both (PEM files) or neither")
    swapped = subprocess.run([*base, "--tls-cert", str(pki["key"]), "--tls-key", str(pki["cert"])],
                             capture_output=True, text=True, timeout=60)
    assert swapped.returncode == 2 and "TLS needs a PEM certificate chain" in swapped.stderr
    not_pem = tmp_path / "not-a-ca.pem"
    not_pem.write_text("hello")
    result = CliRunner().invoke(cli, ["worker", "--bot-ca", str(not_pem), "--redis-url", "redis://127.0.0.1:1/0"])
    assert result.exit_code == 2
    assert "holds no PEM certificate" in result.output
