"""Seat seeds (arena.core.seeds.seat_seed, local_seat_seeds) and the SDK's seeded generators (arena_sdk.rng, Bot.rng):
independent golden values, properties, and whole local games over gRPC that replay with the same seed."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.core.errors import TournamentError
from arena.core.seeds import deal_seed, local_seat_seeds, seat_seed
from arena.match.local_bots import play
from arena_sdk import MatchInfo, play_game, take5, taki
from arena_sdk.rng import derive_seed, generator
from sample_bots.montecarlo_bot import MonteCarloBot
from sample_bots.random_bot import RandomBot
from sample_bots.taki_random_bot import TakiRandomBot

SECRET = 0xC0FFEE_1234_5678_9ABC_DEF0_1122_3344_5566_7788_99AA_BBCC_DDEE_FF00


def test_seat_seed_is_the_documented_hmac_of_the_deal_message_and_seat() -> None:
    key = SECRET.to_bytes(32, "big")
    want = int.from_bytes(hmac.new(key, b"seat/t7/2/3/0/1", hashlib.sha256).digest()[:8], "big") & (2**63 - 1)
    assert seat_seed(SECRET, "t7", 2, 3, 0, 1) == want
    # not the deal seed, and every seat, attempt and deal differs
    seeds = {seat_seed(SECRET, "t7", 2, 3, a, s) for a in range(3) for s in range(10)}
    assert len(seeds) == 30 and deal_seed(SECRET, "t7", 2, 3, 0) not in seeds


def test_local_seat_seeds_are_keyed_by_the_match_seed() -> None:
    want = int.from_bytes(hmac.new((7).to_bytes(8, "big"), b"seat/2", hashlib.sha256).digest()[:8], "big")
    assert local_seat_seeds(7, 4)[2] == want & (2**63 - 1)
    assert local_seat_seeds(7, 4) == local_seat_seeds(7, 4) != local_seat_seeds(8, 4)
    assert len(set(local_seat_seeds(7, 10))) == 10
    with pytest.raises(TournamentError, match="0..2"):
        local_seat_seeds(-1, 2)


@given(st.integers(0, 2**63 - 1), st.integers(0, 9), st.integers(0, 9), st.text(max_size=4))
def test_decision_generators_depend_on_the_place_only(seed: int, hand: int, turn: int, kind: str) -> None:
    a = generator(seed, hand, turn, kind).random()
    assert a == generator(seed, hand, turn, kind).random()
    assert derive_seed(seed, hand, turn, kind) != derive_seed(seed, hand, turn + 1, kind)
    assert 0 <= derive_seed(seed, hand) < 2**63


def test_derive_seed_refuses_a_seed_out_of_range() -> None:
    with pytest.raises(ValueError, match="seat seed"):
        derive_seed(2**63, 1)


def _info(seat_seed: int | None) -> MatchInfo:
    return MatchInfo("m1", "take5", 0, 2, ("a", "b"), take5.Take5Config(), seat_seed)


def test_bot_rng_comes_from_the_seat_seed_and_the_decision_place() -> None:
    one, two = RandomBot(), RandomBot()
    one.begin_match(_info(42))
    two.begin_match(_info(42))
    assert one.match_rng.random() == two.match_rng.random()
    one.begin_decision(0, 3, "TAKE5_CHOOSE_CARD", 0)
    two.begin_decision(0, 3, "TAKE5_CHOOSE_CARD", 0)
    assert one.rng.random() == two.rng.random() == generator(42, 0, 3, "TAKE5_CHOOSE_CARD", 0).random()
    other = RandomBot()
    other.begin_match(_info(43))
    other.begin_decision(0, 3, "TAKE5_CHOOSE_CARD", 0)
    assert other.rng.random() != generator(42, 0, 3, "TAKE5_CHOOSE_CARD", 0).random()


def test_the_bots_own_seed_stands_in_when_the_referee_gives_none() -> None:
    one, two, free = RandomBot(seed=5), RandomBot(seed=5), RandomBot()
    for bot in (one, two, free):
        bot.begin_match(_info(None))
    assert one.seat_seed == two.seat_seed == derive_seed(5, "m1", 0)
    assert free.seat_seed is not None and free.seat_seed != one.seat_seed  # entropy


@pytest.mark.parametrize("bots", [
    lambda: [RandomBot(), RandomBot(), MonteCarloBot(samples=4)],
    lambda: [TakiRandomBot(), TakiRandomBot(), TakiRandomBot()],
])
def test_in_process_games_replay_with_the_same_seat_seeds(bots) -> None:  # type: ignore[no-untyped-def]
    game = type(bots()[0]).games[0]
    config = take5.Take5Config(limit=20) if game == "take5" else taki.TakiConfig(hand_size=4)
    seeds = local_seat_seeds(11, 3)
    first = play_game(bots(), config, seed=3, seat_seeds=seeds)
    again = play_game(bots(), config, seed=3, seat_seeds=seeds)
    other = [play_game(bots(), config, seed=3, seat_seeds=local_seat_seeds(s, 3)) for s in (12, 13, 14)]
    assert first == again
    assert any(o != first for o in other)  # the deal is the same: only the bots' randomness differs


def test_arena_play_with_one_seed_replays_the_whole_game_bots_randomness_included() -> None:
    config = take5.Take5Config(limit=15)
    specs = ["sample:random", "sample:random", "sample:random"]
    first = play(specs, config=config, seed=1234, deadline_ms=5000, match_id="crn-a")
    again = play(specs, config=config, seed=1234, deadline_ms=5000, match_id="crn-b")
    other = play(specs, config=config, seed=1235, deadline_ms=5000, match_id="crn-c")
    assert first.seat_seeds == local_seat_seeds(1234, 3) == again.seat_seeds
    assert [d["action"] for d in first.decisions] == [d["action"] for d in again.decisions]
    assert first.result == again.result
    assert [d["action"] for d in first.decisions] != [d["action"] for d in other.decisions]


def test_a_bot_that_assigns_its_own_rng_keeps_it() -> None:
    import random

    from arena_sdk import Take5Bot

    class Own(Take5Bot):
        name = "own"

        def __init__(self) -> None:
            self.rng = random.Random(1)

        def choose_card(self, view: take5.Take5View) -> int:
            return int(self.rng.choice(view.hand))

    bot = Own()
    bot.begin_match(_info(42))
    bot.begin_decision(0, 0, "TAKE5_CHOOSE_CARD", 0)
    assert bot.rng.random() == random.Random(1).random()


def test_the_sdk_server_hands_each_bot_object_its_seat_seed_over_grpc() -> None:
    import grpc

    from arena_sdk import Take5Bot
    from arena_sdk.pb import bot_pb2, bot_pb2_grpc
    from arena_sdk.server import create_server

    class Keeper(Take5Bot):
        name = "keeper"
        seen: list[tuple[int, int | None, float]] = []

        def on_start(self, match: MatchInfo) -> None:
            Keeper.seen.append((match.seat, match.seat_seed, self.match_rng.random()))

        def choose_card(self, view: take5.Take5View) -> int:
            return view.hand[0]

    server, port = create_server(Keeper, "127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = bot_pb2_grpc.BotStub(channel)
            for seat, seed in ((0, 99), (1, None)):
                stub.StartMatch(bot_pb2.StartMatchRequest(match_id="m", game="take5", seat=seat, num_players=2,
                                                          seat_seed=seed), timeout=10)
            with pytest.raises(grpc.RpcError) as refused:
                stub.StartMatch(bot_pb2.StartMatchRequest(match_id="m2", game="take5", seat=0, num_players=2,
                                                          seat_seed=2**63), timeout=10)
    finally:
        server.stop(None)
    assert Keeper.seen[0] == (0, 99, generator(99).random())
    assert Keeper.seen[1][:2] == (1, None)  # no seat seed: entropy
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "seat_seed" in str(refused.value.details())
