"""The arena on web pages: ``create_app(server)`` is a read-only Starlette app (Jinja2 pages and their ``/api/``
JSON mirrors) that reads the referee's ``arena.v1.Arena`` service like the CLI does, run by ``arena web`` and
``arena serve --web``.

Modules: ``app`` (the app, its security headers and state), ``client`` (the gRPC read client), ``responses``
(pages, JSON answers, 404 and 503), ``pages`` (ladders, bots, tournaments), ``charts`` (server-side SVG),
``filters`` (number formats), ``serving`` (uvicorn in a thread). The match viewer adds ``matches``.
"""

from arena.web.app import WebOptions, create_app

__all__ = ["WebOptions", "create_app"]
