"""Sample Taki bot: plans the rest of its own turn with the rules engine and scores where each plan ends.

A Taki turn can take several decisions (a TAKI run, a King's free card, a Plus's owed card, with two players a
Stop's extra turn), and everything in it depends only on the bot's own hand and the table. So at every decision the
bot rebuilds the table from its view (the other hands are stand-ins of the right size, the draw pile a stand-in
too), tries each sensible line of play to the end of its turn with the engine's own ``legal_actions`` and
``apply``, and plays the first action of the best line. What that gives:

* **Win at once** when some line empties the hand (a single matching card, a run of one colour, King then a card,
  a Plus then its owed card, a run ended by a Change Color ...): an emptied hand outscores everything.
* **Fewest cards**: each card still held costs the same, so the bot never draws when a useful play exists and it
  sheds whole colours in runs (inside a run it plays every card of the run's colour, then closes the run with the
  card whose action helps most: the lines it tries are "everything of the colour, this card last" for each card).
* **Keep the rescue cards**: a King, Change Color, +3 Breaker, +3 or SuperTaki still held earns a bonus, the King
  and Change Color more than a card is worth, so a plain matching card is preferred and they are spent only when
  nothing plain fits (or to win, or when they shed more cards). A +2 stack is answered with a +2, else a King.
* **Stay in its colour**: a Change Color names the colour it holds most; ending the turn on a colour it still
  holds earns a small bonus, so among equal plays it keeps the colour it holds most.
* **Hurt the others**: cards the other seats must draw (+2 stack left to the next seat, +3), seats skipped by a
  Stop, all worth more when that seat is close to going out; a run left open for the next seat costs. Ending the
  turn on a colour the next seat is believed to lack earns a bonus (``ColorTracker``: a seat that drew at the start
  of its turn probably held nothing of the colour to follow).
* **Always declares "last card"** when the play allows it, and plays a +3 Breaker whenever asked (``react``).

    python -m sample_bots.taki_heuristic_bot --port 50112
    python sample_bots/taki_heuristic_bot.py --port 0

``TurnPlanner(view).best_action()`` is the whole turn policy as a plain object (``heuristic_action(view)`` the same
as a function); ``ranked_actions()`` scores every first action it tried.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a file: python sample_bots/taki_heuristic_bot.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena_sdk import TakiBot, TakiView, serve
from arena_sdk.games.base import RulesError
from arena_sdk.games.taki import rules
from arena_sdk.games.taki.cards import (
    BREAKER,
    CARD_COLOR,
    CARD_SYMBOL,
    CHCOLOR,
    CHDIR,
    KING,
    PLUS,
    PLUS2,
    PLUS3,
    STOP,
    SUPERTAKI,
    TAKI,
    card_from_token,
)
from arena_sdk.games.taki.state import (
    REACT,
    STEP_KING,
    STEP_PLUS,
    STEP_RUN,
    STEP_TURN,
    Draw,
    EndTurn,
    Event,
    PlayCard,
    TakiAction,
    TakiDeal,
    TakiState,
)

# --- weights of the evaluation (one card held = card) ---------------------------------------------------------

WIN = 10**9
STAGE_W = 100_000  # stairs: one stage gained is worth more than any hand


@dataclass(frozen=True)
class Weights:
    """The evaluation's weights; one card held costs ``card``.

    Attributes:
        card: per card held. keep: bonus per rescue card still held (King, Change Color above ``card``: a plain
            card is played before them). opp_card: per card another seat must draw. stack: per card of a +2 stack
            left to the next seat (it may pass it on). skip: a seat skipped by a Stop (three seats or more; with
            two, the extra turn is planned). open_run: a run left open (the next seat may shed that colour).
            color: per card (up to 3) held of the colour to follow when the turn ends. threat: effects on a seat
            holding at most ``threat_cards`` cards count this many times. plus3_hit: a +3 is broken now and then:
            its value is scaled by this, and its player may draw three instead. lack: the turn ends on a colour
            the next seat is believed not to hold (``ColorTracker``), times that belief.
    """

    card: float = 100
    keep: tuple[tuple[int, float], ...] = ((KING, 130), (CHCOLOR, 110), (BREAKER, 150), (PLUS3, 60), (SUPERTAKI, 40))
    opp_card: float = 25
    stack: float = 18
    skip: float = 30
    open_run: float = 45
    color: float = 8
    threat: float = 3
    threat_cards: int = 2
    plus3_hit: float = 0.75
    lack: float = 40


DEFAULT_WEIGHTS = Weights()
MAX_APPLY = 2000  # engine steps per decision at most; deeper lines are scored as they stand

# filler order inside a run: the cards played before the run's closing card, least useful as a last card first
_FILLER_RANK = {CHDIR: 1, TAKI: 2, STOP: 4, PLUS2: 5, PLUS: 6}
FILLER = card_from_token("R1")  # stand-in card of the draw pile and the other hands (any card but a Breaker)

Step = TakiAction | tuple[int, bool]
"""One step of a line of play: an action, or ``(card, close_run)`` (see ``TurnPlanner.options``)."""

_MODES = {"turn": STEP_TURN, "stack": STEP_TURN, "run": STEP_RUN, "plus": STEP_PLUS, "king": STEP_KING}


def _filler_rank(card: int) -> int:
    if card == SUPERTAKI:
        return 3
    return _FILLER_RANK.get(CARD_SYMBOL[card], 0)


def majority_color(hand: Sequence[int]) -> int:
    """The colour ``hand`` holds most (coloured cards only); ties: the lowest colour (R, Y, G, B); 0 when none."""
    counts = [0, 0, 0, 0]
    for card in hand:
        if CARD_COLOR[card] >= 0:
            counts[CARD_COLOR[card]] += 1
    return max(range(4), key=lambda c: (counts[c], -c))


def state_from_view(view: TakiView) -> TakiState:
    """An engine state equivalent to ``view`` for the rest of the seat's own turn: its hand and the public table
    as they are; the other hands are ``FILLER`` cards in the right number (no Breaker, so a +3 always lands); the
    draw pile is a long run of ``FILLER`` (whatever the seat draws ends its turn)."""
    n = view.num_players
    hands = tuple(view.hand if s == view.seat else (FILLER,) * view.counts[s] for s in range(n))
    mode = _MODES.get(view.step or "", STEP_TURN)
    midturn = mode != STEP_TURN
    return TakiState(
        num_players=n,
        config=view.config,
        seed=0,
        deal=TakiDeal(hands=(), draw_pile=()),
        hands=hands,
        draw_pile=(FILLER,) * 40,
        discard_pile=(view.leading,),
        follow_color=view.follow_color,
        follow_symbol=view.follow_symbol,
        stack=view.stack,
        direction=view.direction,
        current=view.seat,
        mode=mode,
        react_seat=-1,
        run=view.run,
        last_play=midturn,
        declared=midturn and len(view.hand) == 1,  # this bot always declares "last card"
        turn=view.turn,
        stages=view.stages,
        winner=None,
        reshuffles=0,
        unseen=((),) * n,
    )


class ColorTracker:
    """What the public events say about the colours the other seats lack.

    Fed every ``view.history`` in order (``feed``), it follows the colour to follow through the plays and, when a
    seat draws at the start of its turn (or cannot answer a Plus), believes it lacks that colour (1.0); every card
    that seat draws later lowers the belief (x ``KEEP_PER_DRAW``); a card of the colour it plays sets it to 0.
    ``lacks[seat][colour]`` is the belief. The random bot draws at will, so against it the belief is noise; a seat
    that plays whenever it can is read right.
    """

    KEEP_PER_DRAW = 0.75

    def __init__(self, num_players: int) -> None:
        self.follow = -1
        self.lacks = [[0.0] * 4 for _ in range(num_players)]

    def feed(self, events: Sequence[Event]) -> None:
        for e in events:
            kind = e.kind
            if kind == "play" and e.card is not None:
                card = card_from_token(e.card)
                color = CARD_COLOR[card]
                if color >= 0:
                    self.follow = color
                    if e.seat is not None:
                        self.lacks[e.seat][color] = 0.0
                elif e.color is not None:  # Change Color, SuperTaki
                    self.follow = "RYGB".index(e.color)
            elif kind == "lead" and e.card is not None:
                self.follow = CARD_COLOR[card_from_token(e.card)]
            elif kind == "draw" and e.seat is not None:
                row = self.lacks[e.seat]
                if e.reason in ("draw", "plus") and self.follow >= 0:
                    row[self.follow] = 1.0
                keep = self.KEEP_PER_DRAW ** e.count
                for c in range(4):
                    row[c] *= keep


class TurnPlanner:
    """Search of one seat's lines of play to the end of its turn (see the module doc), from ``view`` (a
    ``TAKI_TURN`` decision of that seat). ``best_action()`` returns one of ``view.legal``."""

    def __init__(
        self, view: TakiView, weights: Weights = DEFAULT_WEIGHTS, lacks: Sequence[Sequence[float]] | None = None
    ) -> None:
        self.view = view
        self.w = weights
        self.lacks = lacks
        self.me = view.seat
        self.root = state_from_view(view)
        self.hand0 = Counter(view.hand)
        self.counts0 = view.counts
        self.applied = 0
        self.memo: dict[tuple, float] = {}
        n = view.num_players
        self.threat = [weights.threat if 0 < view.counts[s] <= weights.threat_cards else 1.0 for s in range(n)]

    # --- lines of play -------------------------------------------------------------------------------------

    def _step(self, state: TakiState, action: TakiAction) -> TakiState:
        self.applied += 1
        return rules.apply(state, self.me, action)

    def _play(self, state: TakiState, card: int, close: bool = False) -> TakiState:
        hand = state.hands[self.me]
        color = majority_color([c for c in hand if c != card]) if card == CHCOLOR else None
        return self._step(state, PlayCard(card, color, close, len(hand) == 2))

    def options(self, state: TakiState) -> list[list[Step]]:
        """The lines tried from ``state``: each a list of steps, an action or ``(card, close)`` (played with the
        "last card" declaration when allowed and, for a Change Color, naming the colour held most)."""
        me = self.me
        legal = rules.legal_actions(state, me)
        hand = state.hands[me]
        run = state.run
        in_run = state.mode == STEP_RUN or (state.mode == STEP_TURN and run is not None and not state.stack)
        run_cards: list[int] = []
        if in_run:
            assert run is not None
            run_cards = sorted((c for c in hand if CARD_COLOR[c] == run.color or c == SUPERTAKI), key=_filler_rank)
        lines: list[list[Step]] = []
        for card in dict.fromkeys(run_cards):  # every card of the run's colour, this one last, the run closed
            rest = list(run_cards)
            rest.remove(card)
            line: list[Step] = [(c, False) for c in rest]
            lines.append(line + [(card, True)])
        if run_cards and CHCOLOR in hand:  # the whole colour, then a Change Color ends the run
            shed: list[Step] = [(c, False) for c in run_cards]
            lines.append(shed + [(CHCOLOR, False)])
        seen: set[int] = set(run_cards)
        others: list[list[Step]] = []
        for action in legal:
            if not isinstance(action, PlayCard):
                others.append([action])  # Draw, EndTurn: listed last, so a play wins a tie
            elif action.card not in seen:
                seen.add(action.card)
                lines.append([(action.card, False)])
        return lines + others

    def _run_line(self, state: TakiState, line: Sequence[Step]) -> TakiState | None:
        try:
            for step in line:
                if self._over(state):
                    return state
                if isinstance(step, tuple):
                    state = self._play(state, *step)
                else:
                    state = self._step(state, step)
        except RulesError:
            return None
        return state

    def _over(self, state: TakiState) -> bool:
        """The seat's turn is over (the game too, or another seat has the decision)."""
        return rules.decision_kind(state, self.me) is None

    def value(self, state: TakiState, played: tuple[int, ...]) -> float:
        """Best score reachable from ``state`` to the end of the seat's turn."""
        if self._over(state) or self.applied > MAX_APPLY:
            return self.evaluate(state, played)
        key = (state.hands[self.me], state.mode, state.follow_color, state.follow_symbol, state.stack, state.run,
               state.turn, played)
        if key in self.memo:
            return self.memo[key]
        best = -float("inf")
        for line in self.options(state):
            after = self._run_line(state, line)
            if after is None:
                continue
            cards = played + tuple(s[0] for s in line if isinstance(s, tuple))
            best = max(best, self.value(after, cards))
        if best == -float("inf"):
            best = self.evaluate(state, played)
        self.memo[key] = best
        return best

    def ranked_actions(self) -> list[tuple[float, TakiAction]]:
        """Each distinct first action of the lines tried, with the score of its best line, best first (a stable
        sort: on equal scores the earlier line, so a play before a draw). Actions not in ``view.legal`` (never
        expected: the stand-in table gives the engine's own legal list) are left out."""
        legal = self.view.legal
        scores: dict[TakiAction, float] = {}
        for line in self.options(self.root):
            after = self._run_line(self.root, line)
            if after is None:
                continue
            score = self.value(after, tuple(s[0] for s in line if isinstance(s, tuple)))
            action = self._first_action(line[0])
            if action not in legal:
                _off_plan(self.view, action)
            elif action not in scores or score > scores[action]:
                scores[action] = score
        return sorted(((v, a) for a, v in scores.items()), key=lambda item: -item[0])

    def best_action(self) -> TakiAction:
        """The first action of the best line (one of ``view.legal``)."""
        ranked = self.ranked_actions()
        return ranked[0][1] if ranked else _fallback(self.view)

    def _first_action(self, step: Step) -> TakiAction:
        if not isinstance(step, tuple):
            return step
        card, close = step
        hand = self.view.hand
        color = majority_color([c for c in hand if c != card]) if card == CHCOLOR else None
        return PlayCard(card, color, close, len(hand) == 2)

    # --- scoring -------------------------------------------------------------------------------------------

    def evaluate(self, state: TakiState, played: tuple[int, ...]) -> float:  # noqa: C901 - one branch per scoring term of the heuristic (16)
        """Score of the table where a line ends (higher is better for the seat)."""
        me = self.me
        w = self.w
        if state.winner == me:
            return WIN
        score = -w.card * len(state.hands[me])
        if state.stages:
            score -= STAGE_W * state.stages[me]
        kept = self.hand0 - Counter(played)
        for card, bonus in w.keep:
            score += bonus * kept[card]
        # the colour to follow when the turn ends: one the seat still holds
        follow = state.follow_color
        held = sum(k for c, k in kept.items() if CARD_COLOR[c] == follow)
        score += w.color * min(held, 3)
        # what the others suffer
        plus3 = PLUS3 in played
        n = state.num_players
        for s in range(n):
            if s != me:
                drawn = len(state.hands[s]) - self.counts0[s]
                if drawn > 0:
                    score += w.opp_card * drawn * self.threat[s] * (w.plus3_hit if plus3 else 1.0)
        if plus3:  # a Breaker held somewhere makes the +3's player draw three instead
            score -= (1 - w.plus3_hit) * 3 * w.card
        if not self._over(state):
            return score
        nxt = state.current
        if nxt != me:
            if state.stack:
                score += w.stack * state.stack * self.threat[nxt]
            if state.run is not None and state.run.open:
                score -= w.open_run
            if self.lacks is not None and not state.stack:
                score += w.lack * self.lacks[nxt][state.follow_color]
        if n > 2:
            for event in state.unseen[(me + 1) % n]:
                if event.kind == "skip" and event.seat is not None and event.seat != me:
                    score += w.skip * self.threat[event.seat]
        return score


def _off_plan(view: TakiView, action: TakiAction) -> None:
    """Called when a planned first action is not in ``view.legal`` (never expected; the tests make it fail)."""


def _fallback(view: TakiView) -> TakiAction:
    plays = [a for a in view.legal if isinstance(a, PlayCard)]
    declared = [p for p in plays if p.last_card]
    if declared:
        return declared[0]
    if plays:
        return plays[0]
    return Draw() if Draw() in view.legal else EndTurn() if EndTurn() in view.legal else view.legal[0]


def heuristic_action(
    view: TakiView, weights: Weights = DEFAULT_WEIGHTS, lacks: Sequence[Sequence[float]] | None = None
) -> TakiAction:
    """The heuristic's answer to ``view`` (a ``TAKI_TURN`` decision), one of ``view.legal``. For a
    ``TAKI_REACT`` question it plays the Breaker (``React(True)``)."""
    if view.kind == REACT:
        return view.legal[-1]
    if len(view.legal) == 1:
        return view.legal[0]
    return TurnPlanner(view, weights, lacks).best_action()


class TakiHeuristicBot(TakiBot):
    """Plans its own turn with the engine (``TurnPlanner``); always plays a +3 Breaker when asked."""

    name = "taki-heuristic"
    version = "1.0"
    author = "arena sample bots"

    weights: Weights = DEFAULT_WEIGHTS
    track_colors = True

    def __init__(self) -> None:
        self.tracker: ColorTracker | None = None

    def _feed(self, view: TakiView) -> None:
        if self.tracker is None:
            self.tracker = ColorTracker(view.num_players)
        self.tracker.feed(view.history)

    def take_turn(self, view: TakiView) -> TakiAction:
        self._feed(view)
        lacks = self.tracker.lacks if self.track_colors and self.tracker is not None else None
        return heuristic_action(view, self.weights, lacks)

    def react(self, view: TakiView) -> bool:
        self._feed(view)
        return True


__all__ = ["DEFAULT_WEIGHTS", "TakiHeuristicBot", "TurnPlanner", "Weights", "heuristic_action", "majority_color",
           "state_from_view"]

if __name__ == "__main__":
    serve(TakiHeuristicBot)
