"""Take 5! (6 nimmt!) rules engine: pure functions over frozen state, no I/O, no global randomness.

Implements ``docs/rules/take5.md`` (the rules page of the project); the original Dutch texts are in
``../shared/seeds/``. Rule numbers in docstrings refer to that page ("rule 4" = too low, the seat chooses a row).

Flow of a game (``new_game`` -> repeated ``apply`` -> ``is_over`` / ``outcome``):

* A hand starts from a ``Take5Deal``: explicit (``deals=``) or derived from the seed (``deal_hand``).
* Draft variant: phase ``"draft"``; seats pick one card each in seat order (seat 0 first) until every seat holds
  10 cards; the 4 cards left start the rows (ascending order of the leftovers gives rows 0..3).
* Phase ``"choose"``: every seat that has not chosen yet is pending (simultaneous choice). Choices are hidden
  from the other seats until the last seat has chosen; then all are revealed and resolved lowest first.
* Phase ``"row"``: rule 4 struck the seat whose card is resolving; only that seat is pending (``ChooseRow``).
  Resolution then continues with the next card, targets recomputed after every card.
* After turn 10 (index 9) the bullheads of each penalty pile are added to the totals. If a total reaches the limit
  (``>= limit`` by default, ``> limit`` with ``limit_rule="more_than"``) the game is over (phase ``"over"``);
  the limit is never checked mid-hand. Otherwise the next hand is dealt.

The types (config, deal, actions, view, state) and the card facts (bullheads, target row) are in ``state.py``;
they are re-exported here, so ``rules`` stays the engine's one public module. The deck, the seeded deal and the
checks of an explicit deal are in ``deals.py`` (``deck`` and ``deal_hand`` re-exported here).
"""

from __future__ import annotations

from ..base import GameInfo, IllegalActionError, Outcome, RulesError, competition_ranks
from .deals import _as_cards, _check_config, _check_players, _validate_deal, deal_hand, deck
from .state import (
    _BULLHEADS,
    CHOOSE_CARD,
    CHOOSE_ROW,
    DECK_SIZE,
    DRAFT_PICK,
    GAME_ID,
    HAND_SIZE,
    INFO,
    MAX_LIMIT,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_ROWS,
    ROW_CAPACITY,
    ChooseCard,
    ChooseRow,
    DraftPick,
    LimitRule,
    Phase,
    Pick,
    Play,
    Take5Action,
    Take5Config,
    Take5Deal,
    Take5State,
    Take5View,
    Turn,
    _is_int,
    bullheads,
    penalty_if_played,
    target_row,
)

__all__ = [  # the types from state.py, the engine's functions and the errors they raise
    "GameInfo", "IllegalActionError", "Outcome", "RulesError", "competition_ranks",
    "GAME_ID", "DECK_SIZE", "HAND_SIZE", "NUM_ROWS", "ROW_CAPACITY", "MIN_PLAYERS", "MAX_PLAYERS", "MAX_LIMIT",
    "CHOOSE_CARD", "CHOOSE_ROW", "DRAFT_PICK", "INFO", "Phase", "LimitRule", "Take5Config", "Take5Deal",
    "ChooseCard", "ChooseRow", "DraftPick", "Take5Action", "Play", "Turn", "Pick", "Take5View", "Take5State",
    "bullheads", "target_row", "penalty_if_played", "deck", "deal_hand", "max_hands", "new_game", "pending_seats",
    "decision_kind", "legal_actions", "default_action", "apply", "observe", "is_over", "outcome",
]


def _evolve(state: Take5State, **changes: object) -> Take5State:
    """``dataclasses.replace`` without its per-call field introspection (the hot path of ``apply``).

    Take5State has no ``__post_init__`` and no slots, so copying the field dict gives the same frozen object."""
    evolved = object.__new__(Take5State)
    fields_ = evolved.__dict__
    fields_.update(state.__dict__)
    fields_.update(changes)
    return evolved


def _empty_rows() -> tuple[tuple[int, ...], ...]:
    return ((),) * NUM_ROWS


def _start_hand(state: Take5State, hand_number: int, previous_history: tuple[Turn, ...]) -> Take5State:
    """``state`` with hand ``hand_number`` dealt (rules step 1-2): explicit deal, else from the seed."""
    n = state.num_players
    if hand_number < len(state.deals):
        deal = state.deals[hand_number]
    elif state.seed is not None:
        deal = deal_hand(state.seed, hand_number, n, state.config)
    else:
        raise RulesError(
            f"hand {hand_number} needs a deal: only {len(state.deals)} explicit deal(s) were given and no seed"
        )
    empty: tuple[tuple[int, ...], ...] = ((),) * n
    common = dict(
        hand_number=hand_number,
        turn=0,
        totals=state.totals,
        piles=empty,
        history=(),
        chosen=(None,) * n,
        revealed=(),
        resolved=0,
        current_plays=(),
        draft_picks=(),
        dealt=state.dealt + (deal,),
        previous_history=previous_history,
    )
    if state.config.draft:
        return Take5State(
            num_players=n,
            config=state.config,
            seed=state.seed,
            deals=state.deals,
            phase="draft",
            hands=empty,
            rows=_empty_rows(),
            draft_pool=tuple(sorted(deal.pool)),
            **common,  # type: ignore[arg-type]
        )
    return Take5State(
        num_players=n,
        config=state.config,
        seed=state.seed,
        deals=state.deals,
        phase="choose",
        hands=tuple(tuple(sorted(h)) for h in deal.hands),
        rows=tuple((c,) for c in deal.rows),
        draft_pool=(),
        **common,  # type: ignore[arg-type]
    )


def max_hands(num_players: int, config: Take5Config) -> int:
    """Upper bound on the number of hands of a game: every hand adds at least one bullhead to the totals, and the
    game goes on only while every total stays below the limit (``at_least``) or at most at it (``more_than``)."""
    per_seat = config.limit - 1 if config.limit_rule == "at_least" else config.limit
    return num_players * per_seat + 1


def new_game(
    num_players: int,
    config: Take5Config | None = None,
    *,
    seed: int | None = None,
    deals: tuple[Take5Deal, ...] | list[Take5Deal] = (),
) -> Take5State:
    """A new game. Hand ``h`` uses ``deals[h]`` when given, else ``deal_hand(seed, h, ...)``.

    Raises ``RulesError`` for a player count outside 2..10, when neither seed nor deals are given, for an
    invalid explicit deal (wrong sizes, repeated cards, cards outside the deck of the variant), and for explicit
    deals without a seed that cannot carry a whole game (fewer than ``max_hands``): the game is refused at
    creation, never halfway through a match.
    """
    n = _check_players(num_players)
    config = Take5Config() if config is None else _check_config(config)
    if seed is not None and not _is_int(seed):
        raise RulesError(f"a Take 5 seed must be a whole number or None, got {seed!r}")
    checked = tuple(_validate_deal(d, h, n, config) for h, d in enumerate(_as_cards(deals, "deals")))
    if seed is None and not checked:
        raise RulesError("a Take 5 game needs a seed or at least one explicit deal")
    if seed is None and len(checked) < max_hands(n, config):
        raise RulesError(
            f"{len(checked)} explicit deal(s) and no seed cannot carry a whole game: a {n}-player game to "
            f"{config.limit} bullheads can last up to {max_hands(n, config)} hands; give a seed for the later hands"
        )
    blank = Take5State(
        num_players=n,
        config=config,
        seed=seed,
        deals=checked,
        hand_number=0,
        turn=0,
        phase="choose",
        hands=((),) * n,
        rows=_empty_rows(),
        totals=(0,) * n,
        piles=((),) * n,
    )
    return _start_hand(blank, 0, ())


def pending_seats(state: Take5State) -> tuple[int, ...]:
    """Seats that have a decision to make now, ascending (several in the choose phase, one otherwise)."""
    phase = state.phase
    if phase == "choose":
        return tuple(seat for seat, card in enumerate(state.chosen) if card is None)
    if phase == "row":
        return (state.revealed[state.resolved].seat,)
    if phase == "draft":
        return (len(state.draft_picks) % state.num_players,)
    return ()


_KIND_OF_PHASE = {"choose": CHOOSE_CARD, "row": CHOOSE_ROW, "draft": DRAFT_PICK}
_ACTION_OF_PHASE: dict[str, type] = {"choose": ChooseCard, "row": ChooseRow, "draft": DraftPick}


def _is_pending(state: Take5State, seat: int) -> bool:
    phase = state.phase
    if phase == "choose":
        return 0 <= seat < state.num_players and state.chosen[seat] is None
    return phase != "over" and seat in pending_seats(state)


def decision_kind(state: Take5State, seat: int) -> str | None:
    """The decision kind pending for ``seat`` (``CHOOSE_CARD``, ``CHOOSE_ROW``, ``DRAFT_PICK``) or None."""
    if _is_int(seat) and _is_pending(state, seat):
        return _KIND_OF_PHASE[state.phase]
    return None


def legal_actions(state: Take5State, seat: int) -> tuple[Take5Action, ...]:
    """Every legal action of ``seat`` now, in ascending card / row order; () when the seat is not pending."""
    if not (_is_int(seat) and _is_pending(state, seat)):
        return ()
    phase = state.phase
    if phase == "choose":
        return tuple(ChooseCard(c) for c in state.hands[seat])
    if phase == "row":
        return tuple(ChooseRow(r) for r in range(NUM_ROWS))
    return tuple(DraftPick(c) for c in state.draft_pool)


def default_action(state: Take5State, seat: int) -> Take5Action:
    """The documented default the referee applies after a fault: the lowest card of the hand (choose), the row
    with the fewest bullheads, lowest index on ties (rule 4), the lowest card of the pool (draft).
    Raises ``IllegalActionError`` when ``seat`` is not pending."""
    if not (_is_int(seat) and _is_pending(state, seat)):
        raise IllegalActionError(f"no default action for seat {seat!r}: it has no decision pending")
    phase = state.phase
    if phase == "choose":
        return ChooseCard(state.hands[seat][0])
    if phase == "row":
        costs = [sum(_BULLHEADS[c] for c in row) for row in state.rows]
        return ChooseRow(costs.index(min(costs)))
    return DraftPick(state.draft_pool[0])


def _refuse(state: Take5State, seat: int, action: object, reason: str) -> IllegalActionError:
    where = f"hand {state.hand_number}, turn {state.turn}"
    return IllegalActionError(f"{action!r} by seat {seat!r} refused ({where}): {reason}")


def apply(state: Take5State, seat: int, action: Take5Action) -> Take5State:
    """The state after ``seat`` takes ``action``. Resolves the turn once every seat has chosen, stopping at each
    rule-4 decision; ends the hand after turn 10 and the game at the limit; deals the next hand.

    Raises ``IllegalActionError`` (with the action and the reason in the message) when the seat is not pending,
    the action is of the wrong kind or the card/row is not allowed; ``RulesError`` when a new hand is needed
    but there is neither an explicit deal left nor a seed.
    """
    phase = state.phase
    if phase == "over":
        raise _refuse(state, seat, action, "the game is over")
    if not _is_int(seat) or not 0 <= seat < state.num_players:
        raise _refuse(state, seat, action, f"no such seat in a {state.num_players}-player game")
    if not _is_pending(state, seat):
        if phase == "choose":
            reason = f"seat {seat} already chose a card this turn"
        else:
            reason = f"it is seat {pending_seats(state)[0]}'s decision ({_KIND_OF_PHASE[phase]}), not seat {seat}'s"
        raise _refuse(state, seat, action, reason)
    expected = _ACTION_OF_PHASE[phase]
    if type(action) is not expected:
        raise _refuse(
            state,
            seat,
            action,
            f"the pending decision is {_KIND_OF_PHASE[phase]}, which takes a {expected.__name__}, "
            f"not a {type(action).__name__}",
        )
    if phase == "choose":
        return _choose(state, seat, action)  # type: ignore[arg-type]
    if phase == "row":
        return _choose_row(state, seat, action)  # type: ignore[arg-type]
    return _draft_pick(state, seat, action)  # type: ignore[arg-type]


def _choose(state: Take5State, seat: int, action: ChooseCard) -> Take5State:
    """Rules step 3: record the hidden choice; reveal and resolve once the last seat has chosen."""
    card = action.card
    if not _is_int(card) or card not in state.hands[seat]:
        raise _refuse(state, seat, action, f"card {card!r} is not in seat {seat}'s hand")
    chosen = list(state.chosen)
    chosen[seat] = card
    if None in chosen:
        return _evolve(state, chosen=tuple(chosen))
    # Reveal: every choice is in. Chosen cards leave the hands; resolution goes lowest first (rule step 4).
    revealed = tuple(sorted((Pick(s, c) for s, c in enumerate(chosen)), key=lambda p: p.card))  # type: ignore[arg-type]
    hands = tuple(tuple(c for c in hand if c != chosen[s]) for s, hand in enumerate(state.hands))
    return _resolve(state, hands, list(state.rows), list(state.piles), revealed, 0, [], None)


def _choose_row(state: Take5State, seat: int, action: ChooseRow) -> Take5State:
    """Rule 4: the seat takes the row of its choice; resolution continues."""
    row = action.row
    if not _is_int(row) or not 0 <= row < NUM_ROWS:
        raise _refuse(state, seat, action, f"row {row!r} does not exist; rows are 0..{NUM_ROWS - 1}")
    return _resolve(
        state,
        state.hands,
        list(state.rows),
        list(state.piles),
        state.revealed,
        state.resolved,
        list(state.current_plays),
        row,
    )


def _resolve(
    state: Take5State,
    hands: tuple[tuple[int, ...], ...],
    rows: list[tuple[int, ...]],
    piles: list[tuple[int, ...]],
    revealed: tuple[Pick, ...],
    start: int,
    plays: list[Play],
    chosen_row: int | None,
) -> Take5State:
    """Rules step 4-5: resolve ``revealed[start:]`` lowest first, recomputing the target after every card.

    ``chosen_row`` answers the rule-4 question of ``revealed[start]``. Stops (phase ``"row"``) at the next card
    that needs a row choice; otherwise completes the turn."""
    for index in range(start, len(revealed)):
        pick = revealed[index]
        card = pick.card
        target = target_row(rows, card)  # type: ignore[arg-type]
        if target is None:  # rule 4: every row end is above the card; the seat chooses the row it takes
            if index != start or chosen_row is None:
                return _evolve(
                    state,
                    phase="row",
                    hands=hands,
                    rows=tuple(rows),
                    piles=tuple(piles),
                    chosen=(None,) * state.num_players,
                    revealed=revealed,
                    resolved=index,
                    current_plays=tuple(plays),
                )
            taken = rows[chosen_row]
            rows[chosen_row] = (card,)
            piles[pick.seat] = piles[pick.seat] + taken
            plays.append(Play(pick.seat, card, chosen_row, taken, True))
        elif len(rows[target]) >= ROW_CAPACITY:  # rule 3: the sixth card takes the five
            taken = rows[target]
            rows[target] = (card,)
            piles[pick.seat] = piles[pick.seat] + taken
            plays.append(Play(pick.seat, card, target, taken))
        else:  # rules 1-2: onto the row whose end is closest below
            rows[target] = rows[target] + (card,)
            plays.append(Play(pick.seat, card, target))
    history = state.history + (Turn(state.turn, tuple(plays)),)
    if state.turn + 1 < HAND_SIZE:
        return _evolve(
            state,
            turn=state.turn + 1,
            phase="choose",
            hands=hands,
            rows=tuple(rows),
            piles=tuple(piles),
            history=history,
            chosen=(None,) * state.num_players,
            revealed=(),
            resolved=0,
            current_plays=(),
        )
    # Rules step 7: the hand is over; totals grow by the bullheads taken; the limit is checked only now.
    totals = tuple(t + sum(_BULLHEADS[c] for c in pile) for t, pile in zip(state.totals, piles))
    limit = state.config.limit
    if state.config.limit_rule == "more_than":
        over = any(t > limit for t in totals)
    else:
        over = any(t >= limit for t in totals)
    ended = _evolve(
        state,
        phase="over",
        hands=hands,
        rows=tuple(rows),
        piles=tuple(piles),
        totals=totals,
        history=history,
        chosen=(None,) * state.num_players,
        revealed=(),
        resolved=0,
        current_plays=(),
    )
    if over:
        return ended
    return _start_hand(ended, state.hand_number + 1, history)


def _draft_pick(state: Take5State, seat: int, action: DraftPick) -> Take5State:
    """Variant 2: the pending seat takes a face-up card; after the last pick the 4 left start the rows."""
    card = action.card
    pool = state.draft_pool
    if not _is_int(card) or card not in pool:
        raise _refuse(state, seat, action, f"card {card!r} is not in the draft pool")
    pool = tuple(c for c in pool if c != card)
    hands = list(state.hands)
    hands[seat] = tuple(sorted(hands[seat] + (card,)))
    picks = state.draft_picks + (Pick(seat, card),)
    if len(picks) < HAND_SIZE * state.num_players:
        return _evolve(state, hands=tuple(hands), draft_pool=pool, draft_picks=picks)
    return _evolve(
        state,
        phase="choose",
        hands=tuple(hands),
        rows=tuple((c,) for c in pool),  # pool is ascending: the lowest leftover starts row 0
        draft_pool=(),
        draft_picks=picks,
    )


def observe(state: Take5State, seat: int) -> Take5View:
    """The view of ``seat``: own hand, rows, totals, public history; never another seat's hand or hidden
    choice, the undealt cards or the seed.

    The draft pool and picks are public (variant 2 is played face up). Raises ``RulesError`` for a seat outside
    0..num_players-1."""
    if not _is_int(seat) or not 0 <= seat < state.num_players:
        raise RulesError(f"no seat {seat!r} in a {state.num_players}-player game")
    kind = decision_kind(state, seat)
    row_choice = kind == CHOOSE_ROW
    return Take5View(
        seat=seat,
        num_players=state.num_players,
        config=state.config,
        hand_number=state.hand_number,
        turn=state.turn,
        hand=state.hands[seat],
        rows=state.rows,
        totals=state.totals,
        hand_penalties=tuple(sum(_BULLHEADS[c] for c in pile) for pile in state.piles),
        history=state.history,
        previous_history=state.previous_history if state.turn == 0 and state.phase != "over" else (),
        kind=kind,
        resolving_card=state.revealed[state.resolved].card if row_choice else None,
        revealed=state.revealed if row_choice else (),
        draft_pool=state.draft_pool if state.phase == "draft" else (),
        draft_picks=state.draft_picks if state.config.draft else (),
    )


def is_over(state: Take5State) -> bool:
    """True once a complete hand ended with a total at the limit."""
    return state.phase == "over"


def outcome(state: Take5State) -> Outcome:
    """Final totals and standard competition ranks (fewest bullheads first). Raises ``RulesError`` if not over."""
    if state.phase != "over":
        raise RulesError(
            f"the game is not over (hand {state.hand_number}, turn {state.turn}, phase {state.phase!r})"
        )
    return Outcome(scores=state.totals, ranks=competition_ranks(state.totals, lower_is_better=True))
