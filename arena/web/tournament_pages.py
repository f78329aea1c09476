"""The tournaments' pages and their ``/api/`` mirrors: the list of the newest tournaments, and one tournament.

- tournament (``/tournaments/{id}``): GetTournament, GetStandings, its newest matches, the matches being played now
  (while it runs: the workers' heartbeats, ListWorkers; each links to its live page), GetSprt for an SPRT; once
  its seed is revealed, every match's deal checked against it (``arena.tournaments.verify``).
  ``/tournaments/{id}/live`` is the part of the page (all but its plan) that ``static/live.js`` reloads every
  ``LIVE_POLL_S`` seconds while it runs.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from arena.tournaments.verify import verify_deals
from arena.web import charts, stats
from arena.web.client import ArenaReader
from arena.web.pages import LIST_MOST, _matches_of, _reader, _shared, games
from arena.web.responses import api, message_dict, page
from arena_sdk.games import GAMES, game_ids
from arena_sdk.pb import arena_pb2

TOURNAMENT_MATCHES = 50  # newest matches on a tournament's page
VERIFY_MATCHES = 20_000  # most matches a tournament's page checks against the revealed seed
LIVE_POLL_S = 2  # seconds between two reloads of a running tournament's live part
PLAYING_SHOWN = 24  # a running tournament's page links at most this many of the matches being played now
SNAPSHOT_TRIES = 3  # reads of a moving tournament's progress, standings and matches playing, until one holds still
MOVING = ("running", "cancelled", "planned")  # states whose progress may change between two reads
PROGRESS = ("state", "matches_done", "matches_cancelled", "matches_failed", "faults")  # what a snapshot compares


async def tournaments_data(request: Request) -> dict[str, Any]:
    """The newest tournaments (ListTournaments, optionally ``?game=``), at most ``LIST_MOST``."""
    game = request.query_params.get("game", "")
    if game and game not in GAMES:
        raise HTTPException(404, f"no game named {game[:32]!r} (games: {', '.join(game_ids())})")
    reply = await _reader(request).pages("ListTournaments", arena_pb2.ListTournamentsRequest(game=game, page_size=100),
                                         "tournaments", LIST_MOST)
    return {"game": game, "tournaments": [message_dict(t) for t in reply]}


async def tournaments(request: Request) -> Response:
    return page(request, "tournaments.html", {"title": "Tournaments", "games": games(),
                                              **await tournaments_data(request)})


async def api_tournaments(request: Request) -> Response:
    return api(await tournaments_data(request))


async def _verify(t: dict[str, Any], sprt: dict[str, Any] | None,
                  matches: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The deals of an ended tournament (``matches``: all of them) checked against its revealed seed; None while
    the seed is secret."""
    if not t["seed_hex"]:
        return None
    twice: tuple[str, ...] = ()
    if sprt is not None and not sprt["field"] and t["deals"] != "unique":
        twice = (sprt["v1"], sprt["v2"])
    problems = verify_deals(t["id"], t["seed_hex"], t["seed_commitment"], matches, twice_allowed=twice)
    if len(matches) != t["matches_done"]:
        problems.append(f"{len(matches)} matches listed, but the tournament counts {t['matches_done']} done")
    return {"ok": not problems, "matches": len(matches), "problems": problems}


async def tournament_data(request: Request) -> dict[str, Any]:
    """One tournament: GetTournament, GetStandings, GetSprt (an SPRT), its newest matches and, once its seed is
    revealed, the verification of its deals. Unknown ids are 404 (the referee's NOT_FOUND)."""
    reader = _reader(request)
    tid = str(request.path_params["id"])
    if not 1 <= len(tid) <= 24:
        raise HTTPException(404, "no tournament with an empty or over-long id")
    t, standings, sprt, (workers, playing), consistent = await _snapshot(reader, tid)
    data: dict[str, Any] = {"tournament": t, "standings": standings, "sprt": sprt, "live_poll_s": LIVE_POLL_S,
                            "no_worker": t["state"] == "running" and workers == 0,  # its matches wait for one
                            "now": time.time(),  # a bot's forced_at before it: its matches are played now
                            "llr_position": llr_position(sprt), "consistent": consistent,
                            "running": t["state"] in ("running", "planned") or bool(playing), "playing": playing}

    async def matches() -> tuple[dict[str, Any], int]:
        every = await _matches_of(reader, "", VERIFY_MATCHES, tournament=tid) if t["seed_hex"] else []
        out: dict[str, Any] = {"matches": every[:TOURNAMENT_MATCHES] if t["seed_hex"] else
                               await _matches_of(reader, "", TOURNAMENT_MATCHES, tournament=tid)}
        out["verify"] = await _verify(t, sprt, every)
        out["pairings"] = pairings(every) if t["format"] == "swiss" else []
        if sprt is not None:  # every match: the LLR after each block comes from the ranks of both its tables
            out["sprt_llr_history"] = stats.sprt_llr_history(
                sprt, every or await _matches_of(reader, "", VERIFY_MATCHES, tournament=tid))
        return out, TOURNAMENT_MATCHES + sum(len(r["matches"]) for r in out["pairings"])

    version = (t["state"], t["matches_done"], t["seed_hex"], (sprt or {}).get("blocks"))
    data.update(await _shared(request).get(("tournament", tid), version, matches))
    newest = data["matches"]
    if not t["seed_hex"] and len(newest) > t["matches_done"]:  # read after the snapshot: what finished since
        newest = data["matches"] = newest[len(newest) - t["matches_done"]:]
    # A worker lists a match as running until it is settled, after it was stored (and until its next heartbeat):
    # a match shown as finished is not playing now.
    finished = {m["match_id"] for m in newest}
    data["playing"] = [m for m in playing if m not in finished][:PLAYING_SHOWN]
    return data


async def _snapshot(reader: ArenaReader, tid: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None,
                                                           tuple[int, list[str]], bool]:
    """(GetTournament, GetStandings, GetSprt or None, (workers alive, the ids of its matches they are playing; -1 and
    none when it is not running), consistent) as
    of one moment: the referee stores a result and bumps matches_done and the standings' counters at once, so when
    GetTournament answers the same progress before and after the other reads, they all count the same matches.
    While it moves, tried ``SNAPSHOT_TRIES`` times; ``consistent`` False when no try held still."""
    moved = True
    for _ in range(SNAPSHOT_TRIES):
        t = message_dict(await reader.call("GetTournament", arena_pb2.GetTournamentRequest(id=tid)))
        # a cancelled tournament's matches under way when it was cancelled still finish: listed until then
        live = t["state"] in ("running", "cancelled")
        standings, sprt, playing = await asyncio.gather(
            reader.call("GetStandings", arena_pb2.GetStandingsRequest(id=tid)),
            reader.call("GetSprt", arena_pb2.GetSprtRequest(id=tid)) if t["format"] == "sprt" else _none(),
            reader.workers_playing(f"{tid}-") if live else _empty())
        if t["state"] not in MOVING:
            moved = False
            break
        again = message_dict(await reader.call("GetTournament", arena_pb2.GetTournamentRequest(id=tid)))
        if all(again[k] == t[k] for k in PROGRESS):
            moved = False
            break
    return (t, message_dict(standings), message_dict(sprt) if sprt is not None else None, playing, not moved)


async def _none() -> None:
    return None


async def _empty() -> tuple[int, list[str]]:
    return -1, []


def llr_position(sprt: dict[str, Any] | None) -> int | None:
    """Where an SPRT's LLR stands between its bounds, 0 (H0's) .. 1000 (H1's), for its progress bar (an SPRT has no
    fixed length); None for no SPRT or bounds that are not two finite numbers in order."""
    if sprt is None:
        return None
    llr, lower, upper = (stats_float(sprt.get(k)) for k in ("llr", "lower", "upper"))
    if not (math.isfinite(lower) and math.isfinite(upper) and upper > lower) or math.isnan(llr):
        return None
    return max(0, min(1000, round((llr - lower) / (upper - lower) * 1000)))


def pairings(matches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A revealed tournament's matches by round (0-based ``round`` of each summary), oldest round first:
    ``[{"round": r, "matches": [...]}]``; rounds are known only once the deals are revealed."""
    rounds: dict[int, list[dict[str, Any]]] = {}
    for m in matches:
        if m.get("revealed"):
            rounds.setdefault(int(m["round"]), []).append(m)
    return [{"round": r, "matches": sorted(ms, key=lambda m: m["match_id"])} for r, ms in sorted(rounds.items())]


def _format_charts(data: dict[str, Any]) -> dict[str, Any]:
    """The charts of a tournament's format: SPRT (its LLR after each block against its bounds), until separated
    (the intervals)."""
    out: dict[str, Any] = {}
    sprt = data["sprt"]
    if sprt is not None:
        history = data.get("sprt_llr_history") or stats.sprt_llr_history(sprt, [])  # none read: its start
        if sprt.get("verdict"):  # blocks finished after the verdict are played but not counted: the chart ends there
            history = history[:int(sprt.get("blocks") or 0) + 1]
        out["sprt_chart"] = charts.line_chart(
            [charts.Series("LLR after each block", history)],
            levels=[charts.Level(stats_float(sprt["upper"]), "H1 (upper bound)", "#067647"),
                    charts.Level(stats_float(sprt["lower"]), "H0 (lower bound)", "#b42318")],
            x_label="blocks", y_label="LLR", title="SPRT: log-likelihood ratio against its bounds")
    rows = [(e["bot"], stats_float(e.get("low")), stats_float(e.get("rating")), stats_float(e.get("high")))
            for e in data["standings"]["entries"] if e.get("rating") is not None]
    if rows:
        out["intervals_chart"] = charts.intervals_chart(rows, title="ratings with their 95 % intervals",
                                                        x_label="rating (Elo)", mark=0)  # the leader's dot
    return out


def stats_float(value: Any) -> float:
    """A double of a reply's JSON form as a float ("Infinity", "NaN" included); NaN for None."""
    if value is None:
        return float("nan")
    return float(str(value).replace("Infinity", "inf")) if isinstance(value, str) else float(value)


async def tournament_page(request: Request) -> Response:
    data = await tournament_data(request)
    return page(request, "tournament.html", {"title": f"Tournament {data['tournament']['id']}",
                                             **data, **_format_charts(data)})


async def tournament_live(request: Request) -> Response:
    """The live part of a tournament's page (progress, standings, format status, seed, newest matches), reloaded
    by live.js. A browser that opens this address itself (``Sec-Fetch-Mode: navigate``) is sent to the whole
    page: the part alone is no page."""
    if request.headers.get("sec-fetch-mode") == "navigate":
        return RedirectResponse(request.url_for("tournament", id=request.path_params["id"]).path, status_code=303)
    data = await tournament_data(request)
    return page(request, "tournament_live.html", {**data, **_format_charts(data)})


async def api_tournament(request: Request) -> Response:
    return api(await tournament_data(request))


routes = [
    Route("/tournaments", tournaments, name="tournaments"),
    Route("/api/tournaments", api_tournaments, name="api_tournaments"),
    Route("/tournaments/{id}", tournament_page, name="tournament"),
    Route("/tournaments/{id}/live", tournament_live, name="tournament_live"),
    Route("/api/tournaments/{id}", api_tournament, name="api_tournament"),
]
