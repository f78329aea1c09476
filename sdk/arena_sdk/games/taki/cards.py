"""Taki cards: a compact int per card, its canonical text token, colour, symbol and the 116-card deck.

Implements taki.md "Deck". A card is a small int (fast to compare, sort and hash); its text form, the *token*,
is what JSON, scenario files and error messages show:

* colours: ``R`` red (0), ``Y`` yellow (1), ``G`` green (2), ``B`` blue (3);
* number cards: colour letter + number, ``R1 R3 R4 ... R9`` (there is no plain 2);
* coloured action cards: colour letter + ``STOP``, ``+2``, ``CHDIR`` (Change Direction), ``PLUS``, ``TAKI``,
  e.g. ``GSTOP``, ``Y+2``, ``BCHDIR``, ``RPLUS``, ``YTAKI``;
* colourless cards: ``SUPERTAKI``, ``KING``, ``+3``, ``BREAKER`` (+3 Breaker), ``CHCOLOR`` (Change Color).

Int layout (an implementation detail, stable within a release): a coloured card is ``colour * 16 + symbol`` with
symbols 1..14 (numbers are their own symbol 1, 3..9; STOP 10, +2 11, CHDIR 12, PLUS 13, TAKI 14); the colourless
cards are 64..68 (symbols 15..19). Ascending ints sort a hand by colour (R, Y, G, B), then symbol, colourless last.
"""

from __future__ import annotations

from typing import TypeGuard

from ..base import RulesError

RED, YELLOW, GREEN, BLUE = 0, 1, 2, 3
COLORS: tuple[int, ...] = (RED, YELLOW, GREEN, BLUE)
COLOR_TOKENS: tuple[str, ...] = ("R", "Y", "G", "B")
COLOR_NAMES: tuple[str, ...] = ("red", "yellow", "green", "blue")

# Symbols (ints). Number cards use the number itself.
NUMBERS: tuple[int, ...] = (1, 3, 4, 5, 6, 7, 8, 9)
STOP, PLUS2, CHDIR, PLUS, TAKI = 10, 11, 12, 13, 14
SUPERTAKI_SYMBOL, KING_SYMBOL, PLUS3_SYMBOL, BREAKER_SYMBOL, CHCOLOR_SYMBOL = 15, 16, 17, 18, 19
COLORED_SYMBOLS: tuple[int, ...] = NUMBERS + (STOP, PLUS2, CHDIR, PLUS, TAKI)

# The colourless cards (ints).
SUPERTAKI, KING, PLUS3, BREAKER, CHCOLOR = 64, 65, 66, 67, 68
COLORLESS: tuple[int, ...] = (SUPERTAKI, KING, PLUS3, BREAKER, CHCOLOR)

SYMBOL_TOKENS: dict[int, str] = {n: str(n) for n in NUMBERS}
SYMBOL_TOKENS.update(
    {
        STOP: "STOP",
        PLUS2: "+2",
        CHDIR: "CHDIR",
        PLUS: "PLUS",
        TAKI: "TAKI",
        SUPERTAKI_SYMBOL: "SUPERTAKI",
        KING_SYMBOL: "KING",
        PLUS3_SYMBOL: "+3",
        BREAKER_SYMBOL: "BREAKER",
        CHCOLOR_SYMBOL: "CHCOLOR",
    }
)

DECK_SIZE = 116
_TABLE_SIZE = CHCOLOR + 1

# Per-card tables (index = card int). Colour is -1 for colourless cards and for ints that are no card.
CARD_COLOR: list[int] = [-1] * _TABLE_SIZE
CARD_SYMBOL: list[int] = [0] * _TABLE_SIZE
_TOKENS: list[str | None] = [None] * _TABLE_SIZE
for _c in COLORS:
    for _s in COLORED_SYMBOLS:
        _card = _c * 16 + _s
        CARD_COLOR[_card] = _c
        CARD_SYMBOL[_card] = _s
        _TOKENS[_card] = COLOR_TOKENS[_c] + SYMBOL_TOKENS[_s]
for _card in COLORLESS:
    CARD_SYMBOL[_card] = _card - SUPERTAKI + SUPERTAKI_SYMBOL
    _TOKENS[_card] = SYMBOL_TOKENS[CARD_SYMBOL[_card]]

ALL_CARDS: tuple[int, ...] = tuple(c for c in range(_TABLE_SIZE) if _TOKENS[c] is not None)
"""The 57 distinct cards, ascending (52 coloured, then the 5 colourless)."""

_BY_TOKEN: dict[str, int] = {t: c for c, t in enumerate(_TOKENS) if t is not None}

# Copies of each card in the deck: two of every coloured card and colourless card, four Change Colors.
COPIES: dict[int, int] = {c: 2 for c in ALL_CARDS}
COPIES[CHCOLOR] = 4


def is_card(card: object) -> TypeGuard[int]:
    """True when ``card`` is the int of a Taki card (bools are not cards)."""
    return type(card) is int and 0 <= card < _TABLE_SIZE and _TOKENS[card] is not None


def _check(card: object) -> int:
    if not is_card(card):
        raise RulesError(f"no Taki card {card!r}: cards are the ints of card_from_token, e.g. {_BY_TOKEN['R5']} = R5")
    return card


def card_from_token(token: str) -> int:
    """The card of a token (``"R5"``, ``"Y+2"``, ``"KING"``; case-insensitive). Raises ``RulesError`` naming the
    token when it is no card (e.g. ``"R2"``: taki.md "Deck", there is no plain 2)."""
    card = _BY_TOKEN.get(token.upper()) if isinstance(token, str) else None
    if card is None:
        hint = " (there is no plain 2 in Taki)" if isinstance(token, str) and token.upper()[1:] == "2" else ""
        raise RulesError(f"no Taki card token {token!r}{hint}; tokens look like R5, Y+2, GSTOP, BTAKI, KING, +3")
    return card


def card_token(card: int) -> str:
    """The canonical token of ``card`` (e.g. ``"R5"``, ``"CHCOLOR"``). Raises ``RulesError`` for a non-card."""
    return _TOKENS[_check(card)] or ""


def card_color(card: int) -> int | None:
    """Colour of ``card`` (``RED``..``BLUE``, 0..3), or None for a colourless card. Raises ``RulesError``."""
    color = CARD_COLOR[_check(card)]
    return None if color < 0 else color


def card_symbol(card: int) -> int:
    """Symbol of ``card``: its number (1, 3..9) or one of ``STOP``, ``PLUS2``, ``CHDIR``, ``PLUS``, ``TAKI``,
    ``SUPERTAKI_SYMBOL``, ``KING_SYMBOL``, ``PLUS3_SYMBOL``, ``BREAKER_SYMBOL``, ``CHCOLOR_SYMBOL``; see
    ``SYMBOL_TOKENS`` for their text. Raises ``RulesError`` for a non-card."""
    return CARD_SYMBOL[_check(card)]


def color_from_token(token: str) -> int:
    """``"R"``/``"Y"``/``"G"``/``"B"`` (or ``"red"``... , case-insensitive) -> 0..3. Raises ``RulesError``."""
    if isinstance(token, str):
        up = token.upper()
        if up in COLOR_TOKENS:
            return COLOR_TOKENS.index(up)
        if token.lower() in COLOR_NAMES:
            return COLOR_NAMES.index(token.lower())
    raise RulesError(f"no Taki colour {token!r}; colours are R, Y, G, B (red, yellow, green, blue)")


def color_token(color: int) -> str:
    """``0..3`` -> ``"R"``/``"Y"``/``"G"``/``"B"``. Raises ``RulesError`` for anything else."""
    if type(color) is int and 0 <= color < 4:
        return COLOR_TOKENS[color]
    raise RulesError(f"no Taki colour {color!r}; colours are 0..3 (R, Y, G, B)")


def deck() -> tuple[int, ...]:
    """The 116 cards of taki.md "Deck", ascending: per colour two each of 1, 3..9 (no plain 2), Stop, +2, Change
    Direction, Plus and TAKI (104 coloured), then SuperTaki, King, +3, +3 Breaker twice each and Change Color four
    times (12 colourless)."""
    return _DECK


_DECK: tuple[int, ...] = tuple(c for c in ALL_CARDS for _ in range(COPIES[c]))


def tokens(cards: tuple[int, ...] | list[int]) -> list[str]:
    """Tokens of several cards, in the given order (for messages and JSON)."""
    return [card_token(c) for c in cards]
