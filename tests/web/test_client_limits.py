"""Each client address's share of the web pages (``arena.web.client_limits``): requests beyond it answer 429 with
Retry-After while other addresses are served; at the ASGI level, then through a real uvicorn over loopback from
two source addresses, then as ``arena web``'s options."""

from __future__ import annotations

import asyncio
import http.client
import json
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.web.app import WebOptions
from arena.web.client_limits import ClientLimiter, ClientLimits, client_key
from arena.web.serving import WebServer


class Held:
    """An ASGI app answering 200 "ok" once ``release`` is set (so requests stay in flight while a test wants)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.answered = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.release.wait()
        self.answered += 1
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"ok"})


async def ask(app: Any, client: str, path: str = "/") -> tuple[int, dict[bytes, bytes], bytes]:
    """(status, headers, body) of one GET of ``path`` from ``client`` through the ASGI ``app``."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": path, "headers": [], "client": (client, 40000)}
    await app(scope, receive, send)
    return sent[0]["status"], dict(sent[0]["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


def test_requests_beyond_at_once_are_refused_for_that_address_only() -> None:
    async def scenario() -> None:
        held = Held()
        limiter = ClientLimiter(held, ClientLimits(at_once=2, rate=""))
        first = [asyncio.create_task(ask(limiter, "10.0.0.1")) for _ in range(2)]
        await asyncio.sleep(0.05)
        status, headers, body = await ask(limiter, "10.0.0.1", "/api/ladder/take5")
        assert status == 429 and headers[b"retry-after"] == b"1"
        assert json.loads(body) == {"status": 429, "error": "too many requests from your address (at most 2 "
                                                           "requests of one address are answered at once); try "
                                                           "again in 1 s"}
        other = asyncio.create_task(ask(limiter, "10.0.0.2"))
        await asyncio.sleep(0.05)
        held.release.set()
        assert [(await t)[0] for t in first] == [200, 200]
        assert (await other)[0] == 200
        assert (await ask(limiter, "10.0.0.1"))[0] == 200  # its requests answered: room again
        assert held.answered == 4 and limiter.refused == 1 and not limiter.answering

    asyncio.run(scenario())


def test_pages_at_once_are_counted_apart_from_static_files() -> None:
    async def scenario() -> None:
        held = Held()
        limiter = ClientLimiter(held, ClientLimits(at_once=0, rate="", pages_at_once=2))
        pages = [asyncio.create_task(ask(limiter, "10.0.0.1", path)) for path in ("/ladder/take5", "/api/bots")]
        await asyncio.sleep(0.05)
        status, _headers, body = await ask(limiter, "10.0.0.1", "/matches/m1")
        assert status == 429 and b"at most 2 pages (not static files) of one address" in body
        files = [asyncio.create_task(ask(limiter, "10.0.0.1", path)) for path in ("/static/arena.css", "/docs/")]
        await asyncio.sleep(0.05)
        held.release.set()
        assert [(await t)[0] for t in pages + files] == [200] * 4  # static files were not held back
        assert (await ask(limiter, "10.0.0.1", "/matches/m1"))[0] == 200

    asyncio.run(scenario())


def test_a_rate_counts_per_address_and_a_page_is_told_in_html() -> None:
    async def scenario() -> None:
        held = Held()
        held.release.set()
        limiter = ClientLimiter(held, ClientLimits(at_once=0, rate="3/minute"))
        assert [(await ask(limiter, "10.0.0.1"))[0] for _ in range(3)] == [200, 200, 200]
        status, headers, body = await ask(limiter, "10.0.0.1", "/ladder/take5")
        assert status == 429 and headers[b"content-type"].startswith(b"text/html")
        wait = int(headers[b"retry-after"])
        assert 1 <= wait <= 60
        assert b"at most 3 requests of one address per minute" in body
        assert f'content="{wait}"'.encode() in body  # the page reloads by itself after the wait
        assert (await ask(limiter, "10.0.0.2"))[0] == 200
        assert held.answered == 4

    asyncio.run(scenario())


def test_an_ipv6_client_is_its_64_and_a_mapped_ipv4_its_address() -> None:
    assert client_key({"client": ("2001:db8:1:2:aaaa::1", 1)}) == client_key({"client": ("2001:db8:1:2::9", 1)})
    assert client_key({"client": ("2001:db8:1:2::1", 1)}) != client_key({"client": ("2001:db8:1:3::1", 1)})
    assert client_key({"client": ("::ffff:10.1.2.3", 1)}) == "10.1.2.3"
    assert client_key({"client": None}) == "?"


@pytest.mark.parametrize("limits", [{"at_once": -1}, {"pages_at_once": -1}, {"rate": "lots"},
                                    {"rate": "5 per fortnight"}])
def test_a_share_that_is_no_share_is_refused(limits: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ClientLimits(**limits)


def get(port: int, source: str, path: str = "/healthz", forwarded_for: str = "") -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        connection.request("GET", path, headers={"X-Forwarded-For": forwarded_for} if forwarded_for else {})
        answer = connection.getresponse()
        return answer.status, answer.read().decode()
    finally:
        connection.close()


def test_a_real_server_holds_one_address_to_its_rate_and_serves_another(outside_address: str) -> None:
    server = WebServer(WebOptions(server="127.0.0.1:1", client_limits=ClientLimits(at_once=4, rate="5/minute")),
                       "127.0.0.1:0")
    port = server.start()
    try:
        answers = [get(port, "127.0.0.1") for _ in range(7)]
        assert [status for status, _ in answers] == [200] * 5 + [429] * 2
        assert "per minute" in answers[-1][1]
        assert get(port, "127.0.0.2")[0] == 429  # every loopback address is one client
        assert get(port, outside_address) == (200, "ok")
    finally:
        server.stop()


@pytest.mark.parametrize("trusted", [(), ("127.0.0.3",), ("127.0.0.0/30",)])
def test_x_forwarded_for_names_the_client_only_from_a_trusted_proxy(trusted: tuple[str, ...]) -> None:
    """A local process that writes a fresh X-Forwarded-For per request is still one client, unless it is the proxy
    the operator gave (--trust-proxy, an address or a network), whose forwarded clients each get a share."""
    server = WebServer(WebOptions(server="127.0.0.1:1", client_limits=ClientLimits(at_once=4, rate="3/minute")),
                       "127.0.0.1:0", trusted_proxies=trusted)
    port = server.start()
    try:
        statuses = [get(port, "127.0.0.3", forwarded_for=f"10.1.{i}.1")[0] for i in range(5)]
        assert statuses == ([200] * 5 if trusted else [200] * 3 + [429] * 2)
    finally:
        server.stop()


def test_arena_web_refuses_a_rate_that_is_no_rate() -> None:
    result = CliRunner().invoke(cli, ["web", "--listen", "127.0.0.1:0", "--server", "127.0.0.1:1",
                                      "--client-rate", "lots"])
    assert result.exit_code != 0
    assert "--client-rate 'lots' is not a rate such as '100/second;3000/minute'" in result.output
