"""Conversions between the rules engines' frozen dataclasses and the arena.v1 protobuf messages, plus the JSON
form of configs and deals used in match records and Redis.

One place for each conversion, shared by the referee (engine -> wire) and the SDK (wire -> engine). Every
``*_from_*`` function validates what it reads and raises ``WireError`` (a ``ValueError``) naming the bad field, so
a malformed message from a bot or a client becomes a clear error, never a crash.
"""

from __future__ import annotations

from typing import Any

from .games import take5
from .pb import bot_pb2


class WireError(ValueError):
    """A protobuf message or JSON document that does not describe a valid value; the message says which field."""


_LIMIT_RULES = {
    "at_least": bot_pb2.TAKE5_LIMIT_AT_LEAST,
    "more_than": bot_pb2.TAKE5_LIMIT_MORE_THAN,
}
_LIMIT_RULE_NAMES = {v: k for k, v in _LIMIT_RULES.items()}
_LIMIT_RULE_NAMES[bot_pb2.TAKE5_LIMIT_RULE_UNSPECIFIED] = "at_least"

KNOWN_GAMES = (take5.GAME_ID,)
# Highest accepted Take 5 limit: every hand hands out at least one bullhead, so a game lasts at most this many
# hands; the cap keeps a match (and a worker slot) from running for days. The rules' default is 66.
MAX_TAKE5_LIMIT = 1000


def _check_game(game: str) -> None:
    if game not in KNOWN_GAMES:
        raise WireError(f"unknown game {game!r}; known games: {', '.join(KNOWN_GAMES)}")


# --- configs -----------------------------------------------------------------------------------------------


def take5_config(limit: int = 66, limit_rule: str = "at_least", known_cards: bool = False,
                 draft: bool = False) -> take5.Take5Config:
    """A validated ``Take5Config``. Raises ``WireError`` for a limit < 1 or an unknown limit rule."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_TAKE5_LIMIT:
        raise WireError(f"take5 limit must be 1..{MAX_TAKE5_LIMIT} bullheads, got {limit!r}")
    if limit_rule not in _LIMIT_RULES:
        raise WireError(f"take5 limit_rule must be one of {sorted(_LIMIT_RULES)}, got {limit_rule!r}")
    return take5.Take5Config(limit=limit, limit_rule=limit_rule,  # type: ignore[arg-type]
                             known_cards=bool(known_cards), draft=bool(draft))


def config_to_proto(game: str, config: Any) -> bot_pb2.GameConfig:
    """``GameConfig`` message of ``config`` (a game's config dataclass). Raises ``WireError`` for an unknown game."""
    _check_game(game)
    return bot_pb2.GameConfig(
        take5=bot_pb2.Take5Config(
            limit=config.limit,
            limit_rule=_LIMIT_RULES[config.limit_rule],
            known_cards=config.known_cards,
            draft=config.draft,
        )
    )


def config_from_proto(game: str, msg: bot_pb2.GameConfig | None) -> take5.Take5Config:
    """Config dataclass from a ``GameConfig`` message; zero fields take the documented defaults (limit 66,
    ``>=``). An absent message means all defaults. Raises ``WireError`` when the message is for another game."""
    _check_game(game)
    if msg is None or msg.WhichOneof("game") is None:
        return take5.Take5Config()
    if msg.WhichOneof("game") != game:
        raise WireError(f"config is for game {msg.WhichOneof('game')!r}, expected {game!r}")
    c = msg.take5
    if c.limit_rule not in _LIMIT_RULE_NAMES:
        raise WireError(f"unknown take5 limit_rule value {c.limit_rule}")
    return take5_config(c.limit or 66, _LIMIT_RULE_NAMES[c.limit_rule], c.known_cards, c.draft)


def config_to_dict(game: str, config: Any) -> dict[str, Any]:
    """JSON form of a config: ``{"limit": 66, "limit_rule": "at_least", "known_cards": false, "draft": false}``."""
    _check_game(game)
    return {
        "limit": config.limit,
        "limit_rule": config.limit_rule,
        "known_cards": config.known_cards,
        "draft": config.draft,
    }


def config_from_dict(game: str, d: dict[str, Any] | None) -> take5.Take5Config:
    """Config dataclass from its JSON form; missing keys take the defaults. Raises ``WireError`` on unknown keys
    or bad values."""
    _check_game(game)
    d = dict(d or {})
    unknown = set(d) - {"limit", "limit_rule", "known_cards", "draft"}
    if unknown:
        raise WireError(f"unknown take5 config keys: {sorted(unknown)}")
    return take5_config(**d)


# --- deals -------------------------------------------------------------------------------------------------


def deal_to_dict(deal: take5.Take5Deal) -> dict[str, Any]:
    """JSON form of a deal: ``{"hands": [[...], ...], "rows": [...], "pool": [...]}``."""
    return {"hands": [list(h) for h in deal.hands], "rows": list(deal.rows), "pool": list(deal.pool)}


def deal_from_dict(d: dict[str, Any]) -> take5.Take5Deal:
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


def view_to_proto(view: take5.Take5View) -> bot_pb2.Take5View:
    """``Take5View`` message of an engine view (what the referee sends in ``DecideRequest.take5``)."""
    return bot_pb2.Take5View(
        seat=view.seat,
        num_players=view.num_players,
        config=config_to_proto(take5.GAME_ID, view.config).take5,
        hand_number=view.hand_number,
        turn=view.turn,
        hand=view.hand,
        rows=[bot_pb2.Take5Row(cards=r) for r in view.rows],
        totals=view.totals,
        hand_penalties=view.hand_penalties,
        history=[
            bot_pb2.Take5Turn(
                turn=t.turn,
                plays=[
                    bot_pb2.Take5Play(seat=p.seat, card=p.card, row=p.row, taken=p.taken, chose_row=p.chose_row)
                    for p in t.plays
                ],
            )
            for t in view.history
        ],
        resolving_card=view.resolving_card or 0,
        revealed=_picks_to_proto(view.revealed),
        draft_pool=view.draft_pool,
        draft_picks=_picks_to_proto(view.draft_picks),
    )


def view_from_proto(msg: bot_pb2.Take5View, kind: str | None = None) -> take5.Take5View:
    """Engine view from a ``Take5View`` message, with ``kind`` (a ``DecisionKind`` name) as the pending decision.

    Raises ``WireError`` when the message is inconsistent: seat not below num_players, num_players outside 2..10,
    not 4 rows outside the draft, a card outside 1..104, totals of the wrong length.
    """
    n = msg.num_players
    if not take5.MIN_PLAYERS <= n <= take5.MAX_PLAYERS:
        raise WireError(f"view.num_players must be {take5.MIN_PLAYERS}..{take5.MAX_PLAYERS}, got {n}")
    if msg.seat >= n:
        raise WireError(f"view.seat {msg.seat} is not below num_players {n}")
    if len(msg.totals) != n or len(msg.hand_penalties) != n:
        raise WireError(f"view.totals and view.hand_penalties must hold {n} values")
    rows = tuple(tuple(r.cards) for r in msg.rows)
    if rows and len(rows) != take5.NUM_ROWS:
        raise WireError(f"view.rows must hold {take5.NUM_ROWS} rows, got {len(rows)}")
    cards = [*msg.hand, *(c for r in rows for c in r), *msg.draft_pool]
    bad = [c for c in cards if not 1 <= c <= take5.DECK_SIZE]
    if bad:
        raise WireError(f"view holds cards outside 1..{take5.DECK_SIZE}: {bad}")
    if len(set(cards)) != len(cards):
        repeated = sorted({c for c in cards if cards.count(c) > 1})
        raise WireError(f"view holds cards twice (hand, rows and draft pool share {repeated})")
    if len(msg.hand) > take5.HAND_SIZE:
        raise WireError(f"view.hand holds {len(msg.hand)} cards, at most {take5.HAND_SIZE}")
    drafting = all(not row for row in rows)  # the rows start only after the draft
    for i, row in enumerate(rows):
        if not drafting and not 1 <= len(row) <= take5.ROW_CAPACITY or list(row) != sorted(row):
            raise WireError(f"view.rows[{i}] must hold 1..{take5.ROW_CAPACITY} ascending cards, got {list(row)}")
    config = config_from_proto(take5.GAME_ID, bot_pb2.GameConfig(take5=msg.config))
    return take5.Take5View(
        seat=msg.seat,
        num_players=n,
        config=config,
        hand_number=msg.hand_number,
        turn=msg.turn,
        hand=tuple(msg.hand),
        rows=rows,
        totals=tuple(msg.totals),
        hand_penalties=tuple(msg.hand_penalties),
        history=tuple(
            take5.Turn(
                turn=t.turn,
                plays=tuple(
                    take5.Play(seat=p.seat, card=p.card, row=p.row, taken=tuple(p.taken), chose_row=p.chose_row)
                    for p in t.plays
                ),
            )
            for t in msg.history
        ),
        kind=kind,
        resolving_card=msg.resolving_card or None,
        revealed=tuple(take5.Pick(p.seat, p.card) for p in msg.revealed),
        draft_pool=tuple(msg.draft_pool),
        draft_picks=tuple(take5.Pick(p.seat, p.card) for p in msg.draft_picks),
    )


# --- actions -----------------------------------------------------------------------------------------------


def action_to_proto(action: take5.Take5Action) -> bot_pb2.DecideResponse:
    """``DecideResponse`` carrying ``action``. Raises ``WireError`` for an object that is not a Take 5 action."""
    if isinstance(action, take5.ChooseRow):
        return bot_pb2.DecideResponse(take5=bot_pb2.Take5Action(row=action.row))
    if isinstance(action, (take5.ChooseCard, take5.DraftPick)):
        return bot_pb2.DecideResponse(take5=bot_pb2.Take5Action(card=action.card))
    raise WireError(f"not a Take 5 action: {action!r}")


def action_to_dict(action: take5.Take5Action) -> dict[str, int]:
    """JSON form of an action: ``{"card": 17}`` or ``{"row": 2}`` (the kind is recorded beside it)."""
    if isinstance(action, take5.ChooseRow):
        return {"row": action.row}
    return {"card": action.card}


def action_from_dict(kind: str, d: dict[str, Any]) -> take5.Take5Action:
    """Action of decision ``kind`` from its JSON form. Raises ``WireError`` when the field does not match."""
    field = "row" if kind == take5.CHOOSE_ROW else "card"
    value = d.get(field) if isinstance(d, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or set(d) != {field}:
        raise WireError(f"{kind} action must be {{{field!r}: int}}, got {d!r}")
    return _make_action(kind, value)


def _make_action(kind: str, value: int) -> take5.Take5Action:
    if kind == take5.CHOOSE_CARD:
        return take5.ChooseCard(value)
    if kind == take5.CHOOSE_ROW:
        return take5.ChooseRow(value)
    if kind == take5.DRAFT_PICK:
        return take5.DraftPick(value)
    raise WireError(f"unknown decision kind {kind!r}")


def action_from_proto(kind: str, response: bot_pb2.DecideResponse) -> take5.Take5Action:
    """The Take 5 action of decision ``kind`` (a ``DecisionKind`` name) carried by a bot's ``DecideResponse``.

    Raises ``WireError`` when the response holds no Take 5 action, or the wrong field for the kind (a row for a
    card choice, a card for a row choice). Legality (card in hand, row 0..3) is the engine's job.
    """
    if response.WhichOneof("action") != "take5":
        raise WireError("response carries no take5 action")
    field = response.take5.WhichOneof("choice")
    expected = "row" if kind == take5.CHOOSE_ROW else "card"
    if field != expected:
        raise WireError(f"{kind} needs Take5Action.{expected}, the response set {field or 'nothing'}")
    return _make_action(kind, getattr(response.take5, field))


def kind_name(kind: int) -> str:
    """``DecisionKind`` enum value -> name. Raises ``WireError`` for an unknown or unspecified kind."""
    try:
        name = bot_pb2.DecisionKind.Name(kind)
    except ValueError as exc:
        raise WireError(f"unknown decision kind value {kind}") from exc
    if name == "DECISION_KIND_UNSPECIFIED":
        raise WireError("decision kind is unspecified")
    return name


def kind_value(name: str) -> int:
    """``DecisionKind`` name -> enum value. Raises ``WireError`` for an unknown name."""
    try:
        return bot_pb2.DecisionKind.Value(name)
    except ValueError as exc:
        raise WireError(f"unknown decision kind {name!r}") from exc
