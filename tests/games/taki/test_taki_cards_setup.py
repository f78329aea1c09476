"""Taki cards, the deck, configs, seeded deals, explicit deals and the start of a game (taki.md "Deck",
"Setup and turn", readings 1 and 15)."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from arena_sdk.games import taki
from arena_sdk.games.base import RulesError
from arena_sdk.games.taki import TakiConfig, TakiDeal, effects, rules

COLOURED_SYMBOLS = ["1", "3", "4", "5", "6", "7", "8", "9", "STOP", "+2", "CHDIR", "PLUS", "TAKI"]


def test_the_deck_has_116_cards_in_the_documented_counts() -> None:
    cards = taki.deck()
    assert len(cards) == 116 == taki.DECK_SIZE
    counts = Counter(taki.card_token(c) for c in cards)
    expected = {f"{c}{s}": 2 for c in "RYGB" for s in COLOURED_SYMBOLS}
    expected.update({"SUPERTAKI": 2, "KING": 2, "+3": 2, "BREAKER": 2, "CHCOLOR": 4})
    assert counts == expected
    assert sum(1 for c in cards if taki.card_color(c) is None) == 12
    assert list(cards) == sorted(cards)


def test_there_is_no_plain_2() -> None:
    assert not any(taki.card_symbol(c) == 2 for c in taki.deck())
    for token in ("R2", "Y2", "G2", "B2"):
        with pytest.raises(RulesError, match="there is no plain 2"):
            taki.card_from_token(token)


@pytest.mark.parametrize(
    ("token", "color", "symbol"),
    [("R5", 0, "5"), ("Y+2", 1, "+2"), ("GSTOP", 2, "STOP"), ("BCHDIR", 3, "CHDIR"), ("RPLUS", 0, "PLUS"),
     ("YTAKI", 1, "TAKI"), ("SUPERTAKI", None, "SUPERTAKI"), ("KING", None, "KING"), ("+3", None, "+3"),
     ("BREAKER", None, "BREAKER"), ("CHCOLOR", None, "CHCOLOR"), ("b1", 3, "1")],
)
def test_tokens_colours_and_symbols(token: str, color: int | None, symbol: str) -> None:
    card = taki.card_from_token(token)
    assert taki.card_token(card) == token.upper()
    assert taki.card_color(card) == color
    assert taki.SYMBOL_TOKENS[taki.card_symbol(card)] == symbol


def test_every_card_round_trips_through_its_token() -> None:
    for card in set(taki.deck()):
        assert taki.card_from_token(taki.card_token(card)) == card


@pytest.mark.parametrize("bad", ["", "R10", "X5", "KINGS", "+4", 5, None])
def test_unknown_tokens_are_refused(bad: object) -> None:
    with pytest.raises(RulesError, match="no Taki card token"):
        taki.card_from_token(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [0, 2, 15, 63, 69, -1, True, 5.0, "R5"])
def test_non_cards_are_refused(bad: object) -> None:
    with pytest.raises(RulesError, match="no Taki card"):
        taki.card_token(bad)  # type: ignore[arg-type]


def test_colour_tokens() -> None:
    assert [taki.color_from_token(t) for t in ("R", "y", "green", "Blue")] == [0, 1, 2, 3]
    assert [taki.color_token(c) for c in range(4)] == ["R", "Y", "G", "B"]
    with pytest.raises(RulesError, match="no Taki colour"):
        taki.color_from_token("P")
    with pytest.raises(RulesError, match="no Taki colour"):
        taki.color_token(4)


# ---------------------------------------------------------------- config


def test_config_defaults() -> None:
    config = TakiConfig()
    assert (config.draw_when_playable, config.plus_draw_when_playable, config.turn_cap, config.stairs) == (
        True, False, 2000, False,
    )
    assert config.hand_size == 8


@pytest.mark.parametrize(
    ("field", "value"),
    [("turn_cap", 0), ("turn_cap", 100_001), ("turn_cap", 2.5), ("turn_cap", True), ("hand_size", 0),
     ("hand_size", 9), ("hand_size", "8"), ("stairs", 1), ("draw_when_playable", None),
     ("plus_draw_when_playable", "no")],
)
def test_config_refuses_bad_values_naming_field_and_value(field: str, value: object) -> None:
    with pytest.raises(RulesError, match=rf"TakiConfig\.{field} .*got {value!r}".replace("+", r"\+")):
        TakiConfig(**{field: value})  # type: ignore[arg-type]


# ---------------------------------------------------------------- deals


def test_seeded_deal_is_the_documented_shuffle() -> None:
    """deal_game: random.Random("taki:<seed>:deal") shuffles the ascending deck; hands in seat order, then the
    draw pile top first. Recomputed here from the documentation, independently of the engine."""
    seed = 2**255 + 12345
    cards = list(taki.deck())
    random.Random(f"taki:{seed}:deal").shuffle(cards)
    deal = taki.deal_game(seed, 3, TakiConfig())
    assert deal.hands == (tuple(cards[0:8]), tuple(cards[8:16]), tuple(cards[16:24]))
    assert deal.draw_pile == tuple(cards[24:])
    assert taki.deal_game(seed, 3) == deal
    assert taki.deal_game(seed + 1, 3) != deal


@pytest.mark.parametrize("players", range(2, 11))
def test_new_games_deal_8_cards_and_conserve_the_deck(players: int) -> None:
    state = taki.new_game(players, seed=players)
    assert all(len(h) == 8 for h in state.hands)
    assert len(state.discard_pile) == 1 and taki.card_color(state.discard_pile[0]) is not None
    everything = [c for h in state.hands for c in h] + list(state.draw_pile) + list(state.discard_pile)
    assert Counter(everything) == Counter(taki.deck())
    assert taki.pending_seats(state) == (0,) and state.direction == 1 and state.turn == 0


def test_an_explicit_deal_without_a_seed_uses_seed_0() -> None:
    deal = taki.deal_game(99, 4)
    assert taki.new_game(4, deal=deal).seed == 0
    assert taki.new_game(4, deal=deal, seed=5).seed == 5
    assert taki.new_game(4, deal=deal, seed=99) == taki.new_game(4, seed=99)


def _valid_deal(players: int = 3, size: int = 8) -> TakiDeal:
    return taki.deal_game(1, players, TakiConfig(hand_size=size))


def test_deals_that_are_not_the_deck_are_refused() -> None:
    deal = _valid_deal()
    first = deal.hands[0][0]
    other = next(c for c in taki.deck() if c != first)
    swapped = TakiDeal(hands=((other,) + deal.hands[0][1:],) + deal.hands[1:], draw_pile=deal.draw_pile)
    too_many, missing = re.escape(taki.card_token(other)), re.escape(taki.card_token(first))
    with pytest.raises(RulesError, match=rf"not the 116-card Taki deck: too many \['{too_many}'\], missing \['{missing}'\]"):
        taki.new_game(3, deal=swapped)
    short = TakiDeal(hands=deal.hands, draw_pile=deal.draw_pile[1:])
    with pytest.raises(RulesError, match=r"too many \[\], missing \['"):
        taki.new_game(3, deal=short)
    r5 = taki.card_from_token("R5")
    with pytest.raises(RulesError, match=r"too many \['R5'\], missing \[\]"):
        taki.new_game(3, deal=TakiDeal(hands=deal.hands, draw_pile=deal.draw_pile + (r5,)))


def test_deal_shapes_are_checked() -> None:
    deal = _valid_deal()
    with pytest.raises(RulesError, match="a 4-player deal needs 4 hands"):
        taki.new_game(4, deal=deal)
    with pytest.raises(RulesError, match="the hand of seat 0 holds 8 cards, the deal gives 7"):
        taki.new_game(3, TakiConfig(hand_size=7), deal=deal)
    with pytest.raises(RulesError, match="hand of seat 1: 999 is not a Taki card"):
        taki.new_game(3, deal=TakiDeal(hands=(deal.hands[0], deal.hands[1][:-1] + (999,), deal.hands[2]), draw_pile=deal.draw_pile))
    with pytest.raises(RulesError, match="deal must be a TakiDeal"):
        taki.new_game(3, deal={"hands": deal.hands})  # type: ignore[arg-type]
    with pytest.raises(RulesError, match="draw_pile must be a sequence of cards"):
        taki.new_game(3, deal=TakiDeal(hands=deal.hands, draw_pile="R5"))  # type: ignore[arg-type]


def test_lists_are_accepted_in_explicit_deals() -> None:
    deal = _valid_deal()
    listed = TakiDeal(hands=[list(h) for h in deal.hands], draw_pile=list(deal.draw_pile))  # type: ignore[arg-type]
    assert taki.new_game(3, deal=listed, seed=1) == taki.new_game(3, seed=1)


@pytest.mark.parametrize("players", [1, 11, 0, "4", 4.0, True])
def test_player_counts_outside_2_to_10_are_refused(players: object) -> None:
    with pytest.raises(RulesError, match=r"Taki is played by 2\.\.10 players"):
        taki.new_game(players, seed=1)  # type: ignore[arg-type]


def test_neither_seed_nor_deal_is_refused_and_seeds_must_be_ints() -> None:
    with pytest.raises(RulesError, match="needs a seed or an explicit deal"):
        taki.new_game(4)
    for seed in ("1", 1.5, True):
        with pytest.raises(RulesError, match="seed must be a whole number"):
            taki.new_game(4, seed=seed)  # type: ignore[arg-type]
    with pytest.raises(RulesError, match="config must be a TakiConfig"):
        taki.new_game(4, {"stairs": True}, seed=1)  # type: ignore[arg-type]


def test_huge_seeds_work_and_replay() -> None:
    seed = 2**256 - 1
    assert taki.new_game(5, seed=seed) == taki.new_game(5, seed=seed)


# ---------------------------------------------------------------- the first leading card (reading 1)


class _ScriptedRng:
    """Stands in for ``random.Random``: answers ``randint`` from a script and records the calls."""

    def __init__(self, answers: list[int]) -> None:
        self.answers = answers
        self.calls: list[tuple[int, int]] = []

    def randint(self, a: int, b: int) -> int:
        self.calls.append((a, b))
        return self.answers.pop(0)


def _deal_with_top(top: list[str]) -> TakiDeal:
    hands = tuple(tuple(taki.card_from_token(t) for t in h) for h in (["R3"], ["G3"]))
    first = tuple(taki.card_from_token(t) for t in top)
    rest = Counter(taki.deck()) - Counter(c for h in hands for c in h) - Counter(first)
    return TakiDeal(hands=hands, draw_pile=first + tuple(sorted(rest.elements())))


def test_a_colourless_first_card_goes_back_at_a_uniform_place_top_included(monkeypatch: pytest.MonkeyPatch) -> None:
    """The put-back place is randint(0, m) among the m cards left: m + 1 places, 0 = on top (turned again)."""
    rng = _ScriptedRng([0, 5])
    monkeypatch.setattr(rules.random, "Random", lambda seed: rng if seed == "taki:0:start" else random.Random(seed))
    deal = _deal_with_top(["KING", "R5", "Y5", "G5"])
    state = taki.new_game(2, TakiConfig(hand_size=1), deal=deal)
    m = 116 - 2 - 1
    assert rng.calls == [(0, m), (0, m)]  # first at place 0: the King is turned again, then at place 5
    assert taki.card_token(state.discard_pile[-1]) == "R5"
    pile = [taki.card_token(c) for c in state.draw_pile]
    assert pile[:5] == ["Y5", "G5", "R1", "R1", "KING"]  # the King went back under the first 5 cards left
    assert [e.kind for e in state.unseen[0]] == ["return", "return", "lead"]


def test_start_generator_is_the_documented_one() -> None:
    seed = 424242
    deal = _deal_with_top(["KING", "R5"])
    state = taki.new_game(2, TakiConfig(hand_size=1), deal=deal, seed=seed)
    place = random.Random(f"taki:{seed}:start").randint(0, 116 - 2 - 1)
    assert place != 0, "this seed turns the King again; the test wants one put-back"
    pile = [taki.card_token(c) for c in state.draw_pile]
    rest = [taki.card_token(c) for c in deal.draw_pile[1:]]
    expected = rest[:place] + ["KING"] + rest[place:]
    assert pile == expected[1:]  # the top card (R5) was turned


def test_the_reshuffle_generator_is_the_documented_one() -> None:
    """Reshuffle k of a game uses random.Random("taki:<seed>:reshuffle:<k>") on the discard pile minus its top
    card, bottom first (reading 15)."""
    seed = 31337
    below = [taki.card_from_token(t) for t in ("R3", "Y4", "G5", "B6", "R7", "Y8")]
    state = taki.new_game(2, TakiConfig(hand_size=1), seed=seed)
    position = state.__class__(**{
        **state.__dict__,
        "hands": ((taki.card_from_token("R1"),), tuple(sorted(
            (Counter(taki.deck()) - Counter(below) - Counter([taki.card_from_token("R1"), taki.card_from_token("R9")])).elements()
        ))),
        "draw_pile": (),
        "discard_pile": tuple(below) + (taki.card_from_token("R9"),),
        "follow_color": 0,
        "follow_symbol": 9,
    })
    after = taki.apply(position, 0, taki.Draw())
    shuffled = list(below)
    effects.reshuffle_rng(seed, 0).shuffle(shuffled)
    expected = list(below)
    random.Random(f"taki:{seed}:reshuffle:0").shuffle(expected)
    assert shuffled == expected
    assert after.hands[0] == tuple(sorted((taki.card_from_token("R1"), expected[0])))
    assert list(after.draw_pile) == expected[1:]
    assert after.discard_pile == (taki.card_from_token("R9"),) and after.reshuffles == 1
