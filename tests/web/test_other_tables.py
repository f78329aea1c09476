"""The other tables of a match's deal (the match page's "Other tables of this deal") are read by id: every format
numbers the tables of one deal one after the other, so a page reads at most ``tables_per_deal - 1`` matches, never
the tournament's whole list (one page view of a 20,000-match tournament read 20,000 results). In process on a fake
reader that answers as the referee does for a finished duplicate-deal tournament."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from starlette.testclient import TestClient
from web_helpers import FakeReader, app_of

from arena_sdk.pb import arena_pb2

TABLES = 3  # tables per deal of t9


class _Tournament(FakeReader):
    """t9: a finished take5 round robin on duplicate deals of 3 tables; matches t9-000000.. in (round, deal, table)
    order, of which ``missing`` were never stored."""

    def __init__(self, missing: set[int] = frozenset()) -> None:  # type: ignore[assignment]
        super().__init__()
        self.missing = missing
        self.calls: Counter[str] = Counter()

    async def call(self, method: str, request: Any) -> Any:
        self.calls[method] += 1
        if method == "GetTournament":
            return arena_pb2.Tournament(id="t9", game="take5", format="round_robin", state="finished",
                                        seats_per_match=2, bots=["a@1", "b@1", "c@1", "d@1", "e@1", "f@1"],
                                        matches_total=30, deals="duplicate", tables_per_deal=TABLES)
        if method == "GetMatch":
            number = int(request.match_id.rpartition("-")[2])
            if request.match_id.startswith("t9-") and number < 30 and number not in self.missing:
                deal, table = divmod(number, TABLES)
                return arena_pb2.MatchDetail(summary=arena_pb2.MatchSummary(
                    match_id=request.match_id, tournament_id="t9", game="take5", seats=[f"s{number}", "x@1"],
                    scores=[3, 5], ranks=[1, 2], faults=[0, 0], revealed=True, round=deal // 5, deal=deal % 5,
                    table=table))
        return self.empty_or_not_found(method)


@pytest.mark.parametrize("match, missing, others", [
    (4, set(), ["t9-000003", "t9-000005"]),  # the middle table of deal 1
    (0, set(), ["t9-000001", "t9-000002"]),
    (29, {27}, ["t9-000028"]),  # a table never stored is left out
])
def test_the_other_tables_of_a_deal_are_read_by_id(match: int, missing: set[int], others: list[str]) -> None:
    reader = _Tournament(missing)
    with TestClient(app_of(reader)) as client:
        data = client.get(f"/api/matches/t9-{match:06d}").json()
        assert [m["match_id"] for m in data["other_tables"]] == others
        assert [m["table"] for m in data["other_tables"]] == [int(o[3:]) % TABLES for o in others]
        page = client.get(f"/matches/t9-{match:06d}").text
        assert all(f'href="/matches/{o}"' in page for o in others)
    assert reader.calls["ListMatches"] == 0 and reader.calls["GetMatch"] <= 2 * TABLES
