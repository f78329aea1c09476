"""What one failed call to a bot comes to in a fault's detail (``arena.match.call_outcome.rpc_detail``): the
method, the status and the bot's own text, cut to ``limits.BOT_STATUS_TEXT`` characters, so that a bot's exception
text (a status may carry up to grpc's 16 KiB of metadata) cannot fill its match records."""

from __future__ import annotations

import grpc
import pytest

from arena.core import limits
from arena.match.call_outcome import rpc_detail


class _Failed(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__()
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


@pytest.mark.parametrize("size", [0, 10, limits.BOT_STATUS_TEXT, 5053])
def test_the_bots_status_text_is_kept_up_to_its_limit(size: int) -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(size))
    detail = rpc_detail("Decide", _Failed(grpc.StatusCode.INTERNAL, text), 1000)
    kept = (text if size <= limits.BOT_STATUS_TEXT else text[:limits.BOT_STATUS_TEXT - 1] + "…") or "no details"
    assert detail == f"Decide: INTERNAL: {kept}"


def test_a_deadline_says_the_deadline_not_the_text() -> None:
    detail = rpc_detail("Decide", _Failed(grpc.StatusCode.DEADLINE_EXCEEDED, "x" * 5000), 700)
    assert detail == "Decide: no answer within the 700 ms deadline"
