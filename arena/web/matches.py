"""The match viewer: the page of one match and its ``/api/`` mirrors; a local record file shown the same way.

Routes (``routes``):

- ``/matches/{match_id}``: the match's page (seats, result, the viewer: step one decision or one round back and
  forth, jump to the start, the end or a typed turn, a scrubber, speed, play/pause, keyboard arrows, a URL per turn
  ``?turn=N``, ``?turn=end`` for the last, and a perspective ``?view=public|all|seat:K``), links to the other tables
  of its deal and a download of its record.
- ``/api/matches/{match_id}``: the summary, what is withheld and why, the perspectives offered, the other tables.
- ``/api/matches/{match_id}/frames?view=P``: the frames of perspective P (``arena.render.frames``), built once per
  match, perspective and record (``arena.web.frames_cache``).
- ``/api/matches/{match_id}/record``: the record as a file for ``arena replay`` (only once the match is revealed).
- ``/api/matches/{match_id}/live``: a match being played now, public perspective only (``GetLiveMatch``): its frames
  so far; the page polls it and follows the newest frame, and reloads once the match has finished.
- ``/record``, ``/api/record``, ``/api/record/frames``, ``/api/record/download``: the same for the record file
  ``arena web --record FILE`` was given (``app.state.options.record``), with all hands (404 without one).

Secrecy: the facts come from ``GetMatch``, which gives a record only once its deals are public (README "Security
model"); every perspective is cut on this server by ``arena.render.frames``, so a card a perspective may not see is
never sent to the browser. Without a record, no frame is made at all: the page shows the summary and why the rest is
withheld.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from arena.core.specs import match_id as tournament_match_id
from arena.render import config_text, score_label, score_unit
from arena.render.base import RenderError
from arena.render.frames import ALL, PUBLIC, build_frames, perspectives
from arena.web.client import ArenaDataLoss, ArenaNotFound
from arena.web.frames_cache import FramesBusy, FramesCache, encode_json, frames_key
from arena.web.responses import api, message_dict, page
from arena_sdk.games import GAMES
from arena_sdk.pb import arena_pb2

MAX_TURN = 999_999  # ?turn=N: a frame index; a match has far fewer frames (a larger one shows the last frame)
TURN_RE = re.compile(r"[0-9]{1,6}")  # ASCII digits only: str.isdigit() admits other scripts' digits
MAX_RECORD_BYTES = 64 * 1024 * 1024  # a local record file larger than this is refused (a match record is far less)

LIVE_STALE_S = 5.0  # a live match's worker publishes it twice a second: this long without news, it may have died


class RecordUnreadable(Exception):
    """A record that cannot be shown (not JSON, not a match record, a game without viewer frames); the message
    says why, for a person."""


def _match_id(request: Request) -> str:
    match_id = str(request.path_params["match_id"])
    if not 0 < len(match_id) <= 64:
        raise HTTPException(400, "a match id has 1 to 64 characters")
    return match_id


async def _detail(request: Request, match_id: str) -> Any:
    """``GetMatch`` of ``match_id`` (404 via ``ArenaNotFound`` when unknown; 422 via ``ArenaDataLoss`` when its
    stored record cannot be read)."""
    return await request.app.state.arena.call("GetMatch", arena_pb2.GetMatchRequest(match_id=match_id))


def _record(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise RecordUnreadable(f"the record is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RecordUnreadable("the record is not a JSON object")
    return data


def _frames(record: dict[str, Any], view: str) -> dict[str, Any]:
    """The frames of a finished match's record, with the bot notes it holds (the referee gives them only when the
    organiser shows notes)."""
    try:
        return build_frames(record, view, notes=True).to_dict()
    except RenderError as exc:
        raise RecordUnreadable(str(exc)) from None
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        raise RecordUnreadable(f"the record cannot be replayed: {type(exc).__name__}: {exc}") from None


def frames_body(record_json: str, view: str) -> bytes:
    """The ``/api/matches/ID/frames`` answer (JSON bytes) of the record ``record_json`` seen from ``view``; raises
    ``RecordUnreadable``. Module-level, so that ``FramesBuilder``'s process can run it."""
    return encode_json(_frames(_record(record_json), view))


def _view(request: Request, offered: list[str], default: str = PUBLIC) -> str:
    view = request.query_params.get("view", default) or default
    if view not in offered:
        raise HTTPException(400, f"view must be one of {', '.join(offered)}, not {view[:24]!r}")
    return view


async def _other_tables(request: Request, summary: Any) -> list[dict[str, Any]]:
    """The other matches of the same tournament, round and deal (duplicate deals: the same cards at other tables);
    [] while the deal is not revealed or outside tournaments. Every format numbers the tables of one deal one after
    the other (table t of a deal is match ``first + t``, ``arena.tournaments``), so they are read by id: at most
    ``tables_per_deal - 1`` matches, however large the tournament."""
    if not summary.revealed or not summary.tournament_id:
        return []
    prefix, _, number = summary.match_id.rpartition("-")
    if prefix != summary.tournament_id or not number.isascii() or not number.isdigit():
        return []
    arena = request.app.state.arena
    tournament = await arena.call("GetTournament", arena_pb2.GetTournamentRequest(id=summary.tournament_id))
    first = int(number) - summary.table
    ids = [tournament_match_id(summary.tournament_id, first + t) for t in range(tournament.tables_per_deal)
           if t != summary.table and first + t >= 0]

    async def table(mid: str) -> Any:
        try:
            return (await arena.call("GetMatch", arena_pb2.GetMatchRequest(match_id=mid))).summary
        except ArenaNotFound:  # not played (yet), or failed
            return None

    found = await asyncio.gather(*(table(mid) for mid in ids))
    return [{"match_id": m.match_id, "table": m.table, "seats": list(m.seats)} for m in found
            if m is not None and (m.round, m.deal) == (summary.round, summary.deal)]


def _seats(summary: dict[str, Any], forfeits: list[Any] | None = None) -> list[dict[str, Any]]:
    """One row per seat of a match's result table: seat, bot, score, rank, faults, rating delta and, from the record
    (``forfeits``: its result's, None without one), why the seat forfeited ("" when it did not)."""
    rows = []
    for s, bot in enumerate(summary.get("seats", [])):
        def at(key: str, s: int = s) -> Any:
            values = summary.get(key) or []
            return values[s] if s < len(values) else None
        forfeit = forfeits[s] if forfeits is not None and s < len(forfeits) else None
        rows.append({"seat": s, "bot": bot, "score": at("scores"), "rank": at("ranks"), "faults": at("faults"),
                     "rating_delta": at("rating_deltas"), "forfeit": forfeit if isinstance(forfeit, str) else ""})
    return rows


async def match_data(request: Request, match_id: str) -> dict[str, Any]:
    """What ``/api/matches/{match_id}`` answers: ``summary`` (``MatchSummary`` as JSON), ``withheld`` ("" or why
    there is no record), ``perspectives`` (none without a record), ``other_tables``, the URLs of the frames and the
    record, the game's ``config`` (JSON form) and the record's ``forfeits`` (per seat, why it forfeited or None;
    both None without a record)."""
    detail = await _detail(request, match_id)
    summary = message_dict(detail.summary)
    has_record = bool(detail.record_json)
    config = forfeits = None
    if has_record:
        try:
            record = _record(detail.record_json)
            result = record.get("result")
            config, forfeits = record.get("config"), result.get("forfeits") if isinstance(result, dict) else None
        except RecordUnreadable:
            config = None
    return {
        "config": config if isinstance(config, dict) else None,
        "forfeits": forfeits if isinstance(forfeits, list) else None,
        "summary": summary, "withheld": detail.withheld, "has_record": has_record,
        "perspectives": perspectives(len(detail.summary.seats), hands=True) if has_record else [],
        "other_tables": await _other_tables(request, detail.summary),
        "frames_url": f"/api/matches/{quote(match_id)}/frames" if has_record else None,
        "record_url": f"/api/matches/{quote(match_id)}/record" if has_record else None,
    }


async def live_data(request: Request, match_id: str) -> dict[str, Any]:
    """What ``/api/matches/{match_id}`` answers for a match a worker is playing now (``GetLiveMatch``): the same
    keys as ``match_data`` with ``live`` True and the public perspective only. Raises ``ArenaNotFound`` when no
    worker plays it."""
    live = await request.app.state.arena.call(  # its facts only: no frame (from past the last)
        "GetLiveMatch", arena_pb2.GetLiveMatchRequest(match_id=match_id, from_frame=MAX_TURN))
    summary = {"match_id": match_id, "game": live.game, "tournament_id": live.tournament_id,
               "seats": list(live.seats), "scores": [], "ranks": [], "faults": [], "rating_deltas": []}
    return {"summary": summary, "withheld": live.withheld, "has_record": False, "live": True, "ended": live.ended,
            "perspectives": [] if live.withheld else [PUBLIC], "other_tables": [],
            "frames_url": None if live.withheld else f"/api/matches/{quote(match_id)}/live", "record_url": None}


async def _match_or_live(request: Request, match_id: str) -> dict[str, Any]:
    """``match_data`` of a finished match, else ``live_data`` of a running one; 404 (``ArenaNotFound``) for
    neither."""
    try:
        return await match_data(request, match_id)
    except ArenaNotFound:
        try:
            return await live_data(request, match_id)
        except ArenaNotFound:
            pass
        raise


async def match_page(request: Request) -> Response:
    """The viewer page of a finished or running match; a match a worker has just started but not yet published
    (it publishes within a second) gets a page that reloads until it shows; 404 for neither."""
    match_id = _match_id(request)
    try:
        data = await _match_or_live(request, match_id)
    except ArenaNotFound:
        if match_id not in await request.app.state.arena.running_matches(match_id):
            raise
        return page(request, "starting.html", {"title": f"Match {match_id}", "match_id": match_id})
    if data["withheld"] and not data["has_record"] and not data.get("live"):
        data = await _ended_live(request, match_id, data)
    game = data["summary"]["game"]
    config = data.pop("config", None)
    return _viewer_page(request, data, game, title=f"Match {match_id}", match_id=match_id,
                        page_url=f"/matches/{quote(match_id)}", config=config if isinstance(config, dict) else None)


async def _ended_live(request: Request, match_id: str, finished: dict[str, Any]) -> dict[str, Any]:
    """The page's data of a finished match whose record is withheld (``finished``): its last live frames when they
    are still kept (``LiveMatch.ended``, about two minutes after its end: the page shows its public frames to its
    end, and its viewer then the summary and why the rest is withheld), else ``finished``."""
    try:
        live = await live_data(request, match_id)
    except ArenaNotFound:
        return finished
    return live if live["ended"] and not live["withheld"] else finished


def _viewer_page(request: Request, data: dict[str, Any], game: str, *, title: str, match_id: str,
                 page_url: str, config: dict[str, Any] | None = None, default_view: str = PUBLIC) -> Response:
    offered = data["perspectives"]
    view = _view(request, offered, default_view) if offered else PUBLIC
    turn = request.query_params.get("turn", "0")
    if turn == "end":  # the last step (the viewer opens a match it followed live there once it has ended)
        turn = str(MAX_TURN)
    if not TURN_RE.fullmatch(turn):
        raise HTTPException(400, f"turn must be a whole number 0..{MAX_TURN} (a step of the match) or \"end\", got "
                                 f"{turn[:12]!r}")
    info = GAMES.get(game)
    context = {
        "title": title, "match_id": match_id, "data": data, "game": game,
        "seats": _seats(data["summary"], data.get("forfeits")),
        "game_title": info.info.title if info else game, "score_label": score_label(game, config),
        # the short title at phone width; without the config (a withheld record) the whole label, which says
        # what a score of each variant counts
        "score_unit": score_unit(game, config) if config is not None else score_label(game, config),
        "config_text": config_text(game, config) if config is not None else "", "view": view, "page_url": page_url,
        "turn": turn, "view_names": {v: _view_name(v, data) for v in offered},
        "viewer_script": _viewer_script(game),
    }
    return page(request, "match.html", context)


VIEWER_SCRIPTS = Path(__file__).resolve().parent / "static"


def _viewer_script(game: str) -> str | None:
    """The game's board drawing for the viewer, ``static/viewer-GAME.js``, when there is one (a game without it is
    shown by the generic viewer alone); None for a game this arena does not know."""
    name = f"viewer-{game}.js"
    return name if game.isidentifier() and game in GAMES and (VIEWER_SCRIPTS / name).is_file() else None


def _view_name(view: str, data: dict[str, Any]) -> str:
    if view == PUBLIC:
        return "public"
    if view == ALL:
        return "all hands"
    seat = int(view.split(":")[1])
    seats = data["summary"].get("seats", [])
    return f"seat {seat}" + (f" ({seats[seat]})" if seat < len(seats) else "")


async def api_match(request: Request) -> Response:
    return api(await _match_or_live(request, _match_id(request)))


async def api_live(request: Request) -> Response:
    """The public frames of a running match so far (``GetLiveMatch``), with ``live`` True, ``updated_at`` (s since
    epoch) and ``age_s`` (seconds since its worker's last publication; ``stale`` when over ``LIVE_STALE_S``: the
    worker may have died, and the match waits to be taken up again); ``ended`` true for the last frames of a match
    that has ended (kept about two minutes: the page shows its end); once that is gone, ``{"live": false,
    "finished": true}`` (the page then reloads as the finished match's).

    ``?from=N``: the frames from index N on only, as ``first_frame`` says (a viewer that holds frames asks from the
    ``settled_frames`` of its last answer and replaces what it holds from there); ``frame_count``: the frames the
    match has; ``started_at``: which play of the match they belong to (another one: ask for every frame again).
    A ``from`` that is not 0..999999 is a 400, and so is a ``view`` other than ``public`` (as on the match's page:
    a running match shows no hand)."""
    match_id = _match_id(request)
    start = request.query_params.get("from", "0") or "0"
    if not TURN_RE.fullmatch(start):
        raise HTTPException(400, "from is a frame index, 0 to 999999")
    _view(request, [PUBLIC])
    ask = arena_pb2.GetLiveMatchRequest(match_id=match_id, from_frame=int(start))
    try:
        live = await request.app.state.arena.call("GetLiveMatch", ask)
    except ArenaNotFound:
        try:
            await _detail(request, match_id)  # 404 when it has not finished either
        except ArenaDataLoss:
            pass  # finished, its record unreadable: the page reloads and says so
        return api({"live": False, "finished": True, "match_id": match_id})
    if live.withheld or not live.frames_json:
        return api({"live": True, "finished": False, "error": live.withheld or "nothing to show yet",
                    "status": 403}, status_code=403)
    age_s = round(max(0.0, time.time() - live.updated_at), 1) if live.updated_at else 0.0
    facts = json.dumps({"live": True, "finished": False, "ended": live.ended, "decisions": live.decisions,
                        "updated_at": live.updated_at,
                        "age_s": age_s, "stale": age_s > LIVE_STALE_S, "first_frame": live.first_frame,
                        "frame_count": live.frame_count, "settled_frames": live.settled_frames,
                        "started_at": live.started_at})
    # the referee's JSON object as it came, these facts added as its last keys: never parsed nor encoded again here
    # (a poll for every frame of a long match costs this event loop a copy, not a decode and an encode)
    frames = live.frames_json.rstrip()
    if not frames.endswith("}"):
        return api({"error": "the live frames could not be read", "status": 502}, status_code=502)
    body = frames[:-1].rstrip()
    return Response(f"{body}{', ' if body != '{' else ''}{facts[1:]}", media_type="application/json")


async def api_frames(request: Request) -> Response:
    match_id = _match_id(request)
    detail = await _detail(request, match_id)
    if not detail.record_json:
        return api({"error": detail.withheld or "this match has no record to show", "status": 403}, status_code=403)
    view = _view(request, perspectives(len(detail.summary.seats), hands=True))
    cache: FramesCache = request.app.state.frames_cache
    try:
        body = await cache.get(frames_key(match_id, view, detail.record_json),
                               functools.partial(frames_body, detail.record_json, view))
    except RecordUnreadable as exc:
        return api({"error": f"the record of match {match_id} cannot be shown: {exc}", "status": 422},
                   status_code=422)
    except FramesBusy as exc:
        return api({"error": f"{exc}: try again in a moment", "status": 503}, status_code=503,
                   headers={"retry-after": "2"})
    return Response(body, media_type="application/json")


async def api_record(request: Request) -> Response:
    match_id = _match_id(request)
    detail = await _detail(request, match_id)
    if not detail.record_json:
        return api({"error": detail.withheld or "this match has no record", "status": 403}, status_code=403)
    safe_id = "".join(c if c.isalnum() or c in "-_." else "_" for c in match_id)
    return Response(detail.record_json, media_type="application/json",
                    headers={"content-disposition": f'attachment; filename="{safe_id}.json"'})


# --- a local record file (arena web --record FILE) -------------------------------------------------------------


def _local_record(request: Request) -> tuple[Path, str]:
    path = getattr(request.app.state.options, "record", None)
    if path is None:
        raise HTTPException(404, "no local record: start the pages with arena web --record FILE")
    try:
        if Path(path).stat().st_size > MAX_RECORD_BYTES:
            return Path(path), ""
        return Path(path), Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise HTTPException(404, f"the record file {path} cannot be read: {exc.strerror or exc}") from None


def _local_data(path: Path, text: str) -> tuple[dict[str, Any], dict[str, Any] | None, str]:
    """(``match_data``-shaped dict, the record or None, the error or "") of a local record file."""
    error, record = "", None
    try:
        if not text:
            raise RecordUnreadable(f"the file is empty or larger than {MAX_RECORD_BYTES} bytes")
        record = _record(text)
        _frames(record, PUBLIC)
    except RecordUnreadable as exc:
        error, record = f"the record file {path.name} cannot be shown: {exc}", None
    seats = [s.get("name", "?") if isinstance(s, dict) else "?" for s in (record or {}).get("seats", [])]
    result = (record or {}).get("result") or {}
    summary = {"match_id": str((record or {}).get("match_id", path.stem)), "game": str((record or {}).get("game", "")),
               "tournament_id": "", "seats": seats, "scores": result.get("scores", []),
               "ranks": result.get("ranks", []), "faults": result.get("faults", []), "rating_deltas": []}
    forfeits = result.get("forfeits") if isinstance(result, dict) else None
    data = {"summary": summary, "withheld": "", "has_record": record is not None, "error": error,
            "forfeits": forfeits if isinstance(forfeits, list) else None,
            "perspectives": perspectives(len(seats), hands=True) if record is not None else [],
            "other_tables": [], "frames_url": "/api/record/frames" if record is not None else None,
            "record_url": "/api/record/download" if record is not None else None}
    return data, record, error


async def record_page(request: Request) -> Response:
    path, text = _local_record(request)
    data, record, _ = _local_data(path, text)
    config = (record or {}).get("config")
    return _viewer_page(request, data, data["summary"]["game"], title=f"Record {path.name}",
                        match_id=data["summary"]["match_id"], page_url="/record",
                        config=config if isinstance(config, dict) else None, default_view=ALL)


async def api_local(request: Request) -> Response:
    path, text = _local_record(request)
    return api(_local_data(path, text)[0])


async def api_local_frames(request: Request) -> Response:
    path, text = _local_record(request)
    data, record, error = _local_data(path, text)
    if record is None:
        return api({"error": error, "status": 422}, status_code=422)
    return api(_frames(record, _view(request, data["perspectives"], ALL)))


async def api_local_download(request: Request) -> Response:
    path, text = _local_record(request)
    return Response(text, media_type="application/json",
                    headers={"content-disposition": 'attachment; filename="record.json"'})


routes = [
    Route("/matches/{match_id}", match_page, name="match"),
    Route("/api/matches/{match_id}", api_match, name="api_match"),
    Route("/api/matches/{match_id}/frames", api_frames, name="api_match_frames"),
    Route("/api/matches/{match_id}/record", api_record, name="api_match_record"),
    Route("/api/matches/{match_id}/live", api_live, name="api_match_live"),
    Route("/record", record_page, name="record"),
    Route("/api/record", api_local, name="api_record"),
    Route("/api/record/frames", api_local_frames, name="api_record_frames"),
    Route("/api/record/download", api_local_download, name="api_record_download"),
]
