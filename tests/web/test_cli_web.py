"""``arena serve --web HOST:PORT``: the referee and its pages in one process; the pages read that referee."""

from __future__ import annotations

import httpx2 as httpx  # the HTTP client the dev extra installs
from web_helpers import Proc

from arena.store.redis_server import PrivateRedis


def test_serve_with_web_serves_the_pages_of_its_own_referee(redis_server: PrivateRedis, tmp_path) -> None:
    serve = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data"), "--redis-url",
                  redis_server.url, "--workers", "0", "--web", "127.0.0.1:0"], tmp_path / "serve.log")
    try:
        url = serve.wait_for("web pages: ").split("web pages: ", 1)[1].strip()
        server = serve.wait_for("listening on ").rsplit("listening on ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:")  # loopback, like the referee
        answer = httpx.get(f"{url}api/", timeout=30)
        assert answer.status_code == 200
        assert answer.json()["arena"]["games"] == ["take5", "taki"]
        assert httpx.get(f"{url}ladder/take5", timeout=30).status_code == 200
        assert server.startswith("127.0.0.1:")
    finally:
        assert serve.stop() == 0
