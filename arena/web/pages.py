"""The pages of the arena and their ``/api/`` mirrors: the home page, the ladder of each game, the bots (the
tournaments' pages are ``arena.web.tournament_pages``).

Each page reads the Arena service (``request.app.state.arena``) and renders a template; its mirror under
``/api/`` answers the same facts as JSON (the read replies in their proto3 JSON form, plus what the page derives
from them: ``arena.web.stats``). Matches link to the viewer at ``/matches/{match_id}``; bots to ``/bots/{bot}``
(``filters.bot_link``; a house bot, ``house:NAME``, is no registered bot: no page, no link).

What a page derives, and from which reads:

- ladder (``/ladder/{game}?method=elo|fit``): GetLadder; per bot, ListMatches of its newest ``HISTORY_MATCHES``
  matches for its faults per match and its live Elo after each of them (walked back from the live rating);
- bot (``/bots/{bot}``, NAME or NAME@VERSION): ListBots (its versions), GetLadder of each game it plays, its newest
  matches (ListMatches), and, from the records of those that are revealed (GetMatch), its faults by kind and its
  Decide latency p50/p95/max per game;
- tournaments (``/tournaments``, ``/tournaments/{id}``): ``arena.web.tournament_pages``;
- home (``/``): GetArenaInfo, ListTournaments (the newest 5) and one GetLadder per game (the first
  ``HOME_LADDER_LINES`` lines of each of its first ``HOME_GROUPS`` groups).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from arena.core.specs import BOT_NAME_RE, is_house_bot
from arena.ratings.groups import group_sections, groups_note, removed_groups
from arena.web import charts, stats
from arena.web.client import ArenaDataLoss, ArenaDown, ArenaNotFound, ArenaReader, ArenaReadError
from arena.web.responses import api, arena_down, message_dict, page
from arena.web.shared_reads import SharedReads
from arena_sdk.games import GAMES, game_ids
from arena_sdk.pb import arena_pb2

LADDER_METHODS = {"elo": "live Elo", "fit": "batch fit"}
HISTORY_MATCHES = 200  # matches of a bot behind its ladder line's history and fault rate
RECENT_MATCHES = 20  # matches on a bot's page; their revealed records give its faults by kind and latency
LIST_MOST = 1000  # most bots and tournaments a list page shows
HOME_LADDER_LINES = 5  # lines of each group of a game's ladder on the home page
HOME_GROUPS = 4  # groups of a game's ladder shown on the home page; the others are on the full ladder


def games() -> list[dict[str, str]]:
    """Every registered game as ``{"id", "title"}``, in id order."""
    return [{"id": g, "title": GAMES[g].info.title} for g in game_ids()]


def _shared(request: Request) -> SharedReads:
    shared: SharedReads = request.app.state.shared_reads
    return shared


def _reader(request: Request) -> ArenaReader:
    reader: ArenaReader = request.app.state.arena
    return reader


def _game(request: Request) -> str:
    game = str(request.path_params["game"])
    if game not in GAMES:
        raise HTTPException(404, f"no game named {game!r} (games: {', '.join(game_ids())})")
    return game


def _method(request: Request) -> str:
    method = request.query_params.get("method", "elo") or "elo"
    if method not in LADDER_METHODS:
        raise HTTPException(400, f"method must be one of {', '.join(LADDER_METHODS)}, not {method[:16]!r}")
    return method


async def _matches_of(reader: ArenaReader, bot: str, most: int, tournament: str = "") -> list[dict[str, Any]]:
    request = arena_pb2.ListMatchesRequest(bot=bot, tournament_id=tournament, page_size=min(most, 1000))
    return [message_dict(m) for m in await reader.pages("ListMatches", request, "matches", most)]


# --- ladder ------------------------------------------------------------------------------------------------------

async def ladder_data(request: Request, game: str, method: str) -> dict[str, Any]:
    """GetLadder of ``game`` by ``method``, each entry with ``faults_per_match`` and ``history`` (live Elo after
    each of its newest ``HISTORY_MATCHES`` matches, oldest first) added."""
    reader = _reader(request)
    ladder = message_dict(await reader.call("GetLadder", arena_pb2.GetLadderRequest(game=game, method=method)))
    live = ladder if method == "elo" else message_dict(
        await reader.call("GetLadder", arena_pb2.GetLadderRequest(game=game, method="elo")))
    version = tuple(str(x.get(k)) for x in (ladder, live) for k in ("results_stored", "results_counted",
                                                                    "computed_at", "refreshing"))
    version += tuple(e["bot"] for e in ladder["entries"] if e.get("removed"))  # a removal stores no result

    async def histories() -> tuple[dict[str, Any], int]:
        live_rating = {e["bot"]: float(e["rating"]) for e in live["entries"]}
        recent = await asyncio.gather(*(_matches_of(reader, e["bot"], HISTORY_MATCHES) for e in ladder["entries"]))
        for entry, matches in zip(ladder["entries"], recent):
            entry["faults_per_match"] = stats.faults_per_match(matches, entry["bot"])
            current = live_rating.get(entry["bot"])
            entry["history"] = [] if current is None else [
                round(r, 2) for _, r in stats.rating_history(current, matches, entry["bot"])]
        return ladder, len(ladder["entries"])

    data: dict[str, Any] = await _shared(request).get(("ladder", game, method), version, histories)
    return data


def ladder_context(game: str, method: str, data: dict[str, Any]) -> dict[str, Any]:
    """The ladder page's template context from ``ladder_data``'s answer: its entries with their sparklines, split
    into one section per connected group when there are several (``arena.ratings.groups.group_sections``), and the
    note that their ratings are not comparable."""
    data = {**data, "entries": [{**e, "spark": charts.sparkline(e["history"])} for e in data["entries"]]}
    groups = int(data.get("groups") or 0)
    gone = removed_groups(data["entries"], lambda e: int(e.get("group") or 0), lambda e: bool(e.get("removed")))
    return {"game": game, "title": f"Ladder: {GAMES[game].info.title}", "method": method, "methods": LADDER_METHODS,
            "ladder": data, "sections": group_sections(data["entries"], lambda e: int(e.get("group") or 0), groups),
            "groups_note": groups_note(groups, gone), "games": games(), "history_matches": HISTORY_MATCHES}


async def ladder(request: Request) -> Response:
    game, method = _game(request), _method(request)
    return page(request, "ladder.html", ladder_context(game, method, await ladder_data(request, game, method)))


async def api_ladder(request: Request) -> Response:
    game, method = _game(request), _method(request)
    return api(await ladder_data(request, game, method))


# --- bots --------------------------------------------------------------------------------------------------------

BOTS_PAGE = 500  # bot versions per page of /bots


async def bots_data(request: Request) -> dict[str, Any]:
    """One page of the registered bot versions (ListBots, ``BOTS_PAGE`` at most, in order of game then bot id),
    grouped by game and NAME: ``names`` (each {game, name, versions: [bot dicts, oldest registration first],
    split: True for the first and last NAME of a page with pages before or after it, whose versions may be on the
    neighbouring page too}),
    ``bots`` (the versions of the page), ``next_page`` (the token of the next page, "" on the last) and ``page``
    (this page's token, "" for the first). ``?page=TOKEN`` asks for a later page (the referee refuses a malformed
    token: 400); ``?game=GAME`` only that game's bots (``game``; an unknown game: 404)."""
    token = request.query_params.get("page", "")
    game = request.query_params.get("game", "")
    if game and game not in GAMES:
        raise HTTPException(404, f"no game named {game[:32]!r} (games: {', '.join(game_ids())})")
    try:
        reply = await _reader(request).call("ListBots", arena_pb2.ListBotsRequest(game=game, page_size=BOTS_PAGE,
                                                                                  page_token=token))
    except ArenaReadError as exc:
        if not token or exc.code != grpc.StatusCode.INVALID_ARGUMENT:
            raise
        raise HTTPException(400, "this page link is not one of this arena's: a page is reached by the \"next page\" "
                                 "link of the one before it (page is not a page number); start from /bots") from exc
    versions = [message_dict(b) for b in reply.bots]
    names: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for bot in versions:
        names.setdefault((bot["game"], bot["name"]), []).append(bot)
    grouped: list[dict[str, Any]] = [
        {"game": game, "name": name, "versions": sorted(group, key=lambda b: float(b.get("registered_at") or 0)),
         "split": False}
        for (game, name), group in names.items()]
    if grouped and token:  # the page starts where the last one stopped: its first NAME may have begun there
        grouped[0]["split"] = True
    if grouped and reply.next_page_token:  # ... and its last NAME may go on in the next one
        grouped[-1]["split"] = True
    return {"bots": versions, "names": grouped, "next_page": reply.next_page_token, "page": token, "game": game}


async def bots(request: Request) -> Response:
    return page(request, "bots.html", {"title": "Bots", **await bots_data(request)})


async def api_bots(request: Request) -> Response:
    return api(await bots_data(request))


async def _record(reader: ArenaReader, match_id: str) -> dict[str, Any] | None:
    """The revealed record of ``match_id``; None when there is none, or when it cannot be read (the referee's
    DATA_LOSS for a record damaged in its store, or JSON that is no object): the bot page skips it."""
    try:
        detail = await reader.call("GetMatch", arena_pb2.GetMatchRequest(match_id=match_id))
    except ArenaDataLoss:
        return None
    if not detail.record_json:
        return None
    try:
        record = json.loads(detail.record_json)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


class _Respelt(Exception):
    """A bot page asked with its NAME in another letter case than the registered one (``bot``: the ref as held)."""

    def __init__(self, bot: str) -> None:
        super().__init__(bot)
        self.bot = bot


def _respelt(request: Request, exc: _Respelt) -> Response:
    """A temporary redirect (307) to the same page under the NAME as registered."""
    return RedirectResponse(request.url_for(request.scope["route"].name, bot=exc.bot).path, status_code=307)


async def bot_data(request: Request) -> dict[str, Any]:
    """A bot (NAME: every version; NAME@VERSION: that one): its versions, its ladder line and live Elo history
    per game and version, its newest matches (each with ``own_seats``: the seats it sat in, ``stats.seats_of``),
    and per game its faults by kind and Decide latency over the revealed
    records among them. Raises ``HTTPException(404)`` for a bot that is neither registered nor in any match (for a
    house bot, ``house:NAME``, saying so: it is never registered), and ``_Respelt`` for a NAME registered in another
    letter case (no bot has it as typed)."""
    reader = _reader(request)
    bot = str(request.path_params["bot"])
    if not 1 <= len(bot) <= 129:
        raise HTTPException(404, "no bot with an empty or over-long name")
    if is_house_bot(bot):  # a seat name of the arena's own sample bot (an SPRT's other seats): no registered bot
        raise HTTPException(404, f"{bot!r} is a house bot: played by the arena itself, not registered, so it has "
                                 "no bot page")
    name = bot.partition("@")[0]
    if not BOT_NAME_RE.match(name):
        raise HTTPException(404, f"no bot named {bot[:80]!r}: a bot name is 1..64 characters of A-Z a-z 0-9 _ . -")
    named = await reader.call("ListBots", arena_pb2.ListBotsRequest(name=name))  # every version, however many bots
    versions = [b for b in map(message_dict, named.bots) if b["bot_id"] == bot or "@" not in bot]
    try:
        matches = await _matches_of(reader, bot, HISTORY_MATCHES)
    except ArenaNotFound:
        matches = []
    if not versions and not matches:
        if named.held_spelling:  # the NAME in another letter case: the page of the bot the visitor means
            held, version = named.held_spelling, bot.partition("@")[2]
            if version:  # that version's page when it is one of the held NAME's, else the NAME's page
                known = {b.bot_id for b in (await reader.call("ListBots", arena_pb2.ListBotsRequest(name=held))).bots}
                held += f"@{version}" if f"{held}@{version}" in known else ""
            raise _Respelt(held)
        raise HTTPException(404, f"no bot named {bot!r} is registered or has played")
    ids = sorted({b["bot_id"] for b in versions} | {s for m in matches for s in m["seats"]
                                                   if s.partition("@")[0] == name and (s == bot or "@" not in bot)})
    game_set = sorted({b["game"] for b in versions} | {m["game"] for m in matches})
    ladders = await asyncio.gather(*(reader.call("GetLadder", arena_pb2.GetLadderRequest(game=g)) for g in game_set))
    per_game: dict[str, Any] = {}
    recent = [{**m, "own_seats": stats.seats_of(m, bot)} for m in matches[:RECENT_MATCHES]]
    seated = [(m, seat) for m in recent if m.get("revealed") and (seat := stats.seat_of(m, bot)) is not None]
    seat_stats = await asyncio.gather(*(_seat_stats(request, reader, m["match_id"], seat) for m, seat in seated))
    for game, reply in zip(game_set, ladders):
        lines = {e.bot: message_dict(e) for e in reply.entries if e.bot in ids}
        history = {bot_id: stats.rating_history(line["rating"], [m for m in matches if m["game"] == game], bot_id)
                   for bot_id, line in lines.items()}
        per_game[game] = {"ladder": list(lines.values()),
                          "history": {k: [[x, round(y, 2)] for x, y in v] for k, v in history.items()},
                          "records": stats.combined_stats(one for (m, _), one in zip(seated, seat_stats)
                                                          if m["game"] == game)}
    return {"bot": bot, "name": name, "versions": versions, "bot_ids": ids, "games": per_game,
            "matches": recent, "recent_matches": RECENT_MATCHES}


async def _seat_stats(request: Request, reader: ArenaReader, match_id: str, seat: int) -> stats.SeatStats | None:
    """``stats.seat_stats`` of seat ``seat`` of revealed match ``match_id``, read (``_record``: a whole record,
    up to 300 KB of JSON) once for every client and kept (``SharedReads``: a revealed record does not change, and
    a bot page reads up to ``RECENT_MATCHES`` of them); None when its record cannot be read."""

    async def read() -> tuple[stats.SeatStats | None, int]:
        record = await _record(reader, match_id)
        one = stats.seat_stats(record, seat) if record is not None else None
        return one, 1 + (len(one.latencies) // 100 if one is not None else 0)

    kept: stats.SeatStats | None = await _shared(request).get(("seat_stats", match_id, seat), "", read)
    return kept


async def bot_page(request: Request) -> Response:
    try:
        data = await bot_data(request)
    except _Respelt as exc:
        return _respelt(request, exc)
    for game, facts in data["games"].items():
        series = [charts.Series(bot_id, [(x, y) for x, y in points]) for bot_id, points in facts["history"].items()]
        played = {line["bot"]: int(line.get("matches") or 0) for line in facts["ladder"]}
        cut = any(played.get(bot_id, 0) > len(points) - 1 for bot_id, points in facts["history"].items())
        facts["chart"] = charts.line_chart(series, x_label="its newest rated matches" if cut else "rated matches",
                                           y_label="live Elo",
                                           title=f"live Elo of {data['bot']} after each match ({game})")
    titles = {g["id"]: g["title"] for g in games()}
    return page(request, "bot.html", {"title": f"Bot {data['bot']}", "titles": titles, **data})


async def api_bot(request: Request) -> Response:
    try:
        return api(await bot_data(request))
    except _Respelt as exc:
        return _respelt(request, exc)


# --- home --------------------------------------------------------------------------------------------------------

def ladder_top(ladder: dict[str, Any], most: int = HOME_LADDER_LINES, groups_most: int = HOME_GROUPS) -> dict[str, Any]:
    """The head of a ladder (GetLadder's reply, JSON form) for the home page: the first ``most`` lines of each of
    its first ``groups_most`` sections (``group_sections``: the whole ladder, or one per connected group, so that a
    bot of group 2 is on the home page too), as ``{"sections": [{"heading", "entries"}]`` (heading "" for one
    group) ``, "entries"`` (every line shown, in section order) ``, "more_groups"`` (sections left out) ``, "bots"``
    (lines on the whole ladder) ``}``. Within a section the bots with too few matches for a margin come after the
    others, as on the ladder."""
    entries = ladder["entries"]
    sections = group_sections(entries, lambda e: int(e.get("group") or 0), int(ladder.get("groups") or 0))
    shown = [{"heading": heading, "entries": part[:most]} for heading, part in sections[:groups_most]]
    return {"sections": shown, "entries": [e for s in shown for e in s["entries"]],
            "more_groups": len(sections) - len(shown), "bots": len(entries)}


async def index_data(request: Request) -> dict[str, Any]:
    """The home page's facts: the games, the arena (GetArenaInfo), the newest 5 tournaments (ListTournaments) and
    the head of each game's live Elo ladder (``ladder_top``; one GetLadder per game), read at the same time."""
    reader = _reader(request)
    ids = game_ids()
    info, recent, *ladders = await asyncio.gather(
        reader.call("GetArenaInfo", arena_pb2.GetArenaInfoRequest()),
        reader.call("ListTournaments", arena_pb2.ListTournamentsRequest(page_size=5)),
        *(reader.call("GetLadder", arena_pb2.GetLadderRequest(game=g, method="elo")) for g in ids))
    return {"games": games(), "arena": message_dict(info),
            "tournaments": [message_dict(t) for t in recent.tournaments],
            "ladders": {g: ladder_top(message_dict(reply)) for g, reply in zip(ids, ladders)}}


async def index(request: Request) -> Response:
    """The home page; while the referee does not answer it still shows the games and their links, and says so (503,
    reloading itself as the 503 page does)."""
    try:
        data = await index_data(request)
    except ArenaDown as exc:
        return arena_down(request, exc, "index.html", {"games": games(), "title": "Arena"})
    return page(request, "index.html", {"title": "Arena", "info": data["arena"], **data})


async def api_index(request: Request) -> Response:
    return api(await index_data(request))


routes = [
    Route("/", index, name="index"),
    Route("/api/", api_index, name="api_index"),
    Route("/ladder/{game}", ladder, name="ladder"),
    Route("/api/ladder/{game}", api_ladder, name="api_ladder"),
    Route("/bots", bots, name="bots"),
    Route("/api/bots", api_bots, name="api_bots"),
    Route("/bots/{bot}", bot_page, name="bot"),
    Route("/api/bots/{bot}", api_bot, name="api_bot"),
]
