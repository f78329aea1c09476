"""How `arena tournament` shows a tournament: its status rows, standings table and --json form (every format's
rows come from the fields the Tournament message carries)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import click
import grpc

from arena.cli.app import RPC_TIMEOUT_S, AppContext, ArenaClient, when
from arena.cli.errors import rpc_error
from arena.cli.tables import Col, fit, print_tables
from arena.ratings.sprt import verdict_text
from arena.store.health import MISMATCH_PREFIX
from arena_sdk.pb import arena_pb2


def standing_dict(e: Any) -> dict[str, Any]:
    """One standings line for --json; rating, margin, low, high (Elo points, the tournament's batch fit) and
    los_next (0..1) are null while there is no fit (a margin that is not finite is null too)."""
    def fit_field(name: str) -> float | None:
        x = getattr(e, name) if e.HasField(name) else None
        return x if x is not None and math.isfinite(x) else None

    return {"rank": e.rank, "bot": e.bot, "points": e.points, "matches": e.matches, "mean_score": e.mean_score,
            "performance": e.performance, "score_rate": e.score_rate,
            **{name: fit_field(name) for name in ("rating", "margin", "low", "high", "los_next", "tiebreak")},
            "byes": e.byes, "owner": e.owner}


def print_standings(app: AppContext, tournament_id: str, entries: Sequence[Any], game: str | None,
                    reply: Any = None) -> None:
    """Print the standings table of ``entries`` (``StandingsEntry`` messages, in the server's order) fitted to the
    console's width, then the order and the batch fit ``reply`` (a ``Standings``) says they come from."""
    from arena.cli.ladder import los_cell, rating_text

    if not entries:
        click.echo(f"no standings for {tournament_id} yet: no match of it has finished")
        return
    from arena.render import score_unit

    swiss = any(e.HasField("tiebreak") for e in entries)
    columns = [Col("rank", "#"), Col("bot", cells="name", justify="left"), Col("points", "pts"),
               Col("matches", drop=2), Col(f"mean {score_unit(game)}" if game else "mean score", drop=4),
               Col("score rate", "rate", drop=6), Col("performance (Elo)", "perf", drop=7),
               *([Col("tiebreak", drop=1), Col("byes", drop=5)] if swiss else []),
               Col("rating ± 95 % (fit)", "Elo ± 95 %"), Col("LOS next", "LOS", drop=3)]
    rows = []
    for e, below in zip(entries, [*entries[1:], None]):  # the server's order: each LOS is over the next line
        rating = (rating_text(e.rating, e.margin if e.HasField("margin") and math.isfinite(e.margin) else None,
                              e.HasField("margin") and math.isinf(e.margin), e.too_few_matches)
                  if e.HasField("rating") else "-")
        extra = [f"{e.tiebreak:.2f}", str(e.byes)] if swiss else []
        rows.append([str(e.rank), e.bot, f"{e.points:g}", str(e.matches), f"{e.mean_score:.2f}",
                     f"{e.score_rate:.3f}", f"{e.performance:.0f}", *extra, rating,
                     los_cell(e.los_next if e.HasField("los_next") else None, e.too_few_matches,
                              below is not None and below.too_few_matches)])
    shown = fit(columns, rows, app.console.width)
    print_tables(app.console, [shown.table(f"Standings of {tournament_id}", rows)], shown.note())
    if reply is not None and reply.order and reply.order != "points":
        click.echo(f"order: {reply.order}" + ("; a bye counts as an average result, (k - 1) / 2 points"
                                              if swiss else ""))
    if reply is not None:
        fitted = (f"rating and LOS: batch fit of {reply.fit_matches} matches of {tournament_id}"
                  if reply.fit_matches else "rating and LOS: the batch fit is not computed yet")
        click.echo(fitted + ("; a fit of its newer results is running" if reply.fit_refreshing else ""))


def sprt_of(client: ArenaClient, t: Any) -> Any:
    """The ``Sprt`` message of tournament ``t`` (a ``Tournament``) when it is an SPRT, else None. A server that
    fills ``Tournament.format`` says so and is asked only then; an older one is asked GetSprt, which answers
    NOT_FOUND for any other tournament (UNIMPLEMENTED from a server without it: None too)."""
    if t.format and t.format != "sprt":
        return None
    try:
        return client.stub.GetSprt(arena_pb2.GetSprtRequest(id=t.id), timeout=RPC_TIMEOUT_S)
    except grpc.RpcError as exc:
        if exc.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNIMPLEMENTED):
            return None
        raise rpc_error(exc, client.server) from None


def sprt_rows(s: Any) -> list[tuple[str, str]]:
    """The status rows of an SPRT (none for other tournaments): its versions and verdict (`arena sprt show ID` has
    the rest)."""
    if s is None:
        return []
    unit = "nElo" if s.statistic == "score" else "Elo"
    words = (verdict_text(s.verdict, s.elo0, s.elo1, unit) if s.verdict
             else "running" if s.tournament.state == "running" else "no verdict")
    return [("sprt", f"{s.v2} (V2) against {s.v1} (V1)" + (f", field {', '.join(s.field)}" if s.field else "")),
            ("verdict", words + (f" ({s.reason})" if s.reason else "")),
            ("ladder", s.ladder_note or "its matches count on the public ladder")]


def separation_rows(t: Any) -> list[tuple[str, str]]:
    """The status row of a tournament run --until-separated (none for others): why it stopped, or the
    verdict of the last check while it runs (the "matches" row shows its cap)."""
    if not t.until_separated:
        return []
    if t.stopped_by:
        return [("stopped", t.stop_reason)]
    return [("last check", t.last_check or "none yet: the first check comes when the first rounds are settled")]


def swiss_rows(t: Any) -> list[tuple[str, str]]:
    """The status rows of a Swiss (none for other formats): the rounds paired so far and the byes."""
    if t.format != "swiss":
        return []
    byes: dict[int, list[str]] = {}
    for b in t.byes:
        byes.setdefault(b.round, []).append(b.bot)
    return [("swiss", f"round {t.rounds_paired} of {t.rounds} paired (round 1 ordered by {t.first_round}); each "
                      f"round is paired once the previous one is settled"),
            ("byes", "; ".join(f"round {r + 1}: {', '.join(bots)}" for r, bots in sorted(byes.items())) or "none")]


def swiss_paired(t: Any) -> str:
    """Which rounds of a running Swiss ``t`` are paired while some are not yet, e.g. "round 2 of 5 paired so far"
    (its matches_total counts every round's matches); "" otherwise."""
    if t.format != "swiss" or t.state != "running" or t.rounds_paired >= t.rounds:
        return ""
    return f"round {t.rounds_paired} of {t.rounds} paired so far"


def rules_text(t: Any) -> str:
    from arena.render import config_text

    return config_text(t.game, config_dict(t))


def config_dict(t: Any) -> dict[str, Any]:
    """The JSON form of a Tournament message's config (the game's defaults when unreadable)."""
    from arena_sdk import wire

    try:
        return wire.config_to_dict(t.game, wire.config_from_proto(t.game, t.config))
    except ValueError:
        return {}


def tournament_dict(t: Any) -> dict[str, Any]:
    return {
        "id": t.id, "game": t.game, "bots": list(t.bots), "seats_per_match": t.seats_per_match, "rounds": t.rounds,
        "deals": t.deals, "deal_count": t.deal_count, "tables_per_deal": t.tables_per_deal,
        "seed_commitment": t.seed_commitment, "seed_hex": t.seed_hex,
        "matches_total": t.matches_total, "matches_done": t.matches_done,
        "matches_cancelled": t.matches_cancelled, "matches_failed": t.matches_failed, "faults": t.faults,
        "state": t.state, "formula": t.formula, "created_at": t.created_at, "deadline_ms": t.deadline_ms,
        "config": config_dict(t), "until_separated": t.until_separated, "max_matches": t.max_matches,
        "stopped_by": t.stopped_by, "stop_reason": t.stop_reason, "last_check": t.last_check,
        "format": t.format, "rounds_paired": t.rounds_paired, "first_round": t.first_round,
        "byes": [{"round": b.round, "bot": b.bot} for b in t.byes],
        "waiting_for": [{"bot": w.bot, "unhealthy_since": w.unhealthy_since, "reason": w.reason,
                         "forced_at": w.forced_at or None} for w in t.waiting_for],
        "matches_deferred": t.matches_deferred,
    }


def waiting_text(t: Any, *, short: bool = False, now: float | None = None) -> str:
    """What a running tournament ``t`` waits for (``Tournament.waiting_for``): its unhealthy bots, whose matches
    are deferred until they answer GetInfo again, or played anyway (forfeited) from about their ``forced_at``, which
    may have passed (``now``, s since epoch; the clock by default): their matches are then played now; "" when
    none. ``short``: the bot ids only, for a progress bar."""
    waiting = list(t.waiting_for)
    if not waiting:
        return ""
    if short:
        return "waiting for " + ", ".join(w.bot for w in waiting) + " (unhealthy)"
    now = time.time() if now is None else now
    forced = [bool(w.forced_at) and w.forced_at <= now for w in waiting]
    parts = [f"{w.bot}: unhealthy since {when(w.unhealthy_since)}" + (f" ({w.reason})" if w.reason else "")
             + (", its matches played anyway now (forfeited while it does not answer)" if past else
                f", played anyway from about {when(w.forced_at)}" if w.forced_at else "")
             for w, past in zip(waiting, forced)]
    # a bot that answers, but not as registered, is not started: it is made to answer as registered
    fix = ("make it answer GetInfo as registered (name, version, game)"
           if all(w.reason.startswith(MISMATCH_PREFIX) for w in waiting) else "start the bot")
    if all(forced):
        return "; ".join(parts) + f" ({fix}; `arena tournament cancel {t.id}` to give up)"
    one = len(waiting) == 1
    n = t.matches_deferred
    held = f"{n:,} {'match waits' if n == 1 else 'matches wait'}" if n else "matches wait"
    return ("; ".join(parts) + f"; {'its' if one else 'their'} {held} until {'it answers' if one else 'they answer'}"
            f" GetInfo again, or until then, when {'it forfeits' if one else 'they forfeit'} them ({fix}; "
            f"`arena tournament cancel {t.id}` to give up)")


def settled(t: Any) -> bool:
    """True when nothing is left to wait for in tournament ``t``: its state is no longer "running", or every match
    is done, dropped by a cancellation or failed (matches_done + matches_cancelled + matches_failed reaches
    matches_total, arena.proto); a tournament run --until-separated only once it is no longer "running" (it grows
    while it runs)."""
    if t.until_separated or _grows(t.format):
        return bool(t.state != "running")
    return bool(t.state != "running" or t.matches_done + t.matches_cancelled + t.matches_failed >= t.matches_total)


def _grows(name: str) -> bool:
    """True for a format whose tournaments add matches while they run (``Format.controlled``)."""
    from arena.tournaments.formats import formats

    fmt = formats().get(name)
    return bool(fmt is not None and fmt.controlled)


def failed_note(t: Any) -> str:
    """", N failed" when matches of ``t`` failed (given up after repeated platform errors), else ""."""
    return f", {t.matches_failed} failed" if t.matches_failed else ""
