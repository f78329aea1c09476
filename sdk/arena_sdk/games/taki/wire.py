"""Taki <-> ``arena.v1`` conversions (the ``taki`` fields of the wire oneofs) and the JSON forms of its config,
deal and actions used in match records and Redis.

Cards travel as their text tokens (``"R5"``, ``"Y+2"``, ``"KING"``; see ``cards.py``) on the wire and in JSON.
Every ``*_from_*`` function validates what it reads and raises ``WireError`` naming the bad field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...pb import bot_pb2
from ..base import RulesError, WireError, config_fields
from . import cards as C
from .state import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    REACT,
    TURN,
    Draw,
    EndTurn,
    Event,
    PlayCard,
    React,
    RunInfo,
    TakiAction,
    TakiConfig,
    TakiDeal,
    TakiView,
)

_CONFIG_KEYS = tuple(f.name for f in config_fields(TakiConfig))  # every field of TakiConfig, in order
_STEPS = ("turn", "stack", "run", "plus", "king", "react")
_MAX_HISTORY = 100_000  # events in one view; a view never needs more than a whole game's


def _card(token: object, where: str) -> int:
    if not isinstance(token, str):
        raise WireError(f"{where} must be a card token, got {token!r}")
    try:
        return C.card_from_token(token)
    except RulesError as exc:
        raise WireError(f"{where}: {exc}") from None


def _color(token: object, where: str) -> int:
    if not isinstance(token, str):
        raise WireError(f"{where} must be a colour letter R, Y, G or B, got {token!r}")
    try:
        return C.color_from_token(token)
    except RulesError as exc:
        raise WireError(f"{where}: {exc}") from None


# --- configs -----------------------------------------------------------------------------------------------


def config_from_dict(d: Mapping[str, Any] | None) -> TakiConfig:
    """Config from its JSON form (keys of ``TakiConfig``; missing keys take the defaults). Raises ``WireError`` on
    unknown keys or bad values."""
    if d is not None and not isinstance(d, Mapping):
        raise WireError(f"a taki config must be an object, got {d!r}")
    d = dict(d or {})
    unknown = set(d) - set(_CONFIG_KEYS)
    if unknown:
        raise WireError(f"unknown taki config keys: {sorted(unknown)}; known: {', '.join(_CONFIG_KEYS)}")
    try:
        return TakiConfig(**d)
    except RulesError as exc:
        raise WireError(f"taki config: {exc}") from None


def config_to_dict(config: TakiConfig) -> dict[str, Any]:
    """JSON form of a config: every field of ``TakiConfig``."""
    return {key: getattr(config, key) for key in _CONFIG_KEYS}


def config_to_proto(config: TakiConfig) -> bot_pb2.TakiConfig:
    """``TakiConfig`` message of a config dataclass."""
    return bot_pb2.TakiConfig(
        draw_when_playable=config.draw_when_playable,
        plus_draw_when_playable=config.plus_draw_when_playable,
        turn_cap=config.turn_cap,
        stairs=config.stairs,
        hand_size=config.hand_size,
    )


def config_from_proto(msg: bot_pb2.TakiConfig | None) -> TakiConfig:
    """Config from a ``TakiConfig`` message; zero / unset fields take the defaults; None means all defaults.
    Raises ``WireError`` for out-of-range values."""
    if msg is None:
        return TakiConfig()
    default = TakiConfig()
    try:
        return TakiConfig(
            draw_when_playable=msg.draw_when_playable if msg.HasField("draw_when_playable")
            else default.draw_when_playable,
            plus_draw_when_playable=msg.plus_draw_when_playable,
            turn_cap=msg.turn_cap or default.turn_cap,
            stairs=msg.stairs,
            hand_size=msg.hand_size or default.hand_size,
        )
    except RulesError as exc:
        raise WireError(f"taki config: {exc}") from None


# --- deals -------------------------------------------------------------------------------------------------


def deal_to_dict(deal: TakiDeal) -> dict[str, Any]:
    """JSON form of a deal: ``{"hands": [["R5", ...], ...], "draw_pile": ["KING", ...]}`` (draw pile top first)."""
    return {"hands": [C.tokens(h) for h in deal.hands], "draw_pile": C.tokens(deal.draw_pile)}


def deal_from_dict(d: Mapping[str, Any]) -> TakiDeal:
    """Deal from its JSON form. Raises ``WireError`` for unknown keys or tokens that are no card (the engine
    checks that the deal holds the whole deck when it is used)."""
    unknown = set(d) - {"hands", "draw_pile"}
    if unknown:
        raise WireError(f"unknown taki deal keys: {sorted(unknown)}")
    hands = d.get("hands", ())
    pile = d.get("draw_pile", ())
    if not isinstance(hands, list) or not all(isinstance(h, list) for h in hands) or not isinstance(pile, list):
        raise WireError("a taki deal holds lists: {\"hands\": [[card, ...], ...], \"draw_pile\": [card, ...]}")
    return TakiDeal(
        hands=tuple(tuple(_card(t, f"deal.hands[{i}]") for t in h) for i, h in enumerate(hands)),
        draw_pile=tuple(_card(t, "deal.draw_pile") for t in pile),
    )


# --- actions -----------------------------------------------------------------------------------------------


def action_to_dict(action: TakiAction) -> dict[str, Any]:
    """JSON form of an action: ``{"card": "R5"}`` (plus ``"color"``, ``"close_run"``, ``"last_card"`` when set),
    ``{"draw": true}``, ``{"end_turn": true}`` or ``{"react": true|false}``."""
    if isinstance(action, PlayCard):
        d: dict[str, Any] = {"card": C.card_token(action.card)}
        if action.color is not None:
            d["color"] = C.color_token(action.color)
        if action.close_run:
            d["close_run"] = True
        if action.last_card:
            d["last_card"] = True
        return d
    if isinstance(action, Draw):
        return {"draw": True}
    if isinstance(action, EndTurn):
        return {"end_turn": True}
    if isinstance(action, React):
        return {"react": action.play}
    raise WireError(f"not a Taki action: {action!r}")


def action_from_dict(kind: str, d: Any) -> TakiAction:
    """Action of decision ``kind`` (``TAKI_TURN`` / ``TAKI_REACT``) from its JSON form. Raises ``WireError``."""
    if not isinstance(d, Mapping):
        raise WireError(f"a taki action must be an object, got {d!r}")
    if kind == REACT:
        if set(d) != {"react"} or not isinstance(d["react"], bool):
            raise WireError(f"{kind} action must be {{'react': true|false}}, got {d!r}")
        return React(d["react"])
    if kind != TURN:
        raise WireError(f"unknown decision kind {kind!r}")
    if set(d) == {"draw"} and d["draw"] is True:
        return Draw()
    if set(d) == {"end_turn"} and d["end_turn"] is True:
        return EndTurn()
    if "card" in d and set(d) <= {"card", "color", "close_run", "last_card"}:
        color = d.get("color")
        for flag in ("close_run", "last_card"):
            if not isinstance(d.get(flag, False), bool):
                raise WireError(f"{kind} action: {flag} must be true or false, got {d[flag]!r}")
        return PlayCard(
            _card(d["card"], "action.card"),
            None if color is None else _color(color, "action.color"),
            d.get("close_run", False),
            d.get("last_card", False),
        )
    raise WireError(f"{kind} action must be {{'card': ..., ...}}, {{'draw': true}} or {{'end_turn': true}}, got {d!r}")


def action_to_proto(action: TakiAction) -> bot_pb2.TakiAction:
    """``TakiAction`` message of an action. Raises ``WireError`` for an object that is not a Taki action."""
    if isinstance(action, PlayCard):
        return bot_pb2.TakiAction(play=bot_pb2.TakiPlay(
            card=C.card_token(action.card),
            color="" if action.color is None else C.color_token(action.color),
            close_run=action.close_run,
            last_card=action.last_card,
        ))
    if isinstance(action, Draw):
        return bot_pb2.TakiAction(draw=True)
    if isinstance(action, EndTurn):
        return bot_pb2.TakiAction(end_turn=True)
    if isinstance(action, React):
        return bot_pb2.TakiAction(react=action.play)
    raise WireError(f"not a Taki action: {action!r}")


def action_from_proto(kind: str, msg: bot_pb2.TakiAction) -> TakiAction:
    """The action of decision ``kind`` carried by a ``TakiAction`` message. Raises ``WireError`` for the wrong
    field for the kind (``react`` answers ``TAKI_REACT``; ``play``, ``draw`` or ``end_turn`` answer ``TAKI_TURN``),
    ``draw``/``end_turn`` set to false, or a card or colour that does not exist. Legality is the engine's job."""
    field = msg.WhichOneof("choice")
    if kind == REACT:
        if field != "react":
            raise WireError(f"{kind} needs TakiAction.react, the response set {field or 'nothing'}")
        return React(msg.react)
    if kind != TURN:
        raise WireError(f"unknown decision kind {kind!r}")
    if field == "play":
        p = msg.play
        return PlayCard(
            _card(p.card, "TakiPlay.card"),
            _color(p.color, "TakiPlay.color") if p.color else None,
            p.close_run,
            p.last_card,
        )
    if field == "draw" and msg.draw:
        return Draw()
    if field == "end_turn" and msg.end_turn:
        return EndTurn()
    raise WireError(f"{kind} needs TakiAction.play, .draw = true or .end_turn = true; the response set "
                    f"{field + ' = false' if field in ('draw', 'end_turn') else field or 'nothing'}")


# --- views -------------------------------------------------------------------------------------------------


def _event_to_proto(e: Event) -> bot_pb2.TakiEvent:
    msg = bot_pb2.TakiEvent(kind=e.kind, card=e.card or "", count=e.count, color=e.color or "", closed=e.closed,
                            declared=e.declared, reason=e.reason or "")
    if e.seat is not None:
        msg.seat = e.seat
    return msg


def _event_from_proto(m: bot_pb2.TakiEvent) -> Event:
    return Event(
        kind=m.kind,
        seat=m.seat if m.HasField("seat") else None,
        card=m.card or None,
        count=m.count,
        color=m.color or None,
        closed=m.closed,
        declared=m.declared,
        reason=m.reason or None,
    )


def view_to_proto(view: TakiView) -> bot_pb2.TakiView:
    """``TakiView`` message of an engine view (what the referee sends in ``DecideRequest.taki``)."""
    msg = bot_pb2.TakiView(
        seat=view.seat,
        num_players=view.num_players,
        config=config_to_proto(view.config),
        step=view.step or "",
        legal=[action_to_proto(a) for a in view.legal],
        hand=C.tokens(view.hand),
        leading=C.card_token(view.leading),
        follow_color=C.color_token(view.follow_color),
        follow_symbol=C.SYMBOL_TOKENS[view.follow_symbol],
        stack=view.stack,
        current_seat=view.current_seat,
        direction=view.direction,
        counts=view.counts,
        stages=view.stages,
        draw_pile_size=view.draw_pile_size,
        discard_pile_size=view.discard_pile_size,
        turn=view.turn,
        history=[_event_to_proto(e) for e in view.history],
    )
    if view.run is not None:
        r = view.run
        msg.run.CopyFrom(bot_pb2.TakiRun(color=C.color_token(r.color), seat=r.seat, cards=r.cards,
                                         continued=r.continued, open=r.open))
    if view.winner is not None:
        msg.winner = view.winner
    return msg


_SYMBOL_OF_TOKEN = {t: s for s, t in C.SYMBOL_TOKENS.items()}


def view_from_proto(msg: bot_pb2.TakiView, kind: str | None = None) -> TakiView:
    """Engine view from a ``TakiView`` message, with ``kind`` (a ``DecisionKind`` name) as the pending decision.

    Raises ``WireError`` when the message is inconsistent: num_players outside 2..10, seat not below it, counts of
    the wrong length, a hand whose size is not the seat's count, a token that is no card or colour, an unknown
    step, a legal action of the wrong kind.
    """
    n = msg.num_players
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise WireError(f"view.num_players must be {MIN_PLAYERS}..{MAX_PLAYERS}, got {n}")
    if msg.seat >= n:
        raise WireError(f"view.seat {msg.seat} is not below num_players {n}")
    if len(msg.counts) != n:
        raise WireError(f"view.counts must hold {n} values, got {len(msg.counts)}")
    if msg.stages and len(msg.stages) != n:
        raise WireError(f"view.stages must hold {n} values or none, got {len(msg.stages)}")
    if len(msg.hand) != msg.counts[msg.seat]:
        raise WireError(f"view.hand holds {len(msg.hand)} cards but view.counts says {msg.counts[msg.seat]}")
    if sum(msg.counts) + msg.draw_pile_size + msg.discard_pile_size > C.DECK_SIZE:
        raise WireError(f"view counts more than the {C.DECK_SIZE} cards of the deck")
    if msg.step and msg.step not in _STEPS:
        raise WireError(f"view.step must be one of {', '.join(_STEPS)}, got {msg.step!r}")
    if msg.direction not in (1, -1):
        raise WireError(f"view.direction must be +1 or -1, got {msg.direction}")
    if msg.current_seat >= n:
        raise WireError(f"view.current_seat {msg.current_seat} is not below num_players {n}")
    if msg.follow_symbol not in _SYMBOL_OF_TOKEN:
        raise WireError(f"view.follow_symbol: no Taki symbol {msg.follow_symbol!r}")
    if len(msg.history) > _MAX_HISTORY:
        raise WireError(f"view.history holds {len(msg.history)} events, more than a game has")
    if msg.HasField("winner") and msg.winner >= n:
        raise WireError(f"view.winner {msg.winner} is not below num_players {n}")
    legal: Sequence[TakiAction] = ()
    if kind is not None:
        legal = tuple(action_from_proto(kind, a) for a in msg.legal)
    run = None
    if msg.HasField("run"):
        r = msg.run
        if r.seat >= n:
            raise WireError(f"view.run.seat {r.seat} is not below num_players {n}")
        run = RunInfo(_color(r.color, "view.run.color"), r.seat, r.cards, r.continued, r.open)
    return TakiView(
        seat=msg.seat,
        num_players=n,
        config=config_from_proto(msg.config),
        kind=kind,
        step=msg.step or None,
        legal=tuple(legal),
        hand=tuple(sorted(_card(t, "view.hand") for t in msg.hand)),
        leading=_card(msg.leading, "view.leading"),
        follow_color=_color(msg.follow_color, "view.follow_color"),
        follow_symbol=_SYMBOL_OF_TOKEN[msg.follow_symbol],
        stack=msg.stack,
        run=run,
        current_seat=msg.current_seat,
        direction=msg.direction,
        counts=tuple(msg.counts),
        stages=tuple(msg.stages),
        draw_pile_size=msg.draw_pile_size,
        discard_pile_size=msg.discard_pile_size,
        turn=msg.turn,
        history=tuple(_event_from_proto(e) for e in msg.history),
        winner=msg.winner if msg.HasField("winner") else None,
    )
