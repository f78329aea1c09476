"""The documentation site under ``/docs``: the folder ``make docs`` builds (MkDocs, ``site/``), served as static
files by the web app, so a person reading the ladder has the docs one link away, offline like every other asset.

``docs_routes(folder)`` -> the routes to add to the app:

- with a built site (``folder/index.html`` exists): ``/docs`` redirects to ``/docs/``, and ``/docs/PATH`` answers
  the site's files (``index.html`` for a folder, the site's own ``404.html`` with status 404 for a missing page,
  whose links, styles and scripts are absolute ``/docs/...`` addresses, as the site's build writes them, so they
  work at any depth);
- without one: every ``/docs`` address answers the app's 404 page saying how to build the site, until it is
  built (checked at each request until then: no restart needed).

The pages of the site carry a few inline scripts of their theme (MkDocs Material's page set-up). They are allowed
by their SHA-256 hashes, computed once from the built pages, in a Content-Security-Policy of their own
(``docs_policy``): nothing else inline runs, and nothing outside the app is fetched (the theme's file:// search shim
from a CDN is refused by that policy; search runs from the site's own worker).
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

from arena.web.responses import not_found

DEFAULT_DOCS_DIR = Path(__file__).resolve().parents[2] / "site"  # ``make docs`` in a source checkout
SITE_PATH = "/docs"  # where the app serves the site; its 404 page links there (tools/mkdocs_hooks.py)
MAX_PAGES_HASHED = 5000  # pages scanned for inline scripts; a site bigger than that is not ours
_INLINE_SCRIPT = re.compile(rb"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S)


def is_built(folder: Path | None) -> bool:
    """True when ``folder`` holds a built site (its ``index.html``)."""
    return folder is not None and (folder / "index.html").is_file()


def inline_script_hashes(folder: Path) -> list[str]:
    """The CSP sources (``'sha256-...'``) of every distinct inline script (a ``<script>`` without ``src``) in the
    ``.html`` pages under ``folder``, sorted. JSON data blocks (``type="application/json"``) are not scripts and are
    skipped."""
    found: set[str] = set()
    for n, page in enumerate(sorted(folder.rglob("*.html"))):
        if n >= MAX_PAGES_HASHED:
            break
        for match in _INLINE_SCRIPT.finditer(page.read_bytes()):
            attrs = match.group("attrs").lower()
            if b"src=" in attrs or b"application/json" in attrs:
                continue
            digest = base64.b64encode(hashlib.sha256(match.group("body")).digest()).decode()
            found.add(f"'sha256-{digest}'")
    return sorted(found)


def docs_policy(script_hashes: list[str]) -> str:
    """The Content-Security-Policy of the site's pages: the app's own files, plus the inline scripts whose hashes
    are given; styles may be inline (the theme sets some), no framing, no other origin."""
    scripts = " ".join(["'self'", *script_hashes])
    return (f"default-src 'none'; script-src {scripts}; worker-src 'self'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'self'; "
            "form-action 'self'; frame-ancestors 'none'")


class DocsFiles(StaticFiles):
    """``StaticFiles`` of a built site (``html=True``: folders answer their ``index.html``, a missing page the
    site's ``404.html``), every answer with the site's Content-Security-Policy."""

    def __init__(self, folder: Path) -> None:
        super().__init__(directory=str(folder), html=True)
        self.policy = docs_policy(inline_script_hashes(folder))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"content-security-policy"]
                headers.append((b"content-security-policy", self.policy.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await super().__call__(scope, receive, send_with_policy)


class LazySite:
    """The ``DocsFiles`` of ``folder`` from the first request that finds the site built: a site built by ``make
    docs`` after the app started is served from then on, without a restart; before, the 404 page saying how to
    build it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files: DocsFiles | None = None

    def built(self) -> bool:
        if self.files is None and is_built(self.folder):
            self.files = DocsFiles(self.folder)
        return self.files is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.built():
            response = await _not_built(Request(scope, receive))
            await response(scope, receive, send)
            return
        assert self.files is not None
        await self.files(scope, receive, send)


async def _not_built(request: Request) -> Response:
    return not_found(request, "the documentation site is not built here: run `make docs` in the repository (or "
                              "give `arena web --docs FOLDER` a built site); it is served as soon as it is built")


def docs_routes(folder: Path | None) -> list[BaseRoute]:
    """The routes of ``/docs`` for the site in ``folder`` (None: no site), served once it is built (``LazySite``).
    See the module docstring."""
    if folder is None:
        return [Route(SITE_PATH, _not_built), Route(SITE_PATH + "/{rest:path}", _not_built)]
    site = LazySite(folder)

    async def to_site(request: Request) -> Response:
        if not site.built():
            return await _not_built(request)
        return RedirectResponse(f"{SITE_PATH}/", status_code=308)

    return [Route(SITE_PATH, to_site), Mount(SITE_PATH, app=site, name="docs")]
