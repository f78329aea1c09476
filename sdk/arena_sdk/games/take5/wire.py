"""Take 5 <-> ``arena.v1`` conversions (the ``take5`` fields of the wire oneofs) and the JSON forms of its
config, deals and actions used in match records and Redis.

Every ``*_from_*`` function validates what it reads and raises ``WireError`` naming the bad field, so a malformed
message from a bot or a client becomes a clear error, never a crash.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ...pb import bot_pb2
from ..base import RulesError, WireError, config_fields
from . import rules as take5

_LIMIT_RULES = {
    "at_least": bot_pb2.TAKE5_LIMIT_AT_LEAST,
    "more_than": bot_pb2.TAKE5_LIMIT_MORE_THAN,
}
_LIMIT_RULE_NAMES = {v: k for k, v in _LIMIT_RULES.items()}
_LIMIT_RULE_NAMES[bot_pb2.TAKE5_LIMIT_RULE_UNSPECIFIED] = "at_least"
_CONFIG_KEYS = tuple(f.name for f in config_fields(take5.Take5Config))  # limit, limit_rule, known_cards, draft


# --- configs -----------------------------------------------------------------------------------------------


def take5_config(limit: int = 66, limit_rule: str = "at_least", known_cards: bool = False,
                 draft: bool = False) -> take5.Take5Config:
    """A validated ``Take5Config``. Raises ``WireError`` for a limit outside 1..1000 or an unknown limit rule."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= take5.MAX_LIMIT:
        raise WireError(f"take5 limit must be 1..{take5.MAX_LIMIT} bullheads, got {limit!r}")
    if limit_rule not in _LIMIT_RULES:
        raise WireError(f"take5 limit_rule must be one of {sorted(_LIMIT_RULES)}, got {limit_rule!r}")
    for name, value in (("known_cards", known_cards), ("draft", draft)):
        if not isinstance(value, bool):
            raise WireError(f"take5 {name} must be true or false, got {value!r}")
    try:
        return take5.Take5Config(limit=limit, limit_rule=limit_rule,  # type: ignore[arg-type]
                                 known_cards=known_cards, draft=draft)
    except RulesError as exc:
        raise WireError(str(exc)) from exc


def config_to_proto(config: take5.Take5Config) -> bot_pb2.Take5Config:
    """``Take5Config`` message of a config dataclass."""
    return bot_pb2.Take5Config(
        limit=config.limit,
        limit_rule=_LIMIT_RULES[config.limit_rule],
        known_cards=config.known_cards,
        draft=config.draft,
    )


def config_from_proto(msg: bot_pb2.Take5Config | None) -> take5.Take5Config:
    """Config from a ``Take5Config`` message; zero fields take the documented defaults (limit 66, ``>=``); None
    means all defaults. Raises ``WireError`` for an unknown limit rule or a limit over 1000."""
    if msg is None:
        return take5.Take5Config()
    if msg.limit_rule not in _LIMIT_RULE_NAMES:
        raise WireError(f"unknown take5 limit_rule value {msg.limit_rule}")
    return take5_config(msg.limit or 66, _LIMIT_RULE_NAMES[msg.limit_rule], msg.known_cards, msg.draft)


def config_to_dict(config: take5.Take5Config) -> dict[str, Any]:
    """JSON form of a config: ``{"limit": 66, "limit_rule": "at_least", "known_cards": false, "draft": false}``."""
    return {
        "limit": config.limit,
        "limit_rule": config.limit_rule,
        "known_cards": config.known_cards,
        "draft": config.draft,
    }


def config_from_dict(d: Mapping[str, Any] | None) -> take5.Take5Config:
    """Config from its JSON form; missing keys take the defaults. Raises ``WireError`` on unknown keys or bad
    values."""
    if d is not None and not isinstance(d, Mapping):
        raise WireError(f"a take5 config must be an object, got {d!r}")
    d = dict(d or {})
    unknown = set(d) - set(_CONFIG_KEYS)
    if unknown:
        raise WireError(f"unknown take5 config keys: {sorted(unknown)}")
    return take5_config(**d)


# --- deals -------------------------------------------------------------------------------------------------


def deal_to_dict(deal: take5.Take5Deal) -> dict[str, Any]:
    """JSON form of a deal: ``{"hands": [[...], ...], "rows": [...], "pool": [...]}``."""
    return {"hands": [list(h) for h in deal.hands], "rows": list(deal.rows), "pool": list(deal.pool)}


def deal_from_dict(d: Mapping[str, Any]) -> take5.Take5Deal:
    """Deal from its JSON form. Raises ``WireError`` when a field is not a list of integers. (The engine checks
    sizes and duplicates when the deal is used.)"""
    try:
        return take5.Take5Deal(
            hands=tuple(tuple(_ints(h, "hands")) for h in d.get("hands", ())),
            rows=tuple(_ints(d.get("rows", ()), "rows")),
            pool=tuple(_ints(d.get("pool", ()), "pool")),
        )
    except (AttributeError, TypeError) as exc:
        raise WireError(f"malformed deal {d!r}: {exc}") from exc


def _ints(values: Any, name: str) -> list[int]:
    out = list(values)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in out):
        raise WireError(f"deal field {name!r} must hold integers, got {values!r}")
    return out


# --- views -------------------------------------------------------------------------------------------------


def _picks_to_proto(picks: tuple[take5.Pick, ...]) -> list[bot_pb2.Take5Pick]:
    return [bot_pb2.Take5Pick(seat=p.seat, card=p.card) for p in picks]


def _turns_to_proto(turns: tuple[take5.Turn, ...]) -> list[bot_pb2.Take5Turn]:
    return [
        bot_pb2.Take5Turn(
            turn=t.turn,
            plays=[
                bot_pb2.Take5Play(seat=p.seat, card=p.card, row=p.row, taken=p.taken, chose_row=p.chose_row)
                for p in t.plays
            ],
        )
        for t in turns
    ]


def _turns_from_proto(turns: Any) -> tuple[take5.Turn, ...]:
    # Repeated fields are read by slicing (``[:]``, a list in one C call), 2-3 times faster than iterating the
    # container; the frozen dataclasses are filled like ``_filled`` (same objects as their constructors make).
    out = []
    for t in turns[:]:
        plays = []
        for p in t.plays[:]:
            play = _new(_Play)
            play.__dict__.update(seat=p.seat, card=p.card, row=p.row, taken=tuple(p.taken[:]),
                                 chose_row=p.chose_row)
            plays.append(play)
        turn = _new(_Turn)
        turn.__dict__.update(turn=t.turn, plays=tuple(plays))
        out.append(turn)
    return tuple(out)


_new = object.__new__
_Play, _Turn, _Pick, _View = take5.Play, take5.Turn, take5.Pick, take5.Take5View
_VIEW_FIELDS = tuple(_View.__dataclass_fields__)  # in declaration order


def _picks_from_proto(picks: Any) -> tuple[take5.Pick, ...]:
    out = []
    for p in picks[:]:
        pick = _new(_Pick)
        pick.__dict__.update(seat=p.seat, card=p.card)
        out.append(pick)
    return tuple(out)


def view_to_proto(view: take5.Take5View, history_first_turn: int = 0,
                  previous_history_first_turn: int = 0) -> bot_pb2.Take5View:
    """``Take5View`` message of an engine view (what the referee sends in ``DecideRequest.take5``), leaving out
    the first ``history_first_turn`` turns of ``view.history`` and the first ``previous_history_first_turn`` of
    ``view.previous_history`` (turns the seat's bot was sent before and keeps; see ``encode_view``)."""
    return bot_pb2.Take5View(
        seat=view.seat,
        num_players=view.num_players,
        config=config_to_proto(view.config),
        hand_number=view.hand_number,
        turn=view.turn,
        hand=view.hand,
        rows=[bot_pb2.Take5Row(cards=r) for r in view.rows],
        totals=view.totals,
        hand_penalties=view.hand_penalties,
        history=_turns_to_proto(view.history[history_first_turn:]),
        previous_history=_turns_to_proto(view.previous_history[previous_history_first_turn:]),
        resolving_card=view.resolving_card or 0,
        revealed=_picks_to_proto(view.revealed),
        draft_pool=view.draft_pool,
        draft_picks=_picks_to_proto(view.draft_picks),
        history_first_turn=history_first_turn + view.history_first_turn,
        previous_history_first_turn=previous_history_first_turn + view.previous_history_first_turn,
    )


# What a seat's bot was sent and keeps: (hand number, turns of that hand's history, turns of its previous_history),
# counts of turns (referee side, ``encode_view``).
Sent = tuple[int, int, int]
# What the SDK keeps of a (match, seat): (hand number, the turns of that hand's history it has and the number of
# the first of them, the same for that hand's previous_history); the first is 0 unless the bot lost its state
# mid-match (bot side, ``decode_view``).
Kept = tuple[int, "tuple[take5.Turn, ...]", int, "tuple[take5.Turn, ...]", int]


def encode_view(view: take5.Take5View, sent: Sent | None) -> tuple[bot_pb2.Take5View, Sent]:
    """The message of ``view`` for a bot that keeps the history (``StartMatchResponse.keeps_history``) and was
    sent ``sent`` by earlier requests of this match that it answered (None: nothing), and what it has been sent
    once it has this message too.

    Only the turns the bot lacks travel: ``history`` from ``history_first_turn`` on (turns of the same hand sent
    before are left out) and ``previous_history`` from ``previous_history_first_turn`` on (the previous hand's
    turns, sent before as that hand's history or as this hand's previous_history). Everything else (hand, rows,
    totals, penalties, the decision's fields) is the complete current state. Time: what changed, not the hand's
    length."""
    first = prev_first = 0
    if sent is not None:
        hand, n_history, n_previous = sent
        if hand == view.hand_number:
            first, prev_first = n_history, n_previous
        elif hand == view.hand_number - 1:
            prev_first = n_history
        first = min(first, len(view.history))
        prev_first = min(prev_first, len(view.previous_history))
    return (view_to_proto(view, first, prev_first),
            (view.hand_number, len(view.history), len(view.previous_history)))


def decode_view(msg: bot_pb2.Take5View, kind: str | None, kept: Kept | None) -> tuple[take5.Take5View, Kept]:
    """The engine view of a message that may leave out turns sent before (``encode_view``), completed with the
    turns ``kept`` from the earlier messages of the same (match, seat) (None: none), and what to keep from it.

    The view equals the referee's ``observe`` whenever the left-out turns are kept here; when they are not (the
    bot restarted mid-match), its history starts at ``history_first_turn`` (and ``previous_history`` at
    ``previous_history_first_turn``), where the first message after the loss started, and grows from there.
    Decodes only the turns the message carries. Raises ``WireError`` as ``view_from_proto``."""
    first, prev_first = msg.history_first_turn, msg.previous_history_first_turn
    history = _turns_from_proto(msg.history)
    previous = _turns_from_proto(msg.previous_history)
    hand = msg.hand_number
    if kept is not None and (first or prev_first):
        kept_hand, kept_history, kept_first, kept_previous, kept_prev_first = kept
        if first and kept_hand == hand and kept_first <= first <= kept_first + len(kept_history):
            history = kept_history[:first - kept_first] + history
            first = kept_first
        if prev_first:
            if kept_hand == hand:
                earlier, earlier_first = kept_previous, kept_prev_first
            elif kept_hand == hand - 1:  # the previous hand's turns came as that hand's history
                earlier, earlier_first = kept_history, kept_first
            else:
                earlier, earlier_first = (), prev_first
            if earlier_first <= prev_first <= earlier_first + len(earlier):
                previous = earlier[:prev_first - earlier_first] + previous
                prev_first = earlier_first
    view = _view_from_proto(msg, kind, history, previous, first, prev_first)
    return view, (hand, history, first, previous, prev_first)


def view_from_proto(msg: bot_pb2.Take5View, kind: str | None = None) -> take5.Take5View:
    """Engine view from a ``Take5View`` message, with ``kind`` (a ``DecisionKind`` name) as the pending decision;
    the message's history as it is (see ``decode_view`` for one that leaves out turns sent before).

    Raises ``WireError`` when the message is inconsistent: seat not below num_players, num_players outside 2..10,
    not 4 rows outside the draft, a card outside 1..104, totals of the wrong length.
    """
    return _view_from_proto(msg, kind, _turns_from_proto(msg.history), _turns_from_proto(msg.previous_history),
                            msg.history_first_turn, msg.previous_history_first_turn)


def _view_from_proto(msg: bot_pb2.Take5View, kind: str | None, history: tuple[take5.Turn, ...],
                     previous: tuple[take5.Turn, ...], first: int, prev_first: int) -> take5.Take5View:
    n = msg.num_players
    if not take5.MIN_PLAYERS <= n <= take5.MAX_PLAYERS:
        raise WireError(f"view.num_players must be {take5.MIN_PLAYERS}..{take5.MAX_PLAYERS}, got {n}")
    seat = msg.seat
    if seat >= n:
        raise WireError(f"view.seat {seat} is not below num_players {n}")
    totals, penalties = tuple(msg.totals[:]), tuple(msg.hand_penalties[:])
    if len(totals) != n or len(penalties) != n:
        raise WireError(f"view.totals and view.hand_penalties must hold {n} values")
    rows = tuple([tuple(r.cards[:]) for r in msg.rows[:]])
    if rows and len(rows) != take5.NUM_ROWS:
        raise WireError(f"view.rows must hold {take5.NUM_ROWS} rows, got {len(rows)}")
    hand, pool = tuple(msg.hand[:]), tuple(msg.draft_pool[:])
    cards = list(hand)
    for row in rows:
        cards += row
    cards += pool
    if cards and (min(cards) < 1 or max(cards) > take5.DECK_SIZE):
        bad = [c for c in cards if not 1 <= c <= take5.DECK_SIZE]
        raise WireError(f"view holds cards outside 1..{take5.DECK_SIZE}: {bad}")
    if len(set(cards)) != len(cards):
        repeated = sorted({c for c in cards if cards.count(c) > 1})
        raise WireError(f"view holds cards twice (hand, rows and draft pool share {repeated})")
    if len(hand) > take5.HAND_SIZE:
        raise WireError(f"view.hand holds {len(hand)} cards, at most {take5.HAND_SIZE}")
    drafting = not any(rows)  # the rows start only after the draft
    for i, row in enumerate(rows):
        if not drafting and not 1 <= len(row) <= take5.ROW_CAPACITY or list(row) != sorted(row):
            raise WireError(f"view.rows[{i}] must hold 1..{take5.ROW_CAPACITY} ascending cards, got {list(row)}")
    c = msg.config
    config = _config_of(c.limit, c.limit_rule, c.known_cards, c.draft)
    # ``take5.Take5View(...)`` filled directly (no ``__post_init__``, no slots: the same frozen object, as
    # ``rules._evolve`` does), in the order of _VIEW_FIELDS
    view = _new(_View)
    view.__dict__.update(zip(_VIEW_FIELDS, (
        seat, n, config, msg.hand_number, msg.turn, hand, rows, totals, penalties, history, previous, kind,
        msg.resolving_card or None, _picks_from_proto(msg.revealed), pool, _picks_from_proto(msg.draft_picks),
        first, prev_first)))
    return view


@functools.lru_cache(maxsize=64)
def _config_of(limit: int, limit_rule: int, known_cards: bool, draft: bool) -> take5.Take5Config:
    """``config_from_proto`` by the message's field values (a match sends the same config in every view)."""
    return config_from_proto(bot_pb2.Take5Config(limit=limit, limit_rule=limit_rule,  # type: ignore[arg-type]
                                                 known_cards=known_cards, draft=draft))


# --- actions -----------------------------------------------------------------------------------------------


def action_to_proto(action: take5.Take5Action) -> bot_pb2.Take5Action:
    """``Take5Action`` message of an action. Raises ``WireError`` for an object that is not a Take 5 action."""
    if isinstance(action, take5.ChooseRow):
        return bot_pb2.Take5Action(row=action.row)
    if isinstance(action, (take5.ChooseCard, take5.DraftPick)):
        return bot_pb2.Take5Action(card=action.card)
    raise WireError(f"not a Take 5 action: {action!r}")


def action_to_dict(action: take5.Take5Action) -> dict[str, Any]:
    """JSON form of an action: ``{"card": 17}`` or ``{"row": 2}`` (the kind is recorded beside it)."""
    if isinstance(action, take5.ChooseRow):
        return {"row": action.row}
    return {"card": action.card}


def action_from_dict(kind: str, d: Any) -> take5.Take5Action:
    """Action of decision ``kind`` from its JSON form. Raises ``WireError`` when the field does not match."""
    field = "row" if kind == take5.CHOOSE_ROW else "card"
    value = d.get(field) if isinstance(d, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or set(d) != {field}:
        raise WireError(f"{kind} action must be {{{field!r}: int}}, got {d!r}")
    return make_action(kind, value)


def make_action(kind: str, value: int) -> take5.Take5Action:
    """The action of decision ``kind`` with the card or row ``value``. Raises ``WireError`` for another kind."""
    if kind == take5.CHOOSE_CARD:
        return take5.ChooseCard(value)
    if kind == take5.CHOOSE_ROW:
        return take5.ChooseRow(value)
    if kind == take5.DRAFT_PICK:
        return take5.DraftPick(value)
    raise WireError(f"unknown decision kind {kind!r}")


def action_from_proto(kind: str, msg: bot_pb2.Take5Action) -> take5.Take5Action:
    """The Take 5 action of decision ``kind`` (a ``DecisionKind`` name) carried by a ``Take5Action`` message.

    Raises ``WireError`` for the wrong field for the kind (a row for a card choice, a card for a row choice).
    Legality (card in hand, row 0..3) is the engine's job.
    """
    field = msg.WhichOneof("choice")
    expected = "row" if kind == take5.CHOOSE_ROW else "card"
    if field != expected:
        raise WireError(f"{kind} needs Take5Action.{expected}, the response set {field or 'nothing'}")
    return make_action(kind, getattr(msg, field))
