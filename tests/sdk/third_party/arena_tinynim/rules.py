"""Tiny Nim rules: pure functions over frozen state."""

from __future__ import annotations

from dataclasses import dataclass, replace

from arena_sdk.games.base import GameInfo, IllegalActionError, Outcome, RulesError, check_config, rule

GAME_ID = "tinynim"
TAKE = "TINYNIM_TAKE"
INFO = GameInfo(game=GAME_ID, title="Tiny Nim!", min_players=2, max_players=4, simultaneous=False,
                imperfect_information=False, decision_kinds=(TAKE,), lower_score_is_better=True)


@dataclass(frozen=True)
class TinyNimConfig:
    """Rule options. ``limit`` shares its name and type with Take 5's option (one shared CLI option); ``hand_size``
    shares its name with Taki's number option but is a text (the CLI keeps the two apart)."""

    heap: int = rule(10, "tokens on the heap at the start", minimum=1, maximum=30, unit="TOKENS")
    take_max: int = rule(3, "most tokens one turn takes", minimum=1, maximum=5, unit="TOKENS")
    limit: int = rule(50, "turns before the game ends drawn", minimum=1, maximum=100, unit="TURNS")
    hand_size: str = rule("all_shown", "what the view shows of the heap", choices=("all_shown", "size_only"))
    misere: bool = rule(False, "who takes the last token loses", variant="misere")

    def __post_init__(self) -> None:
        check_config(self)


@dataclass(frozen=True)
class Take:
    """Take ``count`` tokens."""

    count: int


@dataclass(frozen=True)
class TinyNimView:
    """What a seat sees: everything (perfect information)."""

    seat: int
    heap: int
    take_max: int
    kind: str | None


@dataclass(frozen=True)
class TinyNimState:
    config: TinyNimConfig
    num_players: int
    heap: int
    turn: int = 0
    last: int | None = None  # the seat that took the last token


def new_game(num_players: int, config: TinyNimConfig | None = None, *, seed: int | None = None,
             deals: tuple[object, ...] = ()) -> TinyNimState:
    if not isinstance(num_players, int) or not INFO.min_players <= num_players <= INFO.max_players:
        raise RulesError(f"Tiny Nim is played by 2..4 players, got {num_players!r}")
    if deals:
        raise RulesError("Tiny Nim has no deals")
    config = config or TinyNimConfig()
    return TinyNimState(config, num_players, config.heap)


def is_over(state: TinyNimState) -> bool:
    return state.heap == 0 or state.turn >= state.config.limit


def pending_seats(state: TinyNimState) -> tuple[int, ...]:
    return () if is_over(state) else (state.turn % state.num_players,)


def decision_kind(state: TinyNimState, seat: int) -> str | None:
    return TAKE if seat in pending_seats(state) else None


def legal_actions(state: TinyNimState, seat: int) -> tuple[Take, ...]:
    if seat not in pending_seats(state):
        return ()
    return tuple(Take(n) for n in range(1, min(state.config.take_max, state.heap) + 1))


def default_action(state: TinyNimState, seat: int) -> Take:
    return Take(1)


def apply(state: TinyNimState, seat: int, action: Take) -> TinyNimState:
    if action not in legal_actions(state, seat):
        raise IllegalActionError(f"seat {seat} cannot {action} now")
    return replace(state, heap=state.heap - action.count, turn=state.turn + 1,
                   last=seat if action.count == state.heap else state.last)


def observe(state: TinyNimState, seat: int) -> TinyNimView:
    return TinyNimView(seat, state.heap, state.config.take_max, decision_kind(state, seat))


def outcome(state: TinyNimState) -> Outcome:
    if not is_over(state):
        raise RulesError("the game is not over")
    if state.last is None:
        return Outcome((0.0,) * state.num_players, (1,) * state.num_players)
    winner = state.last if not state.config.misere else (state.last + 1) % state.num_players
    scores = tuple(0.0 if s == winner else 1.0 for s in range(state.num_players))
    return Outcome(scores, tuple(1 if s == winner else 2 for s in range(state.num_players)))


__all__ = ["GAME_ID", "INFO", "TAKE", "Take", "TinyNimConfig", "TinyNimState", "TinyNimView", "apply",
           "decision_kind", "default_action", "is_over", "legal_actions", "new_game", "observe", "outcome",
           "pending_seats"]
