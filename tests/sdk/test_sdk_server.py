"""The SDK's Bot service over real gRPC on loopback: create_server on port 0, a real channel, the generated stub."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import grpc
import pytest

from arena_sdk import (
    SDK_VERSION,
    BotDefinitionError,
    MatchInfo,
    MatchResult,
    ServeError,
    Take5Bot,
    Take5View,
    create_server,
    wire,
)
from arena_sdk.games import take5
from arena_sdk.games.take5 import wire as take5_wire
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

# --- real engine views ---------------------------------------------------------------------------------------


def choose_view(seat: int = 0, seed: int = 11, players: int = 3) -> Take5View:
    """A TAKE5_CHOOSE_CARD view of a fresh game, from the engine."""
    return take5.observe(take5.new_game(players, seed=seed), seat)


def row_view() -> Take5View:
    """A TAKE5_CHOOSE_ROW view: seat 0 plays 1, below every row end (rule 4). Row ends 55 (7
    bullheads), 60 (3), 44 (5), 70 (3): rows 1 and 3 tie as the cheapest, row 1 is the first."""
    deal = take5.Take5Deal(
        hands=(tuple(range(1, 11)), tuple(range(90, 100))),
        rows=(55, 60, 44, 70),
    )
    state = take5.new_game(2, seed=0, deals=[deal])
    state = take5.apply(state, 0, take5.ChooseCard(1))
    state = take5.apply(state, 1, take5.ChooseCard(90))
    view = take5.observe(state, 0)
    assert view.kind == take5.CHOOSE_ROW and view.resolving_card == 1
    return view


def draft_view() -> Take5View:
    state = take5.new_game(2, take5.Take5Config(draft=True, known_cards=True), seed=5)
    view = take5.observe(state, 0)
    assert view.kind == take5.DRAFT_PICK
    return view


def decide_request(view: Take5View, match_id: str = "m1", kind: str | None = None) -> bot_pb2.DecideRequest:
    return bot_pb2.DecideRequest(
        match_id=match_id,
        seat=view.seat,
        kind=wire.kind_value(kind or view.kind),  # type: ignore[arg-type]
        take5=take5_wire.view_to_proto(view),
    )


def start_request(match_id: str = "m1", seat: int = 0, players: int = 3, game: str = "take5"):
    return bot_pb2.StartMatchRequest(
        match_id=match_id,
        game=game,
        seat=seat,
        num_players=players,
        player_names=[f"p{i}" for i in range(players)],
        config=wire.config_to_proto("take5", take5.Take5Config(limit=50)),
    )


# --- bots under test -----------------------------------------------------------------------------------------


class RecordingBot(Take5Bot):
    """Plays its highest card; records everything it is told in instance state."""

    name = "recorder"
    version = "2.5"
    author = "tests"
    created: list[RecordingBot] = []
    lock = threading.Lock()

    def __init__(self) -> None:
        self.started: list[MatchInfo] = []
        self.ended: list[MatchResult] = []
        self.views: list[Take5View] = []
        with RecordingBot.lock:
            RecordingBot.created.append(self)

    def on_start(self, match: MatchInfo) -> None:
        self.started.append(match)

    def on_end(self, result: MatchResult) -> None:
        self.ended.append(result)

    def choose_card(self, view: Take5View) -> int:
        self.views.append(view)
        return max(view.hand)


class FaultyBot(Take5Bot):
    """Misbehaves on purpose, depending on the turn of the view."""

    name = "faulty"

    def choose_card(self, view: Take5View) -> int:
        if view.turn == 0:
            raise RuntimeError("my strategy table is empty")
        return 1000  # never in a hand

    def choose_row(self, view: Take5View) -> int:
        return 7

    def draft_pick(self, view: Take5View):  # type: ignore[override]
        return "the lowest"


class BarrierBot(Take5Bot):
    """Two decisions must be inside choose_card at the same time, or the barrier breaks."""

    name = "barrier"
    barrier = threading.Barrier(2, timeout=10)

    def choose_card(self, view: Take5View) -> int:
        self.barrier.wait()
        return view.hand[0]


class Served:
    def __init__(self, bot_cls: type[Take5Bot]) -> None:
        self.server, self.port = create_server(bot_cls, "127.0.0.1:0")
        self.server.start()
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")
        self.stub = bot_pb2_grpc.BotStub(self.channel)
        self.servicer = self.server.servicer  # type: ignore[attr-defined]

    def close(self) -> None:
        self.channel.close()
        self.server.stop(None)


@pytest.fixture
def recorder() -> Iterator[Served]:
    RecordingBot.created.clear()
    served = Served(RecordingBot)
    yield served
    served.close()


@pytest.fixture
def faulty() -> Iterator[Served]:
    served = Served(FaultyBot)
    yield served
    served.close()


def rpc_error(call, request) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call(request, timeout=10)
    return info.value


# --- tests ---------------------------------------------------------------------------------------------------


def test_get_info_reports_the_class_attributes(recorder: Served) -> None:
    info = recorder.stub.GetInfo(bot_pb2.GetInfoRequest(), timeout=10)
    assert (info.name, info.version, list(info.games), info.author) == ("recorder", "2.5", ["take5"], "tests")
    assert info.sdk_version == SDK_VERSION == "arena-sdk 0.1.0"


def test_start_decide_end_sequence(recorder: Served) -> None:
    stub = recorder.stub
    stub.StartMatch(start_request("m1", seat=1), timeout=10)
    view = choose_view(seat=1)
    response = stub.Decide(decide_request(view, "m1"), timeout=10)
    assert response.take5.WhichOneof("choice") == "card"
    assert response.take5.card == max(view.hand)
    assert recorder.servicer.active_matches() == [("m1", 1)]

    (bot,) = RecordingBot.created
    assert bot.started == [MatchInfo("m1", "take5", 1, 3, ("p0", "p1", "p2"), take5.Take5Config(limit=50))]
    assert bot.match == bot.started[0]
    assert bot.views == [view]  # the typed view arrives intact, with its decision kind

    result = bot_pb2.MatchResult(scores=[70, 12, 33], ranks=[3, 1, 2], faults=[0, 0, 1])
    stub.EndMatch(bot_pb2.EndMatchRequest(match_id="m1", seat=1, result=result), timeout=10)
    assert bot.ended == [MatchResult("m1", 1, (70.0, 12.0, 33.0), (3, 1, 2), (0, 0, 1))]
    assert bot.ended[0].score == 12.0 and bot.ended[0].rank == 1
    assert recorder.servicer.active_matches() == []
    # EndMatch for a match that is gone (or never started) is harmless
    stub.EndMatch(bot_pb2.EndMatchRequest(match_id="m1", seat=1, result=result), timeout=10)
    assert len(bot.ended) == 1


def test_default_row_choice_is_the_cheapest_row_and_draft_the_lowest(recorder: Served) -> None:
    rview = row_view()
    response = recorder.stub.Decide(decide_request(rview, "m2"), timeout=10)
    assert response.take5.WhichOneof("choice") == "row"
    assert response.take5.row == 1  # rows cost 7, 3, 5, 3 bullheads: the first cheapest
    dview = draft_view()
    response = recorder.stub.Decide(decide_request(dview, "m3"), timeout=10)
    assert response.take5.WhichOneof("choice") == "card"
    assert response.take5.card == min(dview.draft_pool) == 1


def test_one_object_per_match_and_seat_and_a_match_played_again_starts_afresh(recorder: Served) -> None:
    stub = recorder.stub
    stub.StartMatch(start_request("a", seat=0), timeout=10)
    stub.StartMatch(start_request("a", seat=2), timeout=10)
    stub.StartMatch(start_request("b", seat=0), timeout=10)
    view = choose_view(seat=0)
    stub.Decide(decide_request(view, "a"), timeout=10)
    assert len(RecordingBot.created) == 3 and len(RecordingBot.created[0].views) == 1
    # match "a" played again (a platform crash lost the first play): seat 0 gets a new object, started again,
    # that remembers nothing of the lost play
    stub.StartMatch(start_request("a", seat=0), timeout=10)
    assert len(RecordingBot.created) == 4
    assert [len(b.started) for b in RecordingBot.created] == [1, 1, 1, 1]
    stub.Decide(decide_request(view, "a"), timeout=10)
    assert len(RecordingBot.created[0].views) == 1 and len(RecordingBot.created[3].views) == 1
    assert sorted(recorder.servicer.active_matches()) == [("a", 0), ("a", 2), ("b", 0)]


def test_decide_for_an_unknown_match_creates_the_object_lazily(recorder: Served) -> None:
    view = choose_view(seat=2, players=4)
    response = recorder.stub.Decide(decide_request(view, "restarted"), timeout=10)
    assert response.take5.card == max(view.hand)
    (bot,) = RecordingBot.created
    assert bot.started == [MatchInfo("restarted", "take5", 2, 4, (), view.config)]


def test_concurrent_matches_keep_separate_state(recorder: Served) -> None:
    views = {f"m{i}": choose_view(seat=i % 3, seed=100 + i) for i in range(8)}

    def play(match_id: str) -> list[int]:
        view = views[match_id]
        recorder.stub.StartMatch(start_request(match_id, seat=view.seat), timeout=10)
        return [recorder.stub.Decide(decide_request(view, match_id), timeout=10).take5.card for _ in range(5)]

    with ThreadPoolExecutor(8) as pool:
        answers = dict(zip(views, pool.map(play, views)))
    assert all(answers[m] == [max(views[m].hand)] * 5 for m in views)
    assert len(RecordingBot.created) == 8
    for bot in RecordingBot.created:
        (info,) = bot.started
        assert bot.views == [views[info.match_id]] * 5  # only its own match's requests


def test_decisions_of_different_matches_run_in_parallel() -> None:
    served = Served(BarrierBot)
    try:
        with ThreadPoolExecutor(2) as pool:
            futures = [
                pool.submit(served.stub.Decide, decide_request(choose_view(), f"par{i}"), timeout=20) for i in range(2)
            ]
            cards = [f.result().take5.card for f in futures]
        assert cards == [choose_view().hand[0]] * 2
        assert not BarrierBot.barrier.broken
    finally:
        served.close()


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda r: r.ClearField("match_id"), "match_id is empty"),
        (lambda r: setattr(r, "kind", bot_pb2.DECISION_KIND_UNSPECIFIED), "unspecified"),
        (lambda r: setattr(r, "kind", 99), "unknown decision kind"),
        (lambda r: r.ClearField("take5"), "carries no view"),
        (lambda r: setattr(r, "kind", bot_pb2.TAKE5_CHOOSE_ROW), "resolving_card is not set"),
        (lambda r: setattr(r, "kind", bot_pb2.TAKE5_DRAFT_PICK), "draft pool is empty"),
        (lambda r: setattr(r, "seat", 2), "view is of seat 0"),
        (lambda r: setattr(r.take5, "num_players", 0), "num_players"),
        (lambda r: r.take5.hand.append(105), "outside 1..104"),
        (lambda r: r.take5.ClearField("hand"), "the hand is empty"),
    ],
)
def test_malformed_decide_is_invalid_argument(recorder: Served, mutate, expected: str) -> None:
    request = decide_request(choose_view())
    mutate(request)
    error = rpc_error(recorder.stub.Decide, request)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert expected in error.details()
    assert RecordingBot.created == []  # no bot object is made for a malformed request


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (start_request(game="taki"), "plays take5; StartMatchRequest.game is 'taki'"),
        (start_request(game=""), "StartMatchRequest.game is ''"),
        (start_request(match_id=""), "match_id is empty"),
        (start_request(seat=3, players=3), "seat 3 is not below num_players 3"),
        (start_request(players=1), "num_players must be 2..10"),
        (bot_pb2.StartMatchRequest(match_id="x", game="take5", seat=0, num_players=3, player_names=["a"]),
         "holds 1 names for 3 seats"),
    ],
)
def test_malformed_start_match_is_invalid_argument(recorder: Served, request_, expected: str) -> None:
    error = rpc_error(recorder.stub.StartMatch, request_)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert expected in error.details()
    assert RecordingBot.created == []


def test_start_match_without_config_uses_the_default_rules(recorder: Served) -> None:
    request = start_request("plain")
    request.ClearField("config")
    recorder.stub.StartMatch(request, timeout=10)
    (bot,) = RecordingBot.created
    assert bot.started[0].config == take5.Take5Config()


def test_a_raising_bot_method_is_internal_with_the_exception_text(faulty: Served) -> None:
    error = rpc_error(faulty.stub.Decide, decide_request(choose_view()))
    assert error.code() == grpc.StatusCode.INTERNAL
    assert "choose_card raised RuntimeError: my strategy table is empty" in error.details()
    # and where, in the bot's own file (not the SDK's frames below it): the line of the raise above
    line = next(i for i, text in enumerate(Path(__file__).read_text().splitlines(), 1)
                if 'raise RuntimeError("my strategy table is empty")' in text)
    assert error.details().endswith(f"(test_sdk_server.py, line {line})"), error.details()


def test_an_illegal_answer_is_internal_saying_what_the_bot_returned(faulty: Served) -> None:
    later = replace(choose_view(), turn=3)
    error = rpc_error(faulty.stub.Decide, decide_request(later))
    assert error.code() == grpc.StatusCode.INTERNAL
    assert "returned card 1000, not in its hand" in error.details()

    error = rpc_error(faulty.stub.Decide, decide_request(row_view()))
    assert error.code() == grpc.StatusCode.INTERNAL
    assert "returned row 7, rows are 0..3" in error.details()

    error = rpc_error(faulty.stub.Decide, decide_request(draft_view()))
    assert error.code() == grpc.StatusCode.INTERNAL
    assert "returned 'the lowest' (str), not an int" in error.details()


def test_a_bot_class_without_a_valid_name_cannot_be_served() -> None:
    class Nameless(Take5Bot):
        def choose_card(self, view: Take5View) -> int:
            return view.hand[0]

    class Spaced(Nameless):
        name = "my bot"

    for cls in (Nameless, Spaced):
        with pytest.raises(BotDefinitionError, match="name must be 1..64 characters"):
            create_server(cls, "127.0.0.1:0")
    with pytest.raises(BotDefinitionError, match="needs a subclass of Take5Bot"):
        create_server(object, "127.0.0.1:0")  # type: ignore[arg-type]
    with pytest.raises(BotDefinitionError, match=r"needs the bot class, not an object of it: serve\(Spaced\)"):
        create_server(Spaced(), "127.0.0.1:0")  # type: ignore[arg-type]


def test_a_misspelt_decision_method_is_named_when_the_bot_starts() -> None:
    """A TakiBot whose take_turn is misspelt played the SDK's default move in silence (and won); a Take5Bot's typo in
    choose_row played row 0 in silence. Helpers of the author's own and the sample bots raise nothing."""
    from arena_sdk import TakiBot
    from arena_sdk.definition import decision_method_warnings

    class TakeTrun(TakiBot):
        name = "tt"

        def take_trun(self, view: object) -> None: ...

    class CardsInTaki(TakiBot):
        name = "ct"

        def choose_card(self, view: object) -> None: ...

    class ChoseRow(Take5Bot):
        name = "cr"

        def choose_card(self, view: Take5View) -> int:
            return view.hand[0]

        def chose_row(self, view: Take5View) -> int:
            return 0

        def cost(self, card: int) -> int:  # a helper: no warning
            return card

    assert decision_method_warnings(TakeTrun) == [
        "TakeTrun overrides none of TakiBot's decision methods (react, take_turn): every Taki decision goes to "
        "TakiBot's own; it defines take_trun: did you mean take_turn?"]
    assert decision_method_warnings(CardsInTaki)[0].endswith("it defines choose_card, which a TakiBot is never asked")
    class ChoseCard(Take5Bot):
        name = "cc"

        def chose_card(self, view: Take5View) -> int:
            return view.hand[0]

    assert decision_method_warnings(ChoseCard) == [  # Take5Bot has no move of its own for choose_card: it raises
        "ChoseCard overrides none of Take5Bot's decision methods (choose_card, choose_row, draft_pick): every Take 5! "
        "decision goes to Take5Bot's own, and Take5Bot has no choose_card of its own: it raises, so the bot faults "
        "at every such decision and forfeits; it defines chose_card: did you mean choose_card?"]
    assert decision_method_warnings(ChoseRow) == [
        "ChoseRow does not override choose_row, draft_pick of Take5Bot; it defines chose_row: did you mean "
        "choose_row?"]
    from sample_bots.heuristic_bot import HeuristicBot
    from sample_bots.taki_heuristic_bot import TakiHeuristicBot

    assert decision_method_warnings(HeuristicBot) == decision_method_warnings(TakiHeuristicBot) == []


def test_the_reported_name_can_be_overridden() -> None:
    server, port = create_server(RecordingBot, "127.0.0.1:0", name="recorder-2")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            info = bot_pb2_grpc.BotStub(channel).GetInfo(bot_pb2.GetInfoRequest(), timeout=10)
        assert (info.name, info.version) == ("recorder-2", "2.5")
    finally:
        server.stop(None)
    with pytest.raises(BotDefinitionError, match="got 'two words'"):
        create_server(RecordingBot, "127.0.0.1:0", name="two words")


def test_a_port_in_use_is_a_serve_error(recorder: Served) -> None:
    with pytest.raises(ServeError, match=f"cannot listen on 127.0.0.1:{recorder.port}"):
        create_server(RecordingBot, f"127.0.0.1:{recorder.port}")


def test_a_bot_class_claiming_a_game_it_cannot_play_is_refused() -> None:
    class Fake(Take5Bot):
        name = "fake"
        games = ("taki",)

        def choose_card(self, view: Take5View) -> int:
            return view.hand[0]

    with pytest.raises(BotDefinitionError, match="says it plays 'taki' but is not a TakiBot"):
        create_server(Fake, "127.0.0.1:0")


# --- the match stream ----------------------------------------------------------------------------------------


def test_the_match_stream_serves_the_same_bot_class(recorder: Served) -> None:
    info = recorder.stub.GetInfo(bot_pb2.GetInfoRequest(), timeout=10)
    assert info.serves_match_stream
    view = choose_view(seat=1)
    bad = decide_request(view, "s1")
    bad.sequence = 1
    bad.ClearField("take5")
    result = bot_pb2.MatchResult(scores=[70, 12, 33], ranks=[3, 1, 2], faults=[0, 0, 1])
    messages = [
        bot_pb2.RefereeMessage(start=start_request("s1", seat=1), deadline_ms=2000),
        bot_pb2.RefereeMessage(decide=decide_request(view, "s1"), deadline_ms=1000),
        bot_pb2.RefereeMessage(decide=bad, deadline_ms=1000),
        bot_pb2.RefereeMessage(),
        bot_pb2.RefereeMessage(end=bot_pb2.EndMatchRequest(match_id="s1", seat=1, result=result), deadline_ms=2000),
    ]
    answers = list(recorder.stub.PlayMatch(iter(messages), timeout=10))
    assert [a.WhichOneof("answer") for a in answers] == ["started", "decision", "failure", "failure", "ended"]
    assert answers[1].sequence == 0 and answers[1].decision.take5.card == max(view.hand)
    failure = answers[2].failure
    assert answers[2].sequence == 1 and failure.step == bot_pb2.MATCH_STEP_DECIDE
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT.value[0] and "carries no view" in failure.message
    assert answers[3].failure.step == bot_pb2.MATCH_STEP_UNSPECIFIED
    (bot,) = RecordingBot.created  # one object, as on the unary path
    assert bot.views == [view] and bot.ended[0].rank == 1
    assert recorder.servicer.active_matches() == []


def test_the_match_stream_needs_the_secret() -> None:
    for short in ("s3cret", "with a space in it, 32 characters"):
        with pytest.raises(ServeError, match="the bot secret has"):
            create_server(RecordingBot, "127.0.0.1:0", secret=short)
    server, port = create_server(RecordingBot, "127.0.0.1:0", secret="s3cret-of-sixteen-plus")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = bot_pb2_grpc.BotStub(channel)
            start = bot_pb2.RefereeMessage(start=start_request("s2", seat=0))
            with pytest.raises(grpc.RpcError) as info:
                list(stub.PlayMatch(iter([start]), timeout=10))
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
            with pytest.raises(grpc.RpcError) as info:
                list(stub.PlayMatch(iter([start]), timeout=10, metadata=(("arena-bot-secret", "guess"),)))
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
            answers = list(stub.PlayMatch(iter([start]), timeout=10, metadata=(("arena-bot-secret", "s3cret-of-sixteen-plus"),)))
            assert answers[0].WhichOneof("answer") == "started"
    finally:
        server.stop(None)


def test_more_concurrent_decisions_than_the_old_32_threads_are_served() -> None:
    class Wide(BarrierBot):
        name = "wide"
        barrier = threading.Barrier(40, timeout=20)  # 40 decisions inside choose_card at once, or it breaks

    served = Served(Wide)
    try:
        with ThreadPoolExecutor(40) as pool:
            futures = [pool.submit(served.stub.Decide, decide_request(choose_view(), f"wide{i}"), timeout=30)
                       for i in range(40)]
            cards = [f.result().take5.card for f in futures]
        assert cards == [choose_view().hand[0]] * 40 and not Wide.barrier.broken
    finally:
        served.close()


def test_every_match_stream_is_served_at_once() -> None:
    class WideStreams(BarrierBot):
        name = "widestreams"
        barrier = threading.Barrier(40, timeout=20)  # 40 seats' streams inside choose_card at once, or it breaks

    served = Served(WideStreams)
    try:
        def play(i: int) -> list[bot_pb2.BotMessage]:
            message = bot_pb2.RefereeMessage(decide=decide_request(choose_view(), f"ws{i}"), deadline_ms=20000)
            return list(served.stub.PlayMatch(iter([message]), timeout=30))

        with ThreadPoolExecutor(40) as pool:
            answers = list(pool.map(play, range(40)))
        assert [a[0].decision.take5.card for a in answers] == [choose_view().hand[0]] * 40
        assert not WideStreams.barrier.broken
    finally:
        served.close()


def _silent_streams(outside: str, secret: str | None, streams: int, settle_s: float,
                    end_silence: bool = False) -> tuple[int, list[grpc.StatusCode]]:
    """A bot of 4 threads (``secret``) that ``streams`` silent PlayMatch streams without the secret (a stranger's)
    reach first (``settle_s`` later): the card of the referee's Decide then (with the secret), and how each silent
    stream ended (after the client ended its side, with ``end_silence``)."""
    server, port = create_server(RecordingBot, "[::]:0", max_workers=4, secret=secret)
    server.start()
    silence = threading.Event()

    def silent() -> Iterator[bot_pb2.RefereeMessage]:
        silence.wait(30)
        return
        yield  # a generator that sends nothing

    try:  # the stranger calls from this machine's network address, the referee from loopback (two clients)
        with grpc.insecure_channel(f"{outside}:{port}") as channel, \
                grpc.insecure_channel(f"127.0.0.1:{port}") as referee:
            stub = bot_pb2_grpc.BotStub(channel)
            opened = [stub.PlayMatch(silent(), timeout=40) for _ in range(streams)]
            time.sleep(settle_s)  # the streams reach the server's threads before the referee's call does
            metadata = (("arena-bot-secret", secret),) if secret else None
            card = bot_pb2_grpc.BotStub(referee).Decide(decide_request(choose_view(), "after-silence"), timeout=10,
                                                        metadata=metadata).take5.card
            if end_silence:
                silence.set()
            codes = []
            for stream in opened:
                with pytest.raises(grpc.RpcError) as ended:
                    list(stream)
                codes.append(ended.value.code())
            return card, codes
    finally:
        silence.set()
        server.stop(None)


@pytest.mark.parametrize("secret", [None, "s3cret-s3cret-s3cret"])
def test_silent_match_streams_do_not_hold_the_bots_threads(monkeypatch: pytest.MonkeyPatch, outside_address: str,
                                                           secret: str | None) -> None:
    """A stream holds a server thread from the moment it opens. Streams opened and left silent (a stranger's, with no
    secret or the wrong one) are cancelled once their first message is late, so the referee's calls still find a
    thread: here the bot has 4 and 4 silent streams take them all."""
    from arena_sdk import guard

    monkeypatch.setattr(guard, "FIRST_MESSAGE_S", 0.5)
    card, codes = _silent_streams(outside_address, secret, 4, 0.0)
    assert card in choose_view().hand
    # without a secret, 2 (the share of one address of a bot of 4 threads) wait and are cancelled, 2 are refused
    assert set(codes) <= {grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAUTHENTICATED,
                          grpc.StatusCode.RESOURCE_EXHAUSTED}, codes


def test_one_address_holds_at_most_half_the_threads_of_a_bot_without_a_secret(outside_address: str) -> None:
    """A stranger opening match streams that each send a start and then stay open (which no first-message timeout
    ends) gets at most ``max_workers // 2`` of them at once (``arena_sdk.peers.PeerShare``), the rest RESOURCE_EXHAUSTED; the
    referee, calling from another address, is still served on both paths; once the held streams end, their address
    is served again."""
    from arena_sdk.peers import peer_address

    assert peer_address("ipv4:10.1.2.3:5555") == "10.1.2.3" == peer_address("ipv6:[::ffff:10.1.2.3]:5555")
    assert peer_address("ipv6:[2001:db8::1]:5555") == peer_address("ipv6:[2001:db8::ffff]:1") == "2001:db8::/64"
    assert peer_address("unix:/tmp/s") == "unix"
    # a local process can connect from any loopback address: they are one client, not one each
    assert {peer_address(p) for p in ("ipv4:127.0.0.1:1", "ipv4:127.0.0.2:2", "ipv6:[::1]:3",
                                      "ipv6:[::ffff:127.0.0.9]:4")} == {"loopback"}
    server, port = create_server(RecordingBot, "[::]:0", max_workers=8)
    server.start()
    hold = threading.Event()

    def held(i: int) -> Iterator[bot_pb2.RefereeMessage]:
        yield bot_pb2.RefereeMessage(start=start_request(f"junk-{i}"))
        hold.wait(30)

    try:
        with grpc.insecure_channel(f"{outside_address}:{port}") as stranger, \
                grpc.insecure_channel(f"127.0.0.1:{port}") as ours:
            streams = [bot_pb2_grpc.BotStub(stranger).PlayMatch(held(i), timeout=40) for i in range(10)]
            outcomes = []
            for stream in streams:
                try:
                    outcomes.append(next(stream).WhichOneof("answer") or "?")
                except grpc.RpcError as exc:
                    outcomes.append(exc.code().name)
            assert sorted(outcomes) == ["RESOURCE_EXHAUSTED"] * 6 + ["started"] * 4, outcomes
            referee = bot_pb2_grpc.BotStub(ours)
            assert referee.Decide(decide_request(choose_view(), "real"), timeout=10).take5.card in choose_view().hand
            message = bot_pb2.RefereeMessage(decide=decide_request(choose_view(), "real-2"), deadline_ms=5000)
            assert list(referee.PlayMatch(iter([message]), timeout=10))[0].decision.take5.card in choose_view().hand
            hold.set()
            for stream in streams:
                with contextlib.suppress(grpc.RpcError):
                    list(stream)
            again = bot_pb2_grpc.BotStub(stranger).PlayMatch(iter([message]), timeout=10)
            assert list(again)[0].decision.take5.card in choose_view().hand  # the address's streams were let go
    finally:
        hold.set()
        server.stop(None)


def test_a_flood_of_refused_silent_streams_holds_no_more_than_a_few_threads(monkeypatch: pytest.MonkeyPatch,
                                                                           outside_address: str) -> None:
    """A stranger without the bot's secret opening silent streams faster than they are cancelled: only
    ``REFUSED_WAITING`` of them wait for a first message at once, the rest are refused at once, so the referee's
    call still finds one of the bot's 4 threads (each refused stream would otherwise hold one for 30 s here)."""
    from arena_sdk import guard

    monkeypatch.setattr(guard, "REFUSED_WAIT_S", 30.0)
    card, codes = _silent_streams(outside_address, "s3cret-s3cret-s3cret", 12, 1.0, end_silence=True)
    assert card in choose_view().hand
    # refused (no secret), cancelled while waiting, or over the address's share of streams without the secret
    assert set(codes) <= {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.INTERNAL, grpc.StatusCode.CANCELLED,
                          grpc.StatusCode.RESOURCE_EXHAUSTED}, codes


@pytest.mark.parametrize("secret", [None, "s3cret-s3cret-s3cret"])
def test_unary_calls_that_never_send_their_request_hold_at_most_the_share(monkeypatch: pytest.MonkeyPatch,
                                                                         outside_address: str,
                                                                         secret: str | None) -> None:
    """grpcio's sync server gives a unary call a thread before its request comes: a stranger's calls that never send
    one (GetInfo needs no secret) take at most one address's share of the bot's threads (the rest are refused at
    once), the referee's calls are still served (a bot with a secret: from the stranger's own address too), and
    the held calls are cancelled once their request is ``FIRST_MESSAGE_S`` late."""
    from arena_sdk import guard

    monkeypatch.setattr(guard, "FIRST_MESSAGE_S", 3.0)
    server, port = create_server(RecordingBot, "[::]:0", max_workers=8, secret=secret)
    server.start()
    release = threading.Event()

    def never_sent() -> Iterator[bytes]:
        release.wait(30)
        yield bot_pb2.GetInfoRequest().SerializeToString()

    try:
        with grpc.insecure_channel(f"{outside_address}:{port}") as stranger:
            held = stranger.stream_unary("/arena.v1.Bot/GetInfo", request_serializer=lambda b: b,
                                         response_deserializer=bot_pb2.BotInfo.FromString)
            t0 = time.monotonic()
            calls = [held.future(never_sent(), timeout=30) for _ in range(12)]
            time.sleep(0.5)
            refused = [c for c in calls if c.done() and c.code() == grpc.StatusCode.RESOURCE_EXHAUSTED]
            assert len(refused) == 12 - 8 // 2  # the address's share (4 of 8 threads) waits, the rest refused
            if secret:  # a second address of the stranger's finds no room: calls without the secret hold 4 in all
                with grpc.insecure_channel(f"127.0.0.1:{port}") as second:
                    more = second.stream_unary("/arena.v1.Bot/GetInfo", request_serializer=lambda b: b,
                                               response_deserializer=bot_pb2.BotInfo.FromString)
                    extra = [more.future(never_sent(), timeout=30) for _ in range(4)]
                    time.sleep(0.5)
                    assert all(c.done() and c.code() == grpc.StatusCode.RESOURCE_EXHAUSTED for c in extra)
            metadata = (("arena-bot-secret", secret),) if secret else None
            sources = ["127.0.0.1"] + ([outside_address] if secret else [])
            for source in sources:  # the referee (its secret carried: not counted, from any address)
                with grpc.insecure_channel(f"{source}:{port}") as referee:
                    answer = bot_pb2_grpc.BotStub(referee).Decide(decide_request(choose_view(), "real"), timeout=5,
                                                                 metadata=metadata)
                    assert answer.take5.card in choose_view().hand
            waiting = [c for c in calls if c not in refused]
            for call in waiting:  # cancelled by the bot once the request is late, well before the client's 30 s
                assert call.exception(timeout=20) is not None
            assert time.monotonic() - t0 < 15
    finally:
        release.set()
        server.stop(None)


def test_a_bot_with_a_secret_needs_two_threads() -> None:
    """Half the threads are kept for calls carrying the secret: with one thread a stranger's call would hold it."""
    with pytest.raises(ServeError, match="at least 2 threads"):
        create_server(RecordingBot, "127.0.0.1:0", max_workers=1, secret="s3cret-s3cret-s3cret")
    server, _port = create_server(RecordingBot, "127.0.0.1:0", max_workers=2, secret="s3cret-s3cret-s3cret")
    server.stop(None)
