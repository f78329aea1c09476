"""A server that only pretends to be the arena learns no usable credential from any CLI command.

The impostor is a real gRPC server that relays every call, metadata included, to the real arena, so that it
copies every public answer (GetArenaInfo, GetChallenge, ...) and even gets the CLI's calls executed: the worst a
mistyped or stale --server can do. It records every request and every metadata value it sees. Then: no token, and
no key derived from one (the SHA-256 the arena keeps), is in anything it recorded; every signature it recorded is
refused when replayed (its nonce is used up), and refused for any other request or method.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.core import signing
from arena.server import auth
from arena.server.app import ArenaServer
from arena.store import Store
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

TOKEN = "the-admin-token-of-the-real-arena-0123456789"
ARENA = "arena.v1.Arena"


class Impostor(grpc.GenericRpcHandler):
    """Relays every unary call to ``target`` with its metadata, recording (method, request bytes, metadata)."""

    def __init__(self, target: str) -> None:
        self.channel = grpc.insecure_channel(target)
        self.seen: list[tuple[str, bytes, tuple[tuple[str, str], ...]]] = []
        self.lock = threading.Lock()

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        method = details.method
        relay = self.channel.unary_unary(method)

        def handle(request: bytes, context: grpc.ServicerContext) -> bytes:
            metadata = tuple((m.key, m.value if isinstance(m.value, str) else m.value.decode("latin-1"))
                             for m in context.invocation_metadata())
            with self.lock:
                self.seen.append((method, request, metadata))
            try:
                return relay(request, metadata=metadata, timeout=30)
            except grpc.RpcError as exc:
                context.abort(exc.code(), exc.details() or "")

        return grpc.unary_unary_rpc_method_handler(handle)


@pytest.fixture
def real_and_fake(redis_url: str) -> Iterator[tuple[str, str, Impostor]]:
    Store.from_url(redis_url).client.flushdb()
    server = ArenaServer("127.0.0.1:0", redis_url, workers=0, verify_bots=False, admin_token=TOKEN)
    port = server.start()
    real = f"127.0.0.1:{port}"
    impostor = Impostor(real)
    fake = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    fake.add_generic_rpc_handlers((impostor,))
    fake_port = fake.add_insecure_port("127.0.0.1:0")
    fake.start()
    try:
        yield real, f"127.0.0.1:{fake_port}", impostor
    finally:
        fake.stop(0)
        impostor.channel.close()
        server.stop()


def _cli(data_dir: Path, *args: str) -> Any:
    return CliRunner(env={"ARENA_ADMIN_TOKEN": None, "ARENA_TOKEN": None, "ARENA_DATA_DIR": str(data_dir)}).invoke(
        cli, list(args))


def test_an_impostor_that_relays_everything_learns_no_usable_credential(
        real_and_fake: tuple[str, str, Impostor], tmp_path: Path) -> None:
    real, fake, impostor = real_and_fake
    data = tmp_path / "arena"
    with grpc.insecure_channel(real) as channel:
        arena_id = arena_pb2_grpc.ArenaStub(channel).GetArenaInfo(arena_pb2.GetArenaInfoRequest()).arena_id
    auth.save_token(data, auth.SavedToken(TOKEN, arena_id))  # as `arena serve` leaves it for the CLI
    # a bot registered at the real arena: its owner token is saved on this machine
    for name in ("alpha", "beta", "gamma", "delta"):
        done = _cli(data, "bot", "register", name, "127.0.0.1:1", "--game", "take5", "--server", real,
                    "--data-dir", str(data))
        assert done.exit_code == 0, done.output
    saved = _cli(data, "bot", "token", "alpha", "--game", "take5", "--server", real, "--data-dir", str(data),
                 "--json")
    assert saved.exit_code == 0, saved.output
    owner_token = __import__("json").loads(saved.stdout)["token"]
    # every command that needs a credential, pointed at the impostor
    commands = [
        ("bot", "register", "alpha", "127.0.0.1:2", "--game", "take5", "--data-dir", str(data)),
        ("bot", "update", "alpha", "--endpoint", "127.0.0.1:3", "--game", "take5", "--data-dir", str(data)),
        ("tournament", "create", "--game", "take5", "--bots", "alpha,beta,gamma,delta", "--seats", "4"),
        ("ladder", "--rebuild", "--game", "take5"),
        ("bot", "remove", "delta", "--game", "take5", "--data-dir", str(data)),
        ("owner", "show", "--data-dir", str(data)),
        ("owner", "list"),
        ("registration", "set", "--max-names-total", "500"),
    ]
    for command in commands:
        done = _cli(data, *command, "--server", fake)
        assert done.exit_code == 0, (command, done.output)
    tournaments = _cli(data, "tournament", "list", "--json", "--server", real)
    tid = __import__("json").loads(tournaments.stdout)[0]["id"]
    done = _cli(data, "tournament", "cancel", tid, "--server", fake)
    assert done.exit_code == 0, done.output

    secrets_ = [TOKEN, owner_token]
    forbidden = [s.encode() for s in secrets_] + [hashlib.sha256(s.encode()).hexdigest().encode() for s in secrets_]
    signed = []
    for method, request, metadata in impostor.seen:
        blob = request + b"".join(k.encode() + v.encode("latin-1") for k, v in metadata)
        assert not any(f in blob for f in forbidden), method
        assert not any(k == "authorization" for k, _ in metadata), method
        if any(k == signing.SIGNATURE_METADATA for k, _ in metadata):
            signed.append((method, request, metadata))
    methods = {m.rsplit("/", 1)[-1] for m, _, _ in signed}
    # every organiser call the commands made, and every owner call, was signed (so the test saw them all)
    assert {"RegisterBot", "UpdateBot", "RemoveBot", "CreateTournament", "RebuildLadder",
            "CancelTournament", "GetOwner", "ListOwners", "SetRegistration"} <= methods
    # replaying any recorded signed call at the real arena is refused: its nonce is used up
    with grpc.insecure_channel(real) as channel:
        for method, request, metadata in signed:
            call = channel.unary_unary(method)
            with pytest.raises(grpc.RpcError) as caught:
                call(request, metadata=metadata, timeout=10)
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED, method
            assert "signed a call already" in (caught.value.details() or "")


def test_a_signature_covers_its_one_request_and_method(real_and_fake: tuple[str, str, Impostor]) -> None:
    """An impostor that keeps a signature instead of relaying it can use it for nothing else: not another request,
    not another method, not for another arena; and only once."""
    real, _fake, _impostor = real_and_fake
    with grpc.insecure_channel(real) as channel:
        stub = arena_pb2_grpc.ArenaStub(channel)
        challenge = stub.GetChallenge(arena_pb2.GetChallengeRequest())
        assert challenge.arena_id and 0 < challenge.expires_in_ms <= 120_000
        request = arena_pb2.RebuildLadderRequest(game="take5")
        value = signing.sign(TOKEN, admin=True, method=f"/{ARENA}/RebuildLadder", arena_id=challenge.arena_id,
                             nonce=challenge.nonce, request_bytes=request.SerializeToString(deterministic=True))
        metadata = ((signing.SIGNATURE_METADATA, value),)
        for other_call in (lambda: stub.RebuildLadder(arena_pb2.RebuildLadderRequest(game="taki"),
                                                      metadata=metadata, timeout=10),
                           lambda: stub.CancelTournament(arena_pb2.CancelTournamentRequest(id="t1"),
                                                         metadata=metadata, timeout=10)):
            with pytest.raises(grpc.RpcError) as caught:
                other_call()
            assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert "wrong admin token" in (caught.value.details() or "")
        assert stub.RebuildLadder(request, metadata=metadata, timeout=10).equal
        with pytest.raises(grpc.RpcError) as caught:
            stub.RebuildLadder(request, metadata=metadata, timeout=10)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        # a signature for another arena id, a forged nonce, a malformed header
        wrong_arena = signing.sign(TOKEN, admin=True, method=f"/{ARENA}/RebuildLadder", arena_id="0" * 32,
                                   nonce=stub.GetChallenge(arena_pb2.GetChallengeRequest()).nonce,
                                   request_bytes=request.SerializeToString(deterministic=True))
        forged = signing.sign(TOKEN, admin=True, method=f"/{ARENA}/RebuildLadder", arena_id=challenge.arena_id,
                              nonce="19a2b3c4d5e.aaaaaaaaaaaaaaaa." + "0" * 32,
                              request_bytes=request.SerializeToString(deterministic=True))
        for value, code in ((wrong_arena, grpc.StatusCode.PERMISSION_DENIED),
                            (forged, grpc.StatusCode.UNAUTHENTICATED),
                            ("v1 admin nonce", grpc.StatusCode.UNAUTHENTICATED)):
            with pytest.raises(grpc.RpcError) as caught:
                stub.RebuildLadder(request, metadata=((signing.SIGNATURE_METADATA, value),), timeout=10)
            assert caught.value.code() == code, value


def test_a_saved_token_is_not_used_for_another_arena_and_an_old_server_gets_none(
        real_and_fake: tuple[str, str, Impostor], tmp_path: Path) -> None:
    real, _fake, _impostor = real_and_fake
    data = tmp_path / "theirs"
    auth.save_token(data, auth.SavedToken(TOKEN, "f" * 32))  # saved by another arena
    done = _cli(data, "ladder", "--rebuild", "--game", "take5", "--server", real)
    assert done.exit_code == 1
    assert "belongs to another arena (ffffffff)" in done.stderr and "it was not used" in done.stderr
    assert "set ARENA_DATA_DIR to the --data-dir of its `arena serve`" in done.stderr
    assert "(UNAUTHENTICATED)" in done.stderr and TOKEN not in done.output
