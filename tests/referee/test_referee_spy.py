"""Nothing hidden leaves the referee (STYLE.md habit 3, DESIGN.md "Protocol sketch"): a spy bot process records
every DecideRequest it receives; no request may hold a card of another seat's hand (unless that seat played or
drafted it in public), an unused card of the deck, or anything but the asked seat's own view."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path

from arena.match.options import RefereeOptions
from arena.match.record import MatchRecord, SeatSpec
from arena.match.referee import run_match_sync
from arena.match.replay import replay
from arena_sdk import wire
from arena_sdk.games import take5
from arena_sdk.games.take5 import wire as take5_wire
from arena_sdk.pb import bot_pb2

from .conftest import seat, walk


def read_spy_log(path: Path) -> list[bot_pb2.DecideRequest]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        out.append(bot_pb2.DecideRequest.FromString(base64.b64decode(entry["message"])))
    return out


def cards_seen(view: bot_pb2.Take5View) -> set[int]:
    cards = set(view.hand) | set(view.draft_pool) | {view.resolving_card}
    cards |= {c for r in view.rows for c in r.cards}
    cards |= {p.card for p in view.revealed} | {p.card for p in view.draft_picks}
    for t in view.history:
        for p in t.plays:
            cards.add(p.card)
            cards.update(p.taken)
    cards.discard(0)
    return cards


def public_owner(view: bot_pb2.Take5View) -> dict[int, int]:
    """card -> seat, for every card a seat has played or drafted in public (this hand)."""
    owner = {p.card: p.seat for p in view.draft_picks}
    owner.update({p.card: p.seat for p in view.revealed})
    for t in view.history:
        owner.update({p.card: p.seat for p in t.plays})
    return owner


def leaks(request: bot_pb2.DecideRequest, record: MatchRecord) -> list[str]:
    """What ``request`` shows that its seat must not see, given the deals the record's seed derives."""
    view = request.take5
    n = len(record.seats)
    config = wire.config_from_dict(record.game, record.config)
    deal = take5.deal_hand(record.seed, view.hand_number, n, config)
    seen = cards_seen(view)
    problems = []
    if view.seat != request.seat:
        problems.append(f"request for seat {request.seat} carries the view of seat {view.seat}")
    in_play = set(deal.pool) if config.draft else {c for h in deal.hands for c in h} | set(deal.rows)
    if seen - in_play:
        problems.append(f"unused cards {sorted(seen - in_play)} shown to seat {request.seat}")
    if not config.draft:
        if not set(view.hand) <= set(deal.hands[request.seat]):
            problems.append(f"seat {request.seat}'s hand {list(view.hand)} is not from its deal")
        owner = public_owner(view)
        for other, hand in enumerate(deal.hands):
            if other == request.seat:
                continue
            hidden = {c for c in seen & set(hand) if owner.get(c) != other}
            if hidden:
                problems.append(f"seat {request.seat} sees cards {sorted(hidden)} of seat {other}'s hand")
    return problems


def check_requests_match_record(requests: list[bot_pb2.DecideRequest], record: MatchRecord) -> None:
    """One request per recorded decision, with the record's seat, kind, hand, turn and sequence, carrying
    exactly ``observe(state, seat)`` of the state the decision was asked in. A decision asked again because the
    referee was late (``retries``) is the same request again (unless the late attempt never reached the bot);
    decisions not asked (forfeit, time limit) have none."""
    asked = [d for d in record.decisions if d["seq"] is not None]
    assert len(asked) <= len(requests) <= sum(1 + d.get("retries", 0) for d in asked)  # a late attempt may be lost
    by_seat: dict[int, list[bot_pb2.DecideRequest]] = {}
    for r in requests:
        if not by_seat.get(r.seat) or by_seat[r.seat][-1].sequence != r.sequence:  # a re-ask repeats a request
            by_seat.setdefault(r.seat, []).append(r)
    position = Counter()
    for state, dec in walk(record):
        if dec["seq"] is None:
            continue
        req = by_seat[dec["seat"]][position[dec["seat"]]]
        position[dec["seat"]] += 1
        assert req.match_id == record.match_id
        assert (req.sequence, wire.kind_name(req.kind)) == (dec["seq"], dec["kind"])
        assert (req.take5.hand_number, req.take5.turn) == (dec["hand"], dec["turn"])
        sent = take5_wire.view_from_proto(req.take5, dec["kind"])
        # A simultaneous batch is asked from one state, before any answer of the batch is applied.
        expected = take5.observe(state, dec["seat"])
        assert sent.hand == expected.hand and sent.rows == expected.rows and sent.history == expected.history
        assert sent.totals == expected.totals and sent.revealed == expected.revealed


def test_spy_in_every_seat_sees_only_its_own_view(test_bot, tmp_path) -> None:
    log = tmp_path / "spy.jsonl"
    spy = test_bot("spy_bot", "--log", str(log))
    seats = [SeatSpec(f"spy{i}", spy.endpoint) for i in range(4)]
    record = run_match_sync("spy-all", "take5", seats, take5.Take5Config(limit=30), seed=31,
                            options=RefereeOptions(deadline_ms=5000))
    assert record.faults == () and replay(record) == []
    requests = read_spy_log(log)
    assert {r.take5.hand_number for r in requests} == {d["hand"] for d in record.decisions}
    assert len({r.take5.hand_number for r in requests}) >= 2  # several hands, so several deals checked
    kinds = Counter(wire.kind_name(r.kind) for r in requests)
    assert kinds[take5.CHOOSE_ROW] > 0  # rule-4 requests (with revealed cards) were checked too
    problems = [p for r in requests for p in leaks(r, record)]
    assert problems == []
    check_requests_match_record(requests, record)


def test_spy_among_sample_bots(seats_of, test_bot, tmp_path) -> None:
    log = tmp_path / "spy.jsonl"
    spy = test_bot("spy_bot", "--log", str(log))
    seats = [*seats_of("random1", "heuristic"), seat(spy), *seats_of("random2")]
    record = run_match_sync("spy-one", "take5", seats, take5.Take5Config(limit=20), seed=32,
                            options=RefereeOptions(deadline_ms=5000))
    requests = read_spy_log(log)
    assert {r.seat for r in requests} == {2}
    assert len(requests) == sum(d["seat"] == 2 for d in record.decisions)
    assert [p for r in requests for p in leaks(r, record)] == []


def test_spy_in_the_draft_never_sees_unused_cards(test_bot, tmp_path) -> None:
    log = tmp_path / "spy.jsonl"
    spy = test_bot("spy_bot", "--log", str(log))
    seats = [SeatSpec(f"spy{i}", spy.endpoint) for i in range(3)]
    config = take5.Take5Config(limit=10, draft=True)  # all 104 cards exist, only 34 are in play each hand
    record = run_match_sync("spy-draft", "take5", seats, config, seed=33, options=RefereeOptions(deadline_ms=5000))
    requests = read_spy_log(log)
    assert Counter(wire.kind_name(r.kind) for r in requests)[take5.DRAFT_PICK] >= 30
    assert [p for r in requests for p in leaks(r, record)] == []
    check_requests_match_record(requests, record)


def test_leak_check_detects_a_leak(test_bot, tmp_path) -> None:
    """The checker itself: a request that shows another seat's unplayed card is caught."""
    log = tmp_path / "spy.jsonl"
    spy = test_bot("spy_bot", "--log", str(log))
    seats = [SeatSpec(f"spy{i}", spy.endpoint) for i in range(3)]
    record = run_match_sync("spy-x", "take5", seats, take5.Take5Config(limit=1), seed=34,
                            options=RefereeOptions(deadline_ms=5000))
    request = read_spy_log(log)[0]
    deal = take5.deal_hand(34, 0, 3, take5.Take5Config(limit=1))
    other = (request.seat + 1) % 3
    request.take5.hand.append(deal.hands[other][0])
    assert any(f"of seat {other}'s hand" in p for p in leaks(request, record))


def test_leak_check_detects_an_unused_card(test_bot, tmp_path) -> None:
    log = tmp_path / "spy.jsonl"
    spy = test_bot("spy_bot", "--log", str(log))
    seats = [SeatSpec(f"spy{i}", spy.endpoint) for i in range(3)]
    record = run_match_sync("spy-y", "take5", seats, take5.Take5Config(limit=1), seed=35,
                            options=RefereeOptions(deadline_ms=5000))
    request = read_spy_log(log)[0]
    deal = take5.deal_hand(35, 0, 3, take5.Take5Config(limit=1))
    unused = min(set(range(1, 105)) - {c for h in deal.hands for c in h} - set(deal.rows))
    request.take5.rows[0].cards.append(unused)
    assert any(f"unused cards [{unused}]" in p for p in leaks(request, record))
