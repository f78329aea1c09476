"""Take 5 views cost what they carry (issue 9): to a bot that keeps the history (the SDK's
``StartMatchResponse.keeps_history``), the referee sends only the turns since the seat's last answered decision
(``Take5View.history_first_turn`` / ``previous_history_first_turn``), and the SDK gives its bot the complete view;
an older bot gets complete views; a bot that lost its state mid-match gets the complete current state and the
history from where the request's starts."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.match.options import RefereeOptions
from arena.match.record import SeatSpec
from arena.match.referee import run_match_sync
from arena_sdk.games import get_game
from arena_sdk.games.take5 import rules, wire
from arena_sdk.pb import bot_pb2
from arena_sdk.server import BotServicer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bots"))
from view_spy import check_views, spy_servers  # noqa: E402

GAME = get_game("take5")


@pytest.fixture
def spy_server() -> Iterator[Any]:
    with spy_servers() as serve:
        yield serve


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[int, int, int, int]]]:
    """(history_first_turn, turns in history, previous_history_first_turn, turns in previous_history) of every
    Take 5 view the SDK server decodes in this process."""
    out: list[tuple[int, int, int, int]] = []
    decode = GAME.view_from_message

    def spying(msg: Any, kind: str | None, kept: Any) -> Any:
        out.append((msg.history_first_turn, len(msg.history), msg.previous_history_first_turn,
                    len(msg.previous_history)))
        return decode(msg, kind, kept)

    monkeypatch.setattr(GAME, "view_from_message", spying)
    yield out


def test_the_referee_sends_only_the_turns_since_the_last_decision(spy_server: Any, sent: list) -> None:
    endpoint, seen = spy_server("take5")
    seats = [SeatSpec(f"spy{i}", endpoint) for i in range(4)]
    record = run_match_sync("history-delta", "take5", seats, seed=5, options=RefereeOptions(deadline_ms=5000))
    assert record.faults == () and record.result.ranks
    assert check_views(record, seen) == len(sent) == len(record.decisions)
    assert max(n for _, n, _, _ in sent) == 1  # one new turn at most: the turn completed since the last decision
    assert max(n for _, _, _, n in sent) == 1  # the previous hand's last turn
    assert max(first for first, _, _, _ in sent) == 9
    assert any(first for _, _, first, _ in sent)
    # the bots still saw complete histories: a card choice at turn t sees t turns
    assert {len(v.history) for _, _, v in seen if v.kind == rules.CHOOSE_CARD} == set(range(10))


def test_a_bot_that_does_not_keep_the_history_gets_complete_views(spy_server: Any, sent: list,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    start = BotServicer.start_match  # the start of both paths, the unary call and the match stream

    def older_start(self: BotServicer, request: Any) -> Any:
        start(self, request)
        return bot_pb2.StartMatchResponse()  # keeps_history unset: an older bot

    monkeypatch.setattr(BotServicer, "start_match", older_start)
    endpoint, seen = spy_server("take5")
    seats = [SeatSpec(f"spy{i}", endpoint) for i in range(3)]
    record = run_match_sync("history-full", "take5", seats, seed=6, options=RefereeOptions(deadline_ms=5000))
    assert record.faults == ()
    assert check_views(record, seen) == len(record.decisions)
    assert all(first == 0 and prev_first == 0 for first, _, prev_first, _ in sent)
    assert max(n for _, n, _, _ in sent) == 9


def test_a_bot_that_lost_its_state_gets_the_current_state_and_the_history_from_the_request(
        spy_server: Any, sent: list) -> None:
    endpoint, seen = spy_server("take5")
    seats = [SeatSpec(f"spy{i}", endpoint) for i in range(3)]
    forget_at = {5, 17}  # decisions of seat 1 after which its kept history is forgotten (a restart)
    asked = 0
    decide = GAME.view_from_message

    def forgetting(msg: Any, kind: str | None, kept: Any) -> Any:
        nonlocal asked
        if msg.seat == 1:
            asked += 1
            if asked - 1 in forget_at:
                kept = None
        return decide(msg, kind, kept)

    GAME.view_from_message = forgetting  # type: ignore[method-assign]  # over the `sent` spy (undone by it)
    record = run_match_sync("history-restart", "take5", seats, seed=7, options=RefereeOptions(deadline_ms=5000))
    assert record.faults == ()
    views = [v for m, s, v in seen if s == 1]
    game_state = GAME.new_game(3, None, seed=7)
    partial = 0
    for d in record.decisions:
        if d["seat"] == 1:
            view = views.pop(0)
            expected = GAME.observe(game_state, 1)
            if view.history_first_turn or view.previous_history_first_turn:
                partial += 1
                f, pf = view.history_first_turn, view.previous_history_first_turn
                expected = dataclasses.replace(expected, history=expected.history[f:], history_first_turn=f,
                                               previous_history=expected.previous_history[pf:],
                                               previous_history_first_turn=pf)
            assert view == expected
        game_state = GAME.apply(game_state, d["seat"], GAME.action_from_dict(d["kind"], d["action"]))
    assert partial >= len(forget_at)  # from each loss to the end of its hand (and the next hand's turn 0)


def test_after_a_failed_call_the_next_view_is_complete_again(spy_server: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A call that got no answer (the bot down, failing or late) may mean the bot lost what it kept (a restart):
    the seat's next view carries the whole history again, not only the turns since its last answered decision."""
    messages: list[tuple[int, int, int, int]] = []  # seat 1: (hand, turn, history_first_turn, turns sent)
    decode, decide = GAME.view_from_message, GAME.decide

    def spying(msg: Any, kind: str | None, kept: Any) -> Any:
        if msg.seat == 1:
            messages.append((msg.hand_number, msg.turn, msg.history_first_turn, len(msg.history)))
        return decode(msg, kind, kept)

    def failing_once(bot: Any, view: Any) -> Any:
        if view.seat == 1 and view.hand_number == 0 and view.turn == 4 and view.kind == rules.CHOOSE_CARD \
                and not failed:
            failed.append(view.turn)
            raise RuntimeError("lost my state")
        return decide(bot, view)

    failed: list[int] = []
    monkeypatch.setattr(GAME, "view_from_message", spying)
    monkeypatch.setattr(GAME, "decide", failing_once)
    endpoint, _ = spy_server("take5")
    seats = [SeatSpec(f"spy{i}", endpoint) for i in range(3)]
    record = run_match_sync("history-after-fault", "take5", seats, seed=8, options=RefereeOptions(deadline_ms=5000))
    assert [(f.seat, f.kind) for f in record.faults] == [(1, "error")]
    at = next(i for i, m in enumerate(messages) if m[:2] == (0, 4))
    assert messages[at][2:] == (3, 1)  # before the fault: only the turn completed since its last answer
    hand, turn, first, sent_turns = messages[at + 1]
    assert (hand, first) == (0, 0) and sent_turns == turn >= 4  # after it: the whole hand's history again
    assert messages[at + 2][2] > 0  # and only what changed once it answers again


def test_decode_view_completes_from_what_it_kept() -> None:
    state = GAME.new_game(2, None, seed=1)
    kept = sent_before = None
    while not rules.is_over(state):
        for seat in rules.pending_seats(state):
            view = rules.observe(state, seat)
            if seat == 0:
                msg, sent_after = wire.encode_view(view, sent_before)
                got, kept = wire.decode_view(msg, view.kind, kept)
                assert got == view
                assert len(msg.history) <= 1 and len(msg.previous_history) <= 1
                sent_before = sent_after
                assert wire.view_from_proto(wire.view_to_proto(view), view.kind) == view
            state = rules.apply(state, seat, rules.default_action(state, seat))


@pytest.mark.parametrize("draft", [False, True])
def test_the_view_encoded_once_per_turn_equals_each_seats_own_encoding(draft: bool,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``Take5Game.view_message`` (and ``view_message_into``, which writes it into a request's view) copies the last
    (state, sent, kind) message for the next seat and replaces its seat and hand: for every seat of every state of
    random games, with the seat's real ``sent`` and with others (None, a stale hand), the message equals
    ``encode_view(observe(state, seat), sent)`` byte for byte."""
    import random

    encoded = []
    encode = wire.encode_view
    monkeypatch.setattr(wire, "encode_view", lambda *a: encoded.append(1) or encode(*a))
    rnd = random.Random(11 if draft else 7)
    calls = 0
    for seed in range(6):
        state = rules.new_game(4, rules.Take5Config(limit=30, draft=draft), seed=seed)
        sent: list[Any] = [None] * 4
        while not rules.is_over(state):
            pending = rules.pending_seats(state)
            for which in range(3):  # seats in a row with the same sent: the later ones copy the first's message
                for seat in pending:
                    given = (sent[seat], None, (state.hand_number - 1, 3, 0))[which]
                    msg, after = GAME.view_message(state, seat, given)
                    want, want_after = encode(rules.observe(state, seat), given)
                    assert msg.SerializeToString() == want.SerializeToString() and after == want_after
                    msg.hand.append(999)  # a caller that changes its message changes no other seat's
                    # the same written into a request's view (dirty from the last one), sharing the cache
                    request = bot_pb2.DecideRequest(take5=bot_pb2.Take5View(hand=[7], history_first_turn=3))
                    assert GAME.view_message_into(request.take5, state, seat, given) == want_after
                    assert request.take5.SerializeToString() == want.SerializeToString()
                    request.take5.hand.append(999)
                    calls += 2
            for seat in pending:
                sent[seat] = GAME.view_message(state, seat, sent[seat])[1]
            for seat in pending:
                state = rules.apply(state, seat, rnd.choice(rules.legal_actions(state, seat)))
    # most seats got a copy of the turn's message (the draft asks one seat at a time: fewer)
    assert len(encoded) < calls * (0.9 if draft else 0.5)
