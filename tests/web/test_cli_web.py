"""``arena serve --web HOST:PORT``: the referee and its pages in one process; the pages read that referee."""

from __future__ import annotations

import httpx2 as httpx  # the HTTP client the dev extra installs
from web_helpers import Proc

from arena.store.redis_server import PrivateRedis
from arena_sdk.games import game_ids


def test_serve_with_web_serves_the_pages_of_its_own_referee(redis_server: PrivateRedis, tmp_path) -> None:
    serve = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data"), "--redis-url",
                  redis_server.url, "--workers", "0", "--web", "127.0.0.1:0"], tmp_path / "serve.log")
    try:
        url = serve.wait_for("web pages: ").split("web pages: ", 1)[1].strip()
        server = serve.wait_for("listening on ").rsplit("listening on ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:")  # loopback, like the referee
        answer = httpx.get(f"{url}api/", timeout=30)
        assert answer.status_code == 200
        assert answer.json()["arena"]["games"] == list(game_ids())
        assert httpx.get(f"{url}ladder/take5", timeout=30).status_code == 200
        assert server.startswith("127.0.0.1:")
    finally:
        assert serve.stop() == 0


def test_pages_on_loopback_answer_only_to_loopback_host_names(redis_server: PrivateRedis, tmp_path) -> None:
    """DNS rebinding: a page of another site whose name was rebound to 127.0.0.1 sends its own name as Host; the
    pages on a loopback --listen answer it 400, and answer loopback names and names given by --allowed-host."""
    serve = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data"), "--redis-url",
                  redis_server.url, "--workers", "0"], tmp_path / "serve.log")
    web = None
    try:
        server = serve.wait_for("listening on ").rsplit("listening on ", 1)[1].strip()
        web = Proc(["web", "--listen", "127.0.0.1:0", "--server", server, "--allowed-host", "arena.example"],
                   tmp_path / "web.log")
        url = web.wait_for("arena web serving ").split("serving ", 1)[1].split()[0]
        port = url.rstrip("/").rsplit(":", 1)[1]
        codes = {host: httpx.get(f"{url}api/", headers={"host": host}, timeout=30).status_code
                 for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "arena.example",
                              f"evil.example:{port}", "localhost.evil.example", "")}
        assert codes == {f"127.0.0.1:{port}": 200, f"localhost:{port}": 200, f"[::1]:{port}": 200,
                         "arena.example": 200, f"evil.example:{port}": 400, "localhost.evil.example": 400, "": 400}
        refused = httpx.get(f"{url}ladder/take5", headers={"host": "evil.example"}, timeout=30)
        assert "Host header" in refused.text and refused.headers["x-frame-options"] == "DENY"
    finally:
        if web is not None:
            assert web.stop() == 0
        assert serve.stop() == 0
