"""How every route answers: an HTML page from a template, or its JSON mirror under ``/api/``; and the error pages
(404 for an unknown bot, tournament, match or address; 422 for a match whose stored record cannot be read; 503 while
the referee is down, retrying by itself).

Route modules (``pages``, ``matches``) use ``page``, ``api`` and ``message_dict``; ``app`` installs
``error_handlers``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

import grpc
from google.protobuf.descriptor import FieldDescriptor
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from arena.core.errors import REDIS_DOWN
from arena.web.client import ArenaDataLoss, ArenaDown, ArenaNotFound, ArenaReadError

RETRY_AFTER_S = 3  # the 503 page reloads itself after this many seconds (Retry-After and a meta refresh)


def page(request: Request, template: str, context: Mapping[str, Any], status_code: int = 200,
         headers: Mapping[str, str] | None = None) -> Response:
    """The page ``template`` (a file in ``arena/web/templates``) rendered with ``context``."""
    templates = request.app.state.templates
    response: Response = templates.TemplateResponse(request, template, dict(context), status_code=status_code,
                                      headers=dict(headers or {}))
    return response


def api(data: Any, status_code: int = 200, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """A JSON answer of ``/api/``."""
    return JSONResponse(data, status_code=status_code, headers=dict(headers or {}))


def message_dict(message: Any) -> dict[str, Any]:
    """A protobuf message of the Arena read replies as a JSON-ready dict: field names as in the .proto, every
    field present (zeros too: a score of 0 is a real score; an unset ``optional`` field or sub-message is null),
    64-bit integers as numbers, a non-finite double as proto3 JSON writes it ("Infinity", "-Infinity", "NaN"),
    an enum as its number, bytes as hex. (``google.protobuf.json_format`` gives the same shape, 20 times slower.)
    A match summary's deal (seed, round, deal, table, attempt) is null until it is revealed, as the CLI's JSON
    writes it: the referee sends zeros while it is secret, which are no deal."""
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.is_repeated:
            out[field.name] = [_value(field, v) for v in value]
        elif field.has_presence and not message.HasField(field.name):
            out[field.name] = None
        else:
            out[field.name] = _value(field, value)
    if message.DESCRIPTOR.full_name in _SECRET_UNTIL_REVEALED and not out.get("revealed"):
        out.update(dict.fromkeys(_SECRET_UNTIL_REVEALED[message.DESCRIPTOR.full_name]))
    return out


# fields a reply gives as zeros while they are secret, by message: null until its ``revealed`` is true
_SECRET_UNTIL_REVEALED = {"arena.v1.MatchSummary": ("seed", "round", "deal", "table", "attempt")}


def _value(field: Any, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return message_dict(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, bytes):
        return value.hex()
    return value


def is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def not_found(request: Request, what: str) -> Response:
    """404: ``what`` ("no bot named x", "no such page /y") as a page, or as ``{"error": ...}`` under /api/."""
    if is_api(request):
        return api({"error": what, "status": 404}, status_code=404)
    return page(request, "404.html", {"what": what}, status_code=404)


log = logging.getLogger("arena.web")
_LAST_DOWN = [""]  # the reason of the last failure logged by ``arena_down``


def arena_down(request: Request, exc: ArenaDown, template: str = "503.html",
               context: Mapping[str, Any] | None = None) -> Response:
    """503 while the referee does not answer: a page that says so (without the referee's address) and reloads
    itself every ``RETRY_AFTER_S`` seconds; ``template`` ("503.html", or a page that shows what it can without the
    referee, e.g. the home page) is rendered with ``context`` plus ``message``, ``slow`` and ``retry_after_s``.
    A read that ran out of time (DEADLINE_EXCEEDED) or waited too long for this web app's share of the referee
    (RESOURCE_EXHAUSTED) is a slow referee, not a down one: the message says it was slow to answer and to reload
    (``slow``); "does not answer" is kept for UNAVAILABLE."""
    headers = {"Retry-After": str(RETRY_AFTER_S)}
    # The referee's address stays out of the answer: it may be a host of an inner network (`arena web` prints it).
    message = f"the arena's referee does not answer ({exc.code.name.lower()})"
    slow = exc.code in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.RESOURCE_EXHAUSTED)  # up, but late
    if slow:
        message = (f"the arena's referee was slow to answer ({exc.code.name.lower()}): it is up but busy; reload the "
                   f"page")
    if exc.detail == REDIS_DOWN:  # the referee answered: its Redis is down
        message = "the arena's referee answers, but its Redis cannot be used now"
    elif exc.detail != _LAST_DOWN[0]:  # the operator's log says why, once per reason (a referee that speaks TLS
        _LAST_DOWN[0] = exc.detail      # to a web server started without --tls-ca, one that is stopped...)
        hint = ("it is slow to answer (a loaded machine?)" if slow
                else "if it serves TLS, `arena web` needs its CA: --tls-ca")
        log.warning("the referee does not answer %s (%s): %s; %s", exc.method, exc.code.name, exc.detail[:300], hint)
    if is_api(request):
        return api({"error": message, "status": 503, "retry_after_s": RETRY_AFTER_S}, status_code=503,
                   headers=headers)
    return page(request, template, {**(context or {}), "message": message, "slow": slow,
                                    "retry_after_s": RETRY_AFTER_S},
                status_code=503, headers=headers)


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return not_found(request, exc.detail if exc.detail != "Not Found" else f"no page at {request.url.path}")
    if is_api(request):
        return api({"error": exc.detail, "status": exc.status_code}, status_code=exc.status_code)
    return page(request, "error.html", {"status": exc.status_code, "message": exc.detail},
                status_code=exc.status_code)


async def _arena_down(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ArenaDown)
    return arena_down(request, exc)


async def _arena_not_found(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ArenaNotFound)
    return not_found(request, exc.detail)


async def _arena_data_loss(request: Request, exc: Exception) -> Response:
    """DATA_LOSS: the referee cannot read a match's stored record (damaged in its store). 422 with the referee's
    message, which names the match and nothing of the damaged bytes."""
    assert isinstance(exc, ArenaDataLoss)
    if is_api(request):
        return api({"error": exc.detail, "status": 422}, status_code=422)
    return page(request, "error.html", {"status": 422, "message": exc.detail}, status_code=422)


async def _arena_read_error(request: Request, exc: Exception) -> Response:
    """Any other refusal of the referee (INVALID_ARGUMENT for a malformed id...): 400 with its message; 502 for
    the rest."""
    import grpc

    assert isinstance(exc, ArenaReadError)
    status = 400 if exc.code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.OUT_OF_RANGE) else 502
    if is_api(request):
        return api({"error": exc.detail, "status": status}, status_code=status)
    return page(request, "error.html", {"status": status, "message": exc.detail}, status_code=status)


async def _server_error(request: Request, exc: Exception) -> Response:
    """A fault of the pages themselves: 500 with one line, never a traceback (the log has it)."""
    message = "the page could not be made (an error of the web app; its log says more)"
    if is_api(request):
        return api({"error": message, "status": 500}, status_code=500)
    return page(request, "error.html", {"status": 500, "message": message}, status_code=500)


error_handlers = {
    Exception: _server_error,
    HTTPException: _http_exception,
    ArenaDown: _arena_down,
    ArenaNotFound: _arena_not_found,
    ArenaDataLoss: _arena_data_loss,
    ArenaReadError: _arena_read_error,
}
