"""Take 5 boards for the match viewer (``arena.render.frames``): pure, no I/O; ``docs/rules/take5.md``.

A board is a JSON-ready dict::

    {"hand_number", "turn", "phase": "draft" | "choose" | "row" | "over",
     "rows": four lists of cards (ascending, as laid), "totals": bullheads per seat from completed hands,
     "penalties": bullheads per seat taken this hand, "hand_sizes": cards per seat in hand,
     "chosen": per seat, True once it has chosen its card this turn (the card stays hidden until the reveal),
     "revealed": [{"seat", "card"}] this turn's cards once revealed, lowest first (step 4),
     "placed": the card just placed, {"seat", "card", "row", "taken": [cards], "bullheads", "rule": "extend" |
         "sixth" | "rule4"}, or None,
     "waiting_row": {"seat", "card"} while rule 4 waits for that seat's row choice, else None,
     "hand_end": {"hand", "penalties", "totals"} on the board that ends a hand, else None,
     "draft_pool", "draft_picks": [{"seat", "card"}] (variant 2, face up),
     "hands": {"K": cards} for the seats the perspective may see (none in public)}

One decision that reveals a turn gives several boards: the cards revealed together on the rows as they were, then
one board per card placed, lowest first (rules 1-4), then the table after the turn (or after the hand).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.render.frames import visible_hands
from arena_sdk.games import take5
from arena_sdk.games.take5 import bullheads


def _hands(state: take5.Take5State, viewer: int | str | None) -> dict[str, list[int]]:
    return visible_hands(state.hands, viewer)


def _picks(picks: Sequence[take5.Pick]) -> list[dict[str, int]]:
    return [{"seat": p.seat, "card": p.card} for p in picks]


def board(state: take5.Take5State, viewer: int | str | None, **extra: Any) -> dict[str, Any]:
    """The table of ``state`` as ``viewer`` sees it (None: public; ``"all"``; a seat): see the module docstring.
    ``extra`` overrides keys (the boards of a turn being placed)."""
    waiting = None
    if state.phase == "row":
        pick = state.revealed[state.resolved]
        waiting = {"seat": pick.seat, "card": pick.card}
    out: dict[str, Any] = {
        "hand_number": state.hand_number, "turn": state.turn, "phase": state.phase,
        "rows": [list(r) for r in state.rows], "totals": list(state.totals),
        "penalties": [sum(bullheads(c) for c in pile) for pile in state.piles],
        "hand_sizes": [len(h) for h in state.hands],
        "chosen": [c is not None for c in state.chosen] if state.phase == "choose" else [False] * state.num_players,
        "revealed": _picks(state.revealed), "placed": None, "waiting_row": waiting, "hand_end": None,
        "draft_pool": list(state.draft_pool) if state.phase == "draft" else [],
        "draft_picks": _picks(state.draft_picks) if state.config.draft else [],
        "hands": _hands(state, viewer),
    }
    out.update(extra)
    return out


def shown_action(state: take5.Take5State, seat: int, kind: str, action: Any) -> tuple[bool, dict[str, Any] | None]:
    """How another seat or the public sees ``seat``'s decision: every decision is seen to be taken; a chosen card
    stays hidden until the reveal (rule step 3), a rule-4 row choice and a draft pick are public."""
    if kind == take5.CHOOSE_CARD:
        return True, None
    if isinstance(action, take5.ChooseRow):
        return True, {"row": action.row}
    return True, {"card": action.card}


def action_text(action: dict[str, Any]) -> str:
    """An action dict as a person reads it: ``{"row": 0}`` is "row 1" (rows numbered from 1, as on the board and in
    ``arena match show``), ``{"card": 34}`` "card 34"."""
    if "row" in action:
        return f"row {int(action['row']) + 1}"
    return f"card {action.get('card')}"


def _resolved_plays(before: take5.Take5State, after: take5.Take5State) -> tuple[take5.Play, ...]:
    """The plays resolved by the decision from ``before`` to ``after`` (a reveal or a rule-4 row choice)."""
    done = len(before.current_plays) if before.phase == "row" else 0
    if after.phase == "row" and (after.hand_number, after.turn) == (before.hand_number, before.turn):
        return after.current_plays[done:]
    if after.hand_number == before.hand_number and after.history and after.history[-1].turn == before.turn:
        return after.history[-1].plays[done:]
    if after.previous_history and after.previous_history[-1].turn == before.turn:
        return after.previous_history[-1].plays[done:]
    return ()


def boards(steps: Sequence[Any], viewer: int | str | None) -> list[dict[str, Any]]:
    """The boards after the last of ``steps`` (``arena.render.frames.Step``; Take 5 hides no decision, so one
    step): one board, or for a reveal the cards shown together, each card placed, then the table after."""
    step = steps[-1]
    before, after = step.before, step.after
    if before.phase not in ("choose", "row") or (before.phase == "choose" and after.phase == "choose"
                                                  and after.turn == before.turn
                                                  and after.hand_number == before.hand_number):
        return [board(after, viewer)]
    plays = _resolved_plays(before, after)
    out: list[dict[str, Any]] = []
    rows = [list(r) for r in before.rows]
    penalties = [sum(bullheads(c) for c in pile) for pile in before.piles]
    revealed = _picks(before.revealed) if before.phase == "row" else _picks(
        sorted((take5.Pick(s, c) for s, c in enumerate(before.chosen[:step.seat] + (step.action.card,)
                                                         + before.chosen[step.seat + 1:])),
               key=lambda p: p.card))
    gone = {p["card"] for p in revealed}  # the revealed cards left the hands at the reveal
    base = board(before, viewer, revealed=revealed, chosen=[True] * before.num_players, waiting_row=None,
                 hands={k: [c for c in v if c not in gone] for k, v in _hands(before, viewer).items()},
                 hand_sizes=[len([c for c in h if c not in gone]) for h in before.hands])
    if before.phase == "choose":
        out.append(dict(base))
    for play in plays:
        taken = list(rows[play.row]) if play.taken else []
        rule = "rule4" if play.chose_row else "sixth" if play.taken else "extend"
        rows[play.row] = [play.card] if play.taken else rows[play.row] + [play.card]
        penalties[play.seat] += sum(bullheads(c) for c in taken)
        out.append(dict(base, rows=[list(r) for r in rows], penalties=list(penalties),
                        placed={"seat": play.seat, "card": play.card, "row": play.row, "taken": taken,
                                "bullheads": sum(bullheads(c) for c in taken), "rule": rule}))
    last = board(after, viewer)
    if after.hand_number != before.hand_number or after.phase == "over":
        last["hand_end"] = {"hand": before.hand_number, "penalties": penalties,
                            "totals": list(after.totals)}
    out.append(last)
    return out
