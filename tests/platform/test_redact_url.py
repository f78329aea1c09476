"""``redact_url``: a Redis URL as logs and messages show it, every password in it replaced by ``***``."""

from __future__ import annotations

import pytest

from arena.store.redis_urls import redact_url


@pytest.mark.parametrize(("url", "shown"), [
    ("redis://:s3cret@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
    ("redis://user:s3cret@redis.example:6380/2", "redis://user:***@redis.example:6380/2"),
    ("redis://127.0.0.1:56391/0?password=QueryPw1234567890", "redis://127.0.0.1:56391/0?password=***"),
    ("rediss://h:6379/0?ssl_cert_reqs=required&Password=x%26y&db=1",
     "rediss://h:6379/0?ssl_cert_reqs=required&Password=***&db=1"),
    ("redis://u:a@h:1/0?password=b", "redis://u:***@h:1/0?password=***"),
    ("unix:///tmp/redis.sock?password=pw&db=0", "unix:///tmp/redis.sock?password=***&db=0"),
    ("redis://[::1]:6379/0", "redis://[::1]:6379/0"),  # nothing secret: as it is
    ("redis://127.0.0.1:6379/0?db=3", "redis://127.0.0.1:6379/0?db=3"),
    ("redis://h:99999999/0", "***"),  # does not parse (a port out of range): nothing of it shown
])
def test_every_password_of_a_redis_url_is_hidden(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    for secret in ("s3cret", "QueryPw", "x%26y", "x&y"):
        assert secret not in redact_url(url)
