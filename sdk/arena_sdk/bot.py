"""The base class every bot shares, whatever its game, and the small records its hooks receive.

A bot is a class with a ``name``, a ``version``, the ``games`` it plays and one method per decision kind of each
game (declared by the game's bot base class: ``Take5Bot``, ``TakiBot``). The SDK's server (``arena_sdk.server``)
makes **one object per (match id, seat)**, so an author keeps per-match state in ``self``; each method receives
the seat's complete typed view (never protobuf).
"""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from . import rng as seeded

BOT_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class BotDefinitionError(ValueError):
    """A bot class that cannot be served (missing or invalid ``name``, wrong base class); says what to fix."""


class IllegalAnswerError(ValueError):
    """A bot method returned something that is not a legal answer of the decision; the message says what."""


@dataclass(frozen=True)
class MatchInfo:
    """What a bot learns when a match starts (``Bot.on_start``).

    Attributes:
        match_id: unique id of the match, e.g. ``"t7-000042"``.
        game: game id, e.g. ``"take5"`` or ``"taki"``.
        seat: the seat this bot object plays, 0-based.
        num_players: seats in the match (2..10).
        player_names: registered bot names in seat order; () when the object was created by a ``Decide`` for a
            match the bot never saw start (e.g. the bot process restarted mid-match).
        config: the match's rules options (the game's config dataclass, e.g. ``take5.Take5Config``).
        seat_seed: the seed of this seat's own randomness, 0 .. 2**63-1 (``StartMatchRequest.seat_seed``); None
            when the referee gave none (then ``Bot.match_rng`` and ``Bot.rng`` draw from the operating system's
            entropy). The bot sees only its own seat's seed.
    """

    match_id: str
    game: str
    seat: int
    num_players: int
    player_names: tuple[str, ...]
    config: Any
    seat_seed: int | None = None


@dataclass(frozen=True)
class MatchResult:
    """The final result of a match (``Bot.on_end``), in seat order.

    Attributes:
        match_id, seat: which match and which seat this object played.
        scores: every seat's score (Take 5: bullhead total; Taki: cards held; lower is better in both).
        ranks: standard competition rank of every seat, 1 = best, ties share (1, 2, 2, 4).
        faults: faults the referee recorded against each seat (timeouts, errors, illegal answers).
    """

    match_id: str
    seat: int
    scores: tuple[float, ...]
    ranks: tuple[int, ...]
    faults: tuple[int, ...]

    @property
    def score(self) -> float | None:
        """This seat's score, or None when the result holds no entry for the seat."""
        return self.scores[self.seat] if self.seat < len(self.scores) else None

    @property
    def rank(self) -> int | None:
        """This seat's rank (1 = best), or None when the result holds no entry for the seat."""
        return self.ranks[self.seat] if self.seat < len(self.ranks) else None


MAX_NOTE_CHARS = 280  # DecideResponse.note: the most characters of one answer's note


class Bot:
    """Base class of every bot; subclass a game's base class (``Take5Bot``, ``TakiBot``), not this one.

    Class attributes:
        name: registered bot name, 1..64 characters of ``[A-Za-z0-9_.-]`` (required).
        version: free-form version string, e.g. ``"1.2.0"``.
        author: optional author or team name.
        games: the game ids the bot plays (set by the game's base class).

    Randomness: draw it from ``self.rng``, a fresh ``random.Random`` for each decision, seeded from the seat seed
    and the decision's place in the game (``arena_sdk.rng``), or from ``self.match_rng``, one generator for the
    whole match seeded with the seat seed. Then two versions of a bot facing the same scenario draw the same
    numbers (paired A/B tests need far fewer matches) and ``arena play --seed`` replays a game exactly. Without a
    seat seed (``MatchInfo.seat_seed`` None) both draw from the operating system's entropy.

    Hooks: ``on_start(match)`` (a ``MatchInfo``) and ``on_end(result)`` (a ``MatchResult``); both do nothing by
    default. ``self.match`` holds the ``MatchInfo`` (set by the SDK before ``on_start``; None when the object is
    used in-process without a server).

    Command-line options: override the classmethod ``add_arguments(parser)`` to add options to
    ``python my_bot.py``; each parsed option (dest name) is passed to the constructor as a keyword argument, so
    ``--seed 7`` becomes ``MyBot(seed=7)``. The constructor must accept them (and work without arguments).

    A decision method that raises, or returns something that is not a legal answer of the view, makes the SDK
    answer the referee with gRPC status INTERNAL; the referee records a fault and plays its default action.
    """

    name: ClassVar[str] = ""
    version: ClassVar[str] = "0.0.0"
    author: ClassVar[str] = ""
    games: ClassVar[tuple[str, ...]] = ()

    match: MatchInfo | None = None
    seat_seed: int | None = None  # the seed the generators come from: the match's seat seed, else entropy
    _decisions: int = 0  # decisions asked of this object in its match so far (a decision's index in the sequence)
    _match_rng: random.Random | None = None
    _rng: random.Random | None = None
    _place: tuple[int | str, ...] | None = None  # the current decision's place, until its generator is made
    _own_rng: random.Random | None = None  # a generator the bot assigned to self.rng itself

    def begin_match(self, match: MatchInfo) -> None:
        """Set ``self.match``, the seat seed and a fresh ``match_rng`` for ``match`` (the SDK calls it before
        ``on_start``; an override must call it)."""
        self.match = match
        self.seat_seed = match.seat_seed if match.seat_seed is not None else self.fallback_seat_seed()
        self._match_rng = None  # made when first asked for (``match_rng``)
        self._rng = self._place = None
        self._decisions = 0

    def fallback_seat_seed(self) -> int:
        """The seat seed to use when the match gives none (0 .. 2**63-1). Default: the operating system's entropy;
        a bot with its own ``--seed`` may override it (``sample_bots.seeded``)."""
        return seeded.entropy_seed()

    def begin_decision(self, *place: int | str) -> None:
        """Give ``self.rng`` a fresh generator for the decision at ``place`` (called by the game's ``decide``
        before the decision method; ``arena_sdk.rng.generator``) and count the decision. No ``place``: the
        decision's index in this object's own sequence of decisions in the match (0, 1, 2, ...). The generator is
        made when the decision first reads ``self.rng`` (seeding costs about as much as the rest of a simple
        decision); its numbers do not depend on when."""
        if self.seat_seed is None:
            self.seat_seed = self.fallback_seat_seed()
        self._rng = None
        self._place = place or (self._decisions,)
        self._decisions += 1

    @property
    def match_rng(self) -> random.Random:
        """The match's generator, seeded with the seat seed (made from entropy when none was set)."""
        if self._match_rng is None:
            if self.seat_seed is None:
                self.seat_seed = self.fallback_seat_seed()
            self._match_rng = seeded.generator(self.seat_seed)
        return self._match_rng

    @property
    def rng(self) -> random.Random:
        """The current decision's generator (``begin_decision``); the match's generator outside a decision. A bot
        that assigns ``self.rng`` itself (its own generator) gets that one back from then on instead."""
        if self._own_rng is not None:
            return self._own_rng
        if self._rng is None:
            if self._place is None:
                return self.match_rng
            assert self.seat_seed is not None  # set by begin_decision
            self._rng = seeded.generator(self.seat_seed, *self._place)
        return self._rng

    @rng.setter
    def rng(self, generator: random.Random) -> None:
        self._own_rng = generator

    _note: str = ""

    def note(self, text: object) -> None:
        """Attach a note to the answer the decision method is about to give (``DecideResponse.note``): what the bot
        thought, for people reading the match afterwards in the match viewer. At most ``MAX_NOTE_CHARS`` (280)
        characters, longer is cut; the last call before the method returns wins; a note is sent with one answer
        only. The referee keeps a seat's notes of one match up to 8000 characters in all and shows them once the
        match's record is shown: to the bot's owner, to everyone or to nobody, as the organiser sets."""
        self._note = str(text)[:MAX_NOTE_CHARS]

    def take_note(self) -> str:
        """The note set for the current answer (``note``), and forget it: the SDK server sends it with the answer."""
        text, self._note = self._note, ""
        return text

    def on_start(self, match: MatchInfo) -> None:
        """Called once when the match starts (or when the object is created for an unknown match)."""

    def on_end(self, result: MatchResult) -> None:
        """Called once when the match is over; the object is dropped afterwards."""

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """Add bot-specific options to the ``serve()`` command line (default: none)."""

    @classmethod
    def check_definition(cls) -> None:
        """Raise ``BotDefinitionError`` when the class cannot be served (name missing or invalid, no game)."""
        if not isinstance(cls.name, str) or not BOT_NAME_RE.fullmatch(cls.name):
            raise BotDefinitionError(
                f"{cls.__name__}.name must be 1..64 characters of [A-Za-z0-9_.-], got {cls.name!r}"
            )
        if not isinstance(cls.version, str):
            raise BotDefinitionError(f"{cls.__name__}.version must be a string, got {cls.version!r}")
        if not cls.games or not all(isinstance(g, str) for g in cls.games):
            raise BotDefinitionError(f"{cls.__name__} plays no game: subclass a game's bot class, e.g. Take5Bot")
