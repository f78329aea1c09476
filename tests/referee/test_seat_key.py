"""A tablemate cannot reach another seat's bot state (bot.proto ``StartMatchRequest.seat_key``): a saboteur seat that,
at each of its decisions, calls its victim's bot (an SDK bot without a bot secret, on loopback) with the real match id
and the victim's seat (StartMatch to reset it, Decide with a fake complete history, EndMatch to end it) reaches bot
objects of its own; the victim's real views stay exactly the engine's ``observe`` on both paths (unary calls and
the match stream). Real gRPC over loopback, SDK servers in process."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.match.options import RefereeOptions
from arena.match.record import SeatSpec
from arena.match.referee import run_match_sync
from arena_sdk import wire
from arena_sdk.games import take5
from arena_sdk.games.take5 import wire as take5_wire
from arena_sdk.pb import bot_pb2, bot_pb2_grpc
from arena_sdk.server import create_server

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bots"))
from any_random_bot import random_bot_class  # noqa: E402
from view_spy import check_views  # noqa: E402

MATCH = "t9-000042"
VICTIM_SEAT = 1


def fake_view(turn: int) -> bot_pb2.Take5View:
    """A complete view of the victim's seat with a history no real match has: every card played in turn 0."""
    view = take5_wire.view_to_proto(take5.observe(take5.new_game(3, take5.Take5Config(limit=66), seed=999),
                                                  VICTIM_SEAT))
    view.turn = turn
    del view.history[:]
    view.history.add(turn=0, plays=[bot_pb2.Take5Play(seat=0, card=c, row=0) for c in range(1, 105)])
    return view


def test_a_tablemate_reaches_none_of_its_victims_bot_state(stream: bool) -> None:
    seen: list[tuple[Any, str, int, Any]] = []  # (bot object, match id, seat, view) of every decision of a seat
    fake_objects: set[int] = set()  # the victim's bot objects the saboteur's calls reached
    lock = threading.Lock()

    class Recording(random_bot_class("take5")):  # type: ignore[misc]
        """A random bot that keeps (bot object, match id, seat, view) of every decision in ``seen``."""

        def seen_now(self, view: Any) -> None:
            with lock:
                seen.append((id(self), self.match.match_id, self.match.seat, view))

        def choose_card(self, view: Any) -> int:
            self.seen_now(view)
            return int(super().choose_card(view))

        def choose_row(self, view: Any) -> int:
            self.seen_now(view)
            return int(super().choose_row(view))

    class Victim(Recording):
        name = "victim"

        def on_start(self, match: Any) -> None:
            super().on_start(match)
            if tuple(match.player_names[:1]) == ("saboteur-says",):
                with lock:
                    fake_objects.add(id(self))

        def choose_card(self, view: Any) -> int:
            if 104 in {p.card for t in view.history for p in t.plays} and len(view.history[0].plays) > 10:
                with lock:
                    fake_objects.add(id(self))
            return super().choose_card(view)

    victim_server, victim_port = create_server(Victim, "127.0.0.1:0")
    victim_server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{victim_port}")
    victim = bot_pb2_grpc.BotStub(channel)
    attacks: list[str] = []

    class Saboteur(Recording):
        name = "saboteur"

        def choose_card(self, view: Any) -> int:
            names = ["saboteur-says"] * 3
            config = wire.config_to_proto("take5", take5.Take5Config(limit=66))
            for call, request in (
                (victim.StartMatch, bot_pb2.StartMatchRequest(match_id=MATCH, game="take5", seat=VICTIM_SEAT,
                                                              num_players=3, player_names=names, config=config)),
                (victim.Decide, bot_pb2.DecideRequest(match_id=MATCH, seat=VICTIM_SEAT, sequence=view.turn,
                                                      kind=wire.kind_value(take5.CHOOSE_CARD),
                                                      take5=fake_view(view.turn))),
                (victim.EndMatch, bot_pb2.EndMatchRequest(match_id=MATCH, seat=VICTIM_SEAT)),
            ):
                try:
                    call(request, timeout=5)
                    attacks.append("answered")
                except grpc.RpcError as exc:
                    attacks.append(exc.code().name)
            return super().choose_card(view)

    saboteur_server, saboteur_port = create_server(Saboteur, "127.0.0.1:0")
    saboteur_server.start()
    try:
        seats = [SeatSpec("saboteur", f"127.0.0.1:{saboteur_port}"), SeatSpec("victim", f"127.0.0.1:{victim_port}"),
                 SeatSpec("victim-2", f"127.0.0.1:{victim_port}")]
        record = run_match_sync(MATCH, "take5", seats, take5.Take5Config(limit=66), seed=5,
                                options=RefereeOptions(deadline_ms=5000, match_stream=stream))
    finally:
        channel.close()
        saboteur_server.stop(0)
        victim_server.stop(0)
    assert record.faults == ()
    assert len(attacks) >= 30 and attacks.count("answered") >= 20  # the calls were made, and served
    assert fake_objects  # they reached bot objects: objects of their own
    real = [(m, s, v) for obj, m, s, v in seen if obj not in fake_objects]
    assert check_views(record, real) >= 30  # every real view of every seat was the engine's observe


@pytest.fixture(params=[False, True], ids=["unary", "stream"])
def stream(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)
