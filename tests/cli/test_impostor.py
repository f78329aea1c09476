"""A server that only pretends to be the arena learns no usable credential from any CLI command, and reads neither
a bot secret nor a new owner token (the sealed fields).

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
from arena.core import sealing, signing
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
        self.answers: list[tuple[str, bytes]] = []  # (method, answer bytes) of every call relayed
        self.lock = threading.Lock()
        # an active impostor changes what it relays: (method name, request bytes) -> request bytes, and the same of
        # the answers
        self.rewrite_request: Any = None
        self.rewrite_answer: Any = None

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        method = details.method
        relay = self.channel.unary_unary(method)

        def handle(request: bytes, context: grpc.ServicerContext) -> bytes:
            metadata = tuple((m.key, m.value if isinstance(m.value, str) else m.value.decode("latin-1"))
                             for m in context.invocation_metadata())
            with self.lock:
                self.seen.append((method, request, metadata))
            short = method.rsplit("/", 1)[-1]
            if self.rewrite_request is not None:
                request = self.rewrite_request(short, request)
            try:
                answer = relay(request, metadata=metadata, timeout=30)
            except grpc.RpcError as exc:
                context.abort(exc.code(), exc.details() or "")
            with self.lock:
                self.answers.append((method, answer))
            return self.rewrite_answer(short, answer) if self.rewrite_answer is not None else answer

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


def test_an_impostor_relaying_registrations_reads_no_bot_secret_and_no_new_owner_token(
        real_and_fake: tuple[str, str, Impostor], redis_url: str, tmp_path: Path) -> None:
    """The two secrets that do travel are sealed to the arena's key (``arena.core.sealing``): a first registration
    with a bot secret, an update with a new one, and an owner created by the organiser, all relayed: the relay
    recorded neither the secrets nor the new tokens, in any request or answer, and the arena got them whole."""
    import json

    real, fake, impostor = real_and_fake
    data = tmp_path / "arena"
    with grpc.insecure_channel(real) as channel:
        arena_id = arena_pb2_grpc.ArenaStub(channel).GetArenaInfo(arena_pb2.GetArenaInfoRequest()).arena_id
    auth.save_token(data, auth.SavedToken(TOKEN, arena_id))
    first, second = "first-secret-0123456789abcdef", "second-secret-0123456789abcdef"
    done = _cli(data, "bot", "register", "sealed", "127.0.0.1:5", "--game", "take5", "--bot-secret", first,
                "--data-dir", str(data), "--server", fake)
    assert done.exit_code == 0, done.output
    done = _cli(data, "bot", "update", "sealed", "127.0.0.1:6", "--game", "take5", "--bot-secret", second,
                "--data-dir", str(data), "--server", fake)
    assert done.exit_code == 0, done.output
    created = _cli(data, "owner", "create", "team", "--json", "--data-dir", str(data), "--server", fake)
    assert created.exit_code == 0, created.output
    team_token = json.loads(created.stdout)["owner_token"]
    saved = _cli(data, "bot", "token", "sealed", "--game", "take5", "--json", "--data-dir", str(data),
                 "--server", real)
    bot_token = json.loads(saved.stdout)["token"]
    store = Store.from_url(redis_url)
    entry = store.get_bot("take5", "sealed")
    assert entry is not None and entry.secret == second and entry.endpoint == "127.0.0.1:6"
    assert store.owner_hash("take5", "sealed") == signing.token_hash(bot_token)  # the token saved is the owner's
    assert {"RegisterBot", "UpdateBot", "CreateOwner"} <= {m.rsplit("/", 1)[-1] for m, _ in impostor.answers}
    recorded = b"".join(request + b"".join(k.encode() + v.encode("latin-1") for k, v in metadata)
                        for _, request, metadata in impostor.seen) + b"".join(a for _, a in impostor.answers)
    for secret in (first, second, bot_token, team_token):
        assert secret.encode() not in recorded


def test_a_server_presenting_another_seal_key_for_a_pinned_arena_gets_nothing(
        real_and_fake: tuple[str, str, Impostor], redis_url: str, tmp_path: Path) -> None:
    """The CLI pins an arena's seal key the first time it seals to it; a server that later says it is that arena
    but presents another key is refused before any secret leaves, with what to do."""
    from arena.store.keys import SEAL_KEY

    real, _fake, _impostor = real_and_fake
    data = tmp_path / "arena"
    done = _cli(data, "bot", "register", "pinned", "127.0.0.1:5", "--game", "take5", "--data-dir", str(data),
                "--server", real)
    assert done.exit_code == 0, done.output
    store = Store.from_url(redis_url)
    store.client.set(SEAL_KEY, sealing.new_private_key().hex())  # what an impostor's own key looks like
    refused = _cli(data, "bot", "register", "other", "127.0.0.1:5", "--game", "take5", "--bot-secret",
                   "never-sent-0123456789abcdef", "--data-dir", str(data), "--server", real)
    assert refused.exit_code == 1
    assert "presents another seal key than this machine pinned" in refused.stderr
    assert "nothing secret was sent" in refused.stderr and '"seal_keys"' in refused.stderr
    assert store.get_bot("take5", "other") is None


def test_sealed_fields_that_do_not_fit_are_invalid_argument(real_and_fake: tuple[str, str, Impostor]) -> None:
    real, _fake, _impostor = real_and_fake
    with grpc.insecure_channel(real) as channel:
        stub = arena_pb2_grpc.ArenaStub(channel)
        arena_key = stub.GetArenaInfo(arena_pb2.GetArenaInfoRequest()).seal_key
        assert len(arena_key) == sealing.KEY_BYTES
        secret = "a-bot-secret-0123456789"
        bound = sealing.bound_to(sealing.BOT_SECRET, "RegisterBot", "take5", "x")

        def sealed(field: str = sealing.BOT_SECRET, to: bytes = arena_key, bound: bytes = bound) -> dict[str, bytes]:
            seal = sealing.ClientSeal(to)  # a fresh key each call, as the CLI makes
            return dict(client_seal_key=seal.public, sealed_bot_secret=seal.seal(field, secret, bound))

        other_key = sealing.public_key(sealing.new_private_key())
        cases = {
            "client_seal_key: an X25519 public key is 32 bytes, got 5": dict(client_seal_key=b"short"),
            "sealed_bot_secret needs a client_seal_key": dict(sealed_bot_secret=sealed()["sealed_bot_secret"]),
            "give bot_secret or sealed_bot_secret, not both": dict(bot_secret=secret, **sealed()),
            "sealed_bot_secret: the sealed bot_secret does not open": sealed(to=other_key),
            "sealed_bot_secret: the sealed bot_secret does not open: sealed": sealed(  # a token as a secret
                field=sealing.OWNER_TOKEN, bound=sealing.bound_to(sealing.OWNER_TOKEN, "RegisterBot", "take5", "x")),
            "sealed_bot_secret: the sealed bot_secret does not open: sealed for another key or call": sealed(
                bound=sealing.bound_to(sealing.BOT_SECRET, "UpdateBot", "take5", "x")),
        }
        for expected, fields in cases.items():
            with pytest.raises(grpc.RpcError) as caught:
                stub.RegisterBot(arena_pb2.RegisterBotRequest(name="x", endpoint="127.0.0.1:5", game="take5",
                                                              **fields), timeout=10)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, expected
            assert expected in (caught.value.details() or ""), (expected, caught.value.details())
        # sealed as it should be: the arena opens it, and answers the new owner's token sealed only
        seal = sealing.ClientSeal(arena_key)
        record = stub.RegisterBot(arena_pb2.RegisterBotRequest(
            name="x", endpoint="127.0.0.1:5", game="take5", client_seal_key=seal.public,
            sealed_bot_secret=seal.seal(sealing.BOT_SECRET, secret, bound)), timeout=10)
        assert record.owner_token == "" and record.has_bot_secret
        token_bound = sealing.bound_to(sealing.OWNER_TOKEN, "RegisterBot", "take5", "x")
        assert len(seal.unseal(sealing.OWNER_TOKEN, record.sealed_owner_token, token_bound)) >= 32


def test_match_show_of_a_mistyped_file_name_says_there_is_no_such_file(real_and_fake: tuple[str, str, Impostor],
                                                                        tmp_path: Path) -> None:
    real, _fake, _impostor = real_and_fake
    shown = _cli(tmp_path, "match", "show", "game.jsn", "--server", real)
    assert shown.exit_code == 1 and "no finished match game.jsn" in shown.stderr
    assert "nor is there a file game.jsn" in shown.stderr and "is the path right?" in shown.stderr
    plain = _cli(tmp_path, "match", "show", "t9-000001", "--server", real)
    assert plain.exit_code == 1 and "nor is there a file" not in plain.stderr


def test_an_active_impostor_gets_no_secret_by_changing_the_calls(real_and_fake: tuple[str, str, Impostor],
                                                                 tmp_path: Path) -> None:
    """Once this machine pinned the arena's seal key: a server at its id that presents none (a downgrade) gets
    nothing; a relay that strips the client's key from a first registration gets the new token in the clear, which
    the CLI refuses to take and says so; a server at the same address that says it is another arena gets nothing."""
    real, fake, impostor = real_and_fake
    data = tmp_path / "arena"
    first = _cli(data, "bot", "register", "pinned", "127.0.0.1:5", "--game", "take5", "--data-dir", str(data),
                 "--server", fake)  # relayed as it is: the arena's key is pinned
    assert first.exit_code == 0, first.output
    secret = "downgraded-secret-0123456789"

    def no_key(method: str, answer: bytes) -> bytes:
        if method != "GetArenaInfo":
            return answer
        info = arena_pb2.ArenaInfo.FromString(answer)
        info.ClearField("seal_key")
        return info.SerializeToString()

    impostor.rewrite_answer = no_key
    done = _cli(data, "bot", "update", "pinned", "127.0.0.1:6", "--game", "take5", "--bot-secret", secret,
                "--data-dir", str(data), "--server", fake)
    assert done.exit_code == 1 and "presents no seal key than this machine pinned" in done.stderr, done.output
    impostor.rewrite_answer = None

    def strip(method: str, request: bytes) -> bytes:
        if method != "RegisterBot":
            return request
        asked = arena_pb2.RegisterBotRequest.FromString(request)
        asked.ClearField("client_seal_key")
        asked.ClearField("sealed_bot_secret")
        return asked.SerializeToString()

    impostor.rewrite_request = strip
    done = _cli(data, "bot", "register", "stripped", "127.0.0.1:5", "--game", "take5", "--data-dir", str(data),
                "--server", fake)
    assert done.exit_code == 1 and "carries the new owner token in the clear" in done.stderr, done.output
    assert "it was not saved" in done.stderr
    impostor.rewrite_request = None
    assert _cli(data, "bot", "token", "stripped", "--game", "take5", "--data-dir", str(data),
                "--server", real).exit_code == 1

    def another_arena(method: str, answer: bytes) -> bytes:
        if method != "GetArenaInfo":
            return answer
        info = arena_pb2.ArenaInfo.FromString(answer)
        info.arena_id, info.seal_key = "e" * 32, sealing.public_key(sealing.new_private_key())
        return info.SerializeToString()

    impostor.rewrite_answer = another_arena
    done = _cli(data, "bot", "register", "other", "127.0.0.1:5", "--game", "take5", "--bot-secret", secret,
                "--data-dir", str(data), "--server", fake)
    assert done.exit_code == 1 and "this machine reached arena" in done.stderr and "pinned its seal key" in done.stderr
    assert not any(m.endswith("/RegisterBot") and secret.encode() in r for m, r, _ in impostor.seen[-3:])


def test_a_sealed_field_opens_for_its_own_call_only(real_and_fake: tuple[str, str, Impostor], redis_url: str) -> None:
    """A sealed bot secret captured from one call opens in no other: not with its client key again (refused), not
    for another bot, method or field."""
    real, _fake, _impostor = real_and_fake
    with grpc.insecure_channel(real) as channel:
        stub = arena_pb2_grpc.ArenaStub(channel)
        arena_key = stub.GetArenaInfo(arena_pb2.GetArenaInfoRequest()).seal_key
        secret = "victims-secret-0123456789"
        seal = sealing.ClientSeal(arena_key)
        victim = seal.seal(sealing.BOT_SECRET, secret, sealing.bound_to(sealing.BOT_SECRET, "RegisterBot", "take5",
                                                                         "victim"))
        stub.RegisterBot(arena_pb2.RegisterBotRequest(name="victim", endpoint="127.0.0.1:5", game="take5",
                                                      client_seal_key=seal.public, sealed_bot_secret=victim))
        replay = arena_pb2.RegisterBotRequest(name="thief", endpoint="127.0.0.1:5", game="take5",
                                              client_seal_key=seal.public, sealed_bot_secret=victim)
        with pytest.raises(grpc.RpcError) as caught:
            stub.RegisterBot(replay, timeout=10)
        assert "client_seal_key was used by an earlier call" in (caught.value.details() or "")
        fresh = sealing.ClientSeal(arena_key)  # a relay cannot re-seal without the key; even the client's own
        moved = fresh.seal(sealing.BOT_SECRET, secret, sealing.bound_to(sealing.BOT_SECRET, "RegisterBot", "take5",
                                                                        "victim"))
        with pytest.raises(grpc.RpcError) as caught:
            stub.RegisterBot(arena_pb2.RegisterBotRequest(name="thief", endpoint="127.0.0.1:5", game="take5",
                                                          client_seal_key=fresh.public, sealed_bot_secret=moved))
        assert "does not open" in (caught.value.details() or "")
    assert Store.from_url(redis_url).get_bot("take5", "thief") is None


def test_a_refused_call_leaves_no_used_seal_key(real_and_fake: tuple[str, str, Impostor], redis_url: str) -> None:
    """A stranger's refused RegisterBot or UpdateBot stores nothing, however many it makes (each used to leave a
    key kept 90 days); the key of a served call is spent, and refused after."""
    real, _fake, _impostor = real_and_fake
    store = Store.from_url(redis_url)
    with grpc.insecure_channel(real) as channel:
        stub = arena_pb2_grpc.ArenaStub(channel)
        arena_key = stub.GetArenaInfo(arena_pb2.GetArenaInfoRequest()).seal_key
        stub.RegisterBot(arena_pb2.RegisterBotRequest(name="held", endpoint="127.0.0.1:5", game="take5"), timeout=10)
        keys_before = store.client.dbsize()
        refused = [
            (stub.RegisterBot, lambda key: arena_pb2.RegisterBotRequest(  # a name another owner holds
                name="held", endpoint="127.0.0.1:6", game="take5", client_seal_key=key), "PERMISSION_DENIED"),
            (stub.UpdateBot, lambda key: arena_pb2.UpdateBotRequest(  # a bot that does not exist
                bot="nosuch", endpoint="127.0.0.1:6", game="take5", client_seal_key=key), "NOT_FOUND"),
        ]
        seals = []
        for method, request, code in refused:
            for _ in range(5):
                seals.append(sealing.ClientSeal(arena_key))
                with pytest.raises(grpc.RpcError) as caught:
                    method(request(seals[-1].public), timeout=10)
                assert caught.value.code().name == code
        assert store.client.dbsize() == keys_before
        assert not any(store.client_seal_key_used(seal.public) for seal in seals)
        # the key a refused call carried still serves a call of its client once; then it is spent
        seal = seals[0]
        bound = sealing.bound_to(sealing.BOT_SECRET, "RegisterBot", "take5", "fresh")
        request = arena_pb2.RegisterBotRequest(
            name="fresh", endpoint="127.0.0.1:5", game="take5", client_seal_key=seal.public,
            sealed_bot_secret=seal.seal(sealing.BOT_SECRET, "a-bot-secret-0123456789", bound))
        assert stub.RegisterBot(request, timeout=10).has_bot_secret
        assert store.client_seal_key_used(seal.public)
        with pytest.raises(grpc.RpcError) as caught:
            stub.RegisterBot(request, timeout=10)
        assert "client_seal_key was used by an earlier call" in (caught.value.details() or "")
