"""The web app: ``create_app(server)`` -> a Starlette ASGI app serving read-only pages and their ``/api/`` JSON
mirrors, run under uvicorn by ``arena web`` and ``arena serve --web``.

The app is one more client of the referee's ``arena.v1.Arena`` gRPC service (like the CLI): every fact comes from
a public read method, so the pages show no more than those methods do, and the app never touches Redis.

What routes may use, on ``request.app.state``:

- ``arena``: the ``arena.web.client.ArenaReader`` of the referee (``await arena.call("GetMatch", request)``);
  its ``ArenaDown`` becomes the 503 page, its ``ArenaNotFound`` the 404 page, its ``ArenaDataLoss`` (a match
  record damaged in the referee's store) a 422 page, by the app's error handlers.
- ``server``: the referee's address "host:port", for messages.
- ``templates``: the ``starlette.templating.Jinja2Templates`` of ``arena/web/templates`` (pages extend
  ``base.html``); ``arena.web.responses.page`` renders one.
- ``options``: the ``WebOptions`` the app was made with (``record``: a local record file to show, or None).
- ``frames_cache`` and ``shared_reads``: what the app keeps for every client, a finished match's viewer frames
  (``arena.web.frames_cache``) and the costly reads behind the ladder and tournament pages
  (``arena.web.shared_reads``).

Routes: ``arena.web.pages.routes`` (home, ladder, bots), ``arena.web.tournament_pages.routes`` (tournaments), the
match viewer's ``arena.web.matches.routes`` when that module is installed, ``/docs`` (the documentation site,
``arena.web.docs``), ``/static`` (``arena/web/static``: every asset, no CDN) ``/healthz`` and ``/favicon.ico``.

Every answer carries the security headers of ``SECURITY_HEADERS`` (a Content-Security-Policy allowing only the
app's own scripts, styles and images: no inline script, no framing) and a Cache-Control: ``no-cache`` for pages
and ``/api/`` (they change as matches finish), an hour for static assets found (a missing one: ``no-cache``). The
headers are added outside Starlette's error middleware (``WebApp``), so a 500 carries them too; links in pages are
paths (``path_for``), never built from the request's Host header. With ``WebOptions.allowed_hosts`` set (``arena
web`` sets it for a loopback ``--listen``: the loopback names only) a request whose Host header names another host
answers 400 (``HostCheck``): a page of some other site cannot read this one through a DNS name rebound to loopback.
With ``WebOptions.client_limits`` set (``arena web`` sets it) each client address has a share of the pages
(``arena.web.client_limits``): requests beyond it answer 429, so one address cannot take the pages from everyone.
"""

from __future__ import annotations

import contextlib
import importlib.util
import ipaddress
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.web import filters, pages, tournament_pages
from arena.web.client import ArenaReader
from arena.web.client_limits import ClientLimiter, ClientLimits
from arena.web.docs import DEFAULT_DOCS_DIR, docs_routes
from arena.web.frames_cache import FramesCache
from arena.web.responses import error_handlers
from arena.web.shared_reads import SharedReads

HERE = Path(__file__).resolve().parent
TEMPLATES_DIR = HERE / "templates"
STATIC_DIR = HERE / "static"

CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                           "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
                           "frame-ancestors 'none'")
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=()",
}
PAGE_CACHE_CONTROL = "no-cache"
STATIC_CACHE_CONTROL = "public, max-age=3600"


@dataclass(frozen=True)
class WebOptions:
    """How the app serves: ``server`` (the referee's "host:port"), ``tls_ca`` (PEM of the CA to trust, for a
    referee serving TLS; None: plaintext), ``record`` (a record file saved by ``arena play --record`` to show
    with all hands, or None), ``docs`` (the built documentation site to serve under ``/docs``, by default the
    ``site/`` folder ``make docs`` builds; None or a folder without ``index.html``: ``/docs`` says how to build it),
    ``allowed_hosts`` (the Host header names answered, see ``host_name``; None: every host), ``client_limits``
    (each client address's share of the pages, ``arena.web.client_limits``; None: no limit, as for tests and
    benchmarks; ``arena web`` sets one), ``web_key`` (the referee's web key, sent with every read:
    ``arena.web.client.ArenaReader``; "": none)."""

    server: str
    tls_ca: bytes | None = None
    record: Path | None = None
    docs: Path | None = DEFAULT_DOCS_DIR
    allowed_hosts: tuple[str, ...] | None = None
    client_limits: ClientLimits | None = None
    web_key: str = field(default="", repr=False)


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def host_name(host_header: str) -> str:
    """The host name of a Host header value, lower case, without port or IPv6 brackets: ``"[::1]:8080"`` ->
    ``"::1"``, ``"Example.org:80"`` -> ``"example.org"``; ``""`` for an empty or malformed value."""
    value = host_header.strip().lower()
    if value.startswith("["):
        inner, sep, rest = value[1:].partition("]")
        return inner if sep and (not rest or rest.startswith(":")) else ""
    name, _, port = value.partition(":")
    return name if not port or port.isdigit() else ""


def default_allowed_hosts(listen: str, extra: Iterable[str] = ()) -> tuple[str, ...] | None:
    """The Host names pages on ``listen`` ("host:port") answer to: for a loopback address the loopback names
    (``LOOPBACK_NAMES``, any 127.x address given) plus ``extra``; for any other address None (every host) unless
    ``extra`` names some, then those and the listen host."""
    host = host_name(listen.rpartition(":")[0] or listen)
    names = tuple(host_name(e) or e.lower() for e in extra)
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if loopback:
        return tuple(dict.fromkeys((*LOOPBACK_NAMES, host, *names)))
    if names:
        return tuple(dict.fromkeys((host, *names))) if host not in ("0.0.0.0", "::", "") else names
    return None


class HostCheck:
    """ASGI middleware answering 400 to an HTTP request whose Host header is not one of ``allowed`` (host names,
    see ``host_name``): the check of Starlette's ``TrustedHostMiddleware``, with IPv6 literals understood."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self.app = app
        self.allowed = frozenset(a.lower() for a in allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers", []))
            name = host_name(headers.get(b"host", b"").decode("latin-1"))
            if name not in self.allowed:
                await PlainTextResponse("This server does not answer to that host name (Host header).",
                                        status_code=400)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def relative_location(value: bytes) -> bytes:
    """A redirect's Location as a path (``b"http://evil.example/bots/x?a=1"`` -> ``b"/bots/x?a=1"``): Starlette's
    trailing-slash redirect writes the request's Host header into an absolute URL; every page's own redirect is a
    path already."""
    url = urlsplit(value.decode("latin-1"))
    if not url.scheme and not url.netloc:
        return value
    path = "/" + url.path.lstrip("/")  # "//evil.example" as a path would be another host again
    return (path + (f"?{url.query}" if url.query else "")).encode("latin-1")


class SecurityHeaders:
    """ASGI middleware adding ``SECURITY_HEADERS`` and a Cache-Control (unless the route set one) to every HTTP
    answer, and making a redirect's Location a path (``relative_location``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope.get("path", "").startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(name, relative_location(value) if name.lower() == b"location" else value)
                           for name, value in message.get("headers", [])]
                present = {name.lower() for name, _ in headers}
                for name, value in SECURITY_HEADERS.items():
                    if name.encode() not in present:
                        headers.append((name.encode(), value.encode()))
                if b"cache-control" not in present:  # an asset is kept an hour; a missing one is asked again
                    kept = static and message.get("status") in (200, 304)
                    cache = STATIC_CACHE_CONTROL if kept else PAGE_CACHE_CONTROL
                    headers.append((b"cache-control", cache.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class WebApp(Starlette):
    """The app: ``Starlette`` whose every answer passes ``SecurityHeaders`` as the outermost layer, so a 500 made
    by Starlette's error middleware carries the headers too; inside it each client's share (``ClientLimiter``,
    when ``client_limits`` is set), then the Host check."""

    allowed_hosts: tuple[str, ...] | None = None
    client_limits: ClientLimits | None = None
    limiter: ClientLimiter | None = None

    def build_middleware_stack(self) -> ASGIApp:
        inner = super().build_middleware_stack()
        if self.allowed_hosts is not None:
            inner = HostCheck(inner, self.allowed_hosts)
        if self.client_limits is not None and self.client_limits.enabled:
            if self.limiter is None:  # one limiter for the app's life, however often the stack is built
                self.limiter = ClientLimiter(inner, self.client_limits)
            else:
                self.limiter.app = inner
            inner = self.limiter
        return SecurityHeaders(inner)


@jinja2.pass_context
def path_for(context: Any, name: str, /, **path_params: Any) -> str:
    """Templates' ``url_for``: the PATH of route ``name`` (``/static/arena.css``), never an absolute URL made from
    the request's Host header (a forged Host would otherwise write other hosts into the page's links, and behind a
    TLS proxy an ``http://`` link is refused as mixed content)."""
    return str(context["request"].app.url_path_for(name, **path_params))


def viewer_routes() -> list[BaseRoute]:
    """The match viewer's routes (``arena.web.matches.routes``, a list or a function returning one); none when
    that module is not installed."""
    if importlib.util.find_spec("arena.web.matches") is None:
        return []
    module = importlib.import_module("arena.web.matches")
    routes = module.routes
    return list(routes() if callable(routes) else routes)


async def healthz(request: Request) -> Response:
    """200 "ok" while the web app runs (whether or not the referee answers: see the pages for that)."""
    return PlainTextResponse("ok")


async def favicon(request: Request) -> Response:
    """The site's icon where browsers ask for it without a page's ``<link rel="icon">`` (an ``/api/`` answer opened
    in a tab): a redirect to ``/static/favicon.svg``."""
    return RedirectResponse(str(request.app.url_path_for("static", path="favicon.svg")), status_code=301)


def create_app(server: str | WebOptions, *, reader: Any = None) -> Starlette:
    """The ASGI app for the referee at ``server`` ("host:port", or ``WebOptions``). ``reader`` replaces the
    ``ArenaReader`` (tests and benchmarks give their own). The gRPC channel opens at the first read and closes with
    the app's lifespan."""
    options = server if isinstance(server, WebOptions) else WebOptions(server=server)
    arena = reader if reader is not None else ArenaReader(options.server, tls_ca=options.tls_ca,
                                                          web_key=options.web_key)
    templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
    filters.install(templates.env)
    templates.env.globals["url_for"] = path_for
    docs = options.docs
    # asked at each page (a `make docs` while the pages are served shows the link at once): one stat
    templates.env.globals["docs_built"] = lambda: docs is not None and (docs / "index.html").is_file()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await arena.close()

    routes: list[BaseRoute] = [
        *docs_routes(options.docs),
        *pages.routes,
        *tournament_pages.routes,
        *viewer_routes(),
        Route("/healthz", healthz),
        Route("/favicon.ico", favicon),
        Mount("/static", app=StaticFiles(directory=str(STATIC_DIR)), name="static"),
    ]
    app = WebApp(routes=routes, exception_handlers=dict(error_handlers), lifespan=lifespan)
    app.allowed_hosts = options.allowed_hosts
    app.client_limits = options.client_limits
    app.state.arena = arena
    app.state.server = options.server
    app.state.templates = templates
    app.state.options = options
    app.state.frames_cache = FramesCache()  # finished matches' viewer frames, built once each
    app.state.shared_reads = SharedReads()  # the costly reads of ladders and tournaments, shared by all clients
    return app
