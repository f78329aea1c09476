"""Game-independent shapes shared by every rules engine, the referee and the SDK.

A rules engine is a module of pure functions over frozen state (see ``docs/DESIGN.md``):
``new_game``, ``pending_seats``, ``legal_actions``, ``apply``, ``observe``, ``is_over``, ``outcome``.
Nothing here assumes one game's shape (simultaneous turns, penalty points, runs): ``Game`` is the plug-in
interface every game package implements, ``PackageGame`` the adapter that forwards it to the package's modules,
and ``rule`` / ``ConfigField`` the declaration of a game's rule options. The shapes (errors, ``GameInfo``,
``Outcome``, the rule options) are defined in ``shapes.py`` and re-exported here.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any, ClassVar

from .shapes import (
    ConfigField,
    GameInfo,
    IllegalActionError,
    Outcome,
    RulesError,
    WireError,
    check_config,
    competition_ranks,
    config_fields,
    rule,
)

__all__ = [  # the shapes of shapes.py, re-exported, and the plug-in interface
    "RulesError", "IllegalActionError", "WireError", "GameInfo", "Outcome", "competition_ranks", "ConfigField",
    "rule", "config_fields", "check_config", "Game", "PackageGame",
]


# --- the plug-in interface -------------------------------------------------------------------------------------


class Game(ABC):
    """A game plug-in: everything the generic layers (referee, scheduler, store, service, SDK server, CLI) need to
    know of one game, behind one object. Each game package builds one instance and registers it
    (``arena_sdk.games.register``); generic code asks the registry (``arena_sdk.games.get_game``) and never imports
    a game by name (STYLE.md habit 13).

    Conventions shared by every game:

    * Wire: the ``arena.v1`` oneofs ``GameConfig.game``, ``DecideRequest.view`` and ``DecideResponse.action`` each
      have one field per game, named by the game id (``take5``, ``taki``).
    * Deals: a match is created from a ``seed`` (an int, any size) and/or explicit ``deals`` (a sequence of the
      game's deal objects; a game with one deal per match takes at most one). Their JSON forms are recorded.
    * Engine: pure functions over frozen state (DESIGN.md); ``apply`` raises ``IllegalActionError``.

    * Config: a frozen dataclass whose rule options are declared with ``rule`` (``config_fields``).

    Subclasses set ``info``, ``config_type``, ``bot_class`` and ``decision_methods`` (decision kind -> name of the
    bot class's method that answers it) and implement the abstract methods; ``PackageGame`` implements most of them
    by forwarding to the game package's modules.
    """

    info: GameInfo
    config_type: type
    bot_class: type
    decision_methods: Mapping[str, str]

    @property
    def game_id(self) -> str:
        """The game id, e.g. ``"take5"``: the registry key, the CLI name and the name of the wire oneof fields."""
        return self.info.game

    @property
    def config_fields(self) -> tuple[ConfigField, ...]:
        """The rule options of ``config_type`` (declared with ``rule``): the CLI's rule options come from them."""
        return config_fields(self.config_type)

    # --- engine ------------------------------------------------------------------------------------------

    @abstractmethod
    def new_game(self, num_players: int, config: Any = None, *, seed: int | None = None,
                 deals: Sequence[Any] = ()) -> Any:
        """A new game state. Raises ``RulesError`` for a seat count, config, seed or deals that cannot carry a
        whole game (refused here, never halfway through a match)."""

    @abstractmethod
    def pending_seats(self, state: Any) -> tuple[int, ...]:
        """Seats with a decision pending now, ascending (several only in a simultaneous game)."""

    @abstractmethod
    def decision_kind(self, state: Any, seat: int) -> str | None:
        """The ``DecisionKind`` name pending for ``seat``, or None."""

    @abstractmethod
    def legal_actions(self, state: Any, seat: int) -> tuple[Any, ...]:
        """Every legal action of ``seat`` now (never empty for a pending seat)."""

    @abstractmethod
    def apply(self, state: Any, seat: int, action: Any) -> Any:
        """The state after ``seat`` takes ``action``. Raises ``IllegalActionError``."""

    @abstractmethod
    def observe(self, state: Any, seat: int) -> Any:
        """What ``seat`` may see now (the game's typed view), and nothing else."""

    @abstractmethod
    def default_action(self, state: Any, seat: int) -> Any:
        """The documented legal action the referee applies after a fault."""

    @abstractmethod
    def is_over(self, state: Any) -> bool:
        """True once the game has ended."""

    @abstractmethod
    def outcome(self, state: Any) -> Outcome:
        """Scores and ranks of a finished game. Raises ``RulesError`` before the end."""

    def position(self, state: Any) -> tuple[int, int]:
        """(hand, turn) of ``state`` for records and fault reports; games without hands report hand 0."""
        return int(getattr(state, "hand_number", 0)), int(getattr(state, "turn", 0))

    # --- codecs: JSON (records, Redis) -------------------------------------------------------------------

    @abstractmethod
    def config_from_dict(self, data: Mapping[str, Any] | None) -> Any:
        """Config from its JSON form (missing keys take the defaults). Raises ``WireError`` naming the field."""

    @abstractmethod
    def config_to_dict(self, config: Any) -> dict[str, Any]:
        """JSON form of a config (every field)."""

    @abstractmethod
    def deal_from_dict(self, data: Mapping[str, Any]) -> Any:
        """Deal from its JSON form. Raises ``WireError``."""

    @abstractmethod
    def deal_to_dict(self, deal: Any) -> dict[str, Any]:
        """JSON form of a deal."""

    @abstractmethod
    def action_from_dict(self, kind: str, data: Any) -> Any:
        """Action of decision ``kind`` from its JSON form. Raises ``WireError``."""

    @abstractmethod
    def action_to_dict(self, action: Any) -> dict[str, Any]:
        """JSON form of an action."""

    # --- codecs: protobuf (arena.v1) ---------------------------------------------------------------------

    @abstractmethod
    def config_to_proto(self, config: Any) -> Any:
        """The game's config message (the field of ``GameConfig`` named by the game id)."""

    @abstractmethod
    def config_from_proto(self, msg: Any) -> Any:
        """Config from the game's config message (None: all defaults). Raises ``WireError``."""

    @abstractmethod
    def view_to_proto(self, view: Any) -> Any:
        """The game's view message (the field of ``DecideRequest.view`` named by the game id)."""

    @abstractmethod
    def view_from_proto(self, msg: Any, kind: str | None) -> Any:
        """Typed view from the game's view message, ``kind`` pending. Raises ``WireError`` when inconsistent."""

    def view_message(self, state: Any, seat: int, sent: Any) -> tuple[Any, Any]:
        """Referee side: the view message of ``seat`` now for a bot that keeps the public history
        (``StartMatchResponse.keeps_history``), leaving out what ``sent`` says the bot was sent before, and what
        it has been sent once it has this message too: ``(message, sent_after)``.

        ``sent``: the ``sent_after`` of the last message of this match that the bot answered, or None (nothing
        sent: the message is complete). The message carries ``observe(state, seat)`` in full but for the history
        it may leave out; building it takes time proportional to what changed. The default sends the complete
        view every time (``view_to_proto(observe(state, seat))``), as a game whose view carries no growing
        history needs."""
        return self.view_to_proto(self.observe(state, seat)), None

    def view_message_into(self, dest: Any, state: Any, seat: int, sent: Any) -> Any:
        """``view_message``, written into ``dest`` (the game's view message inside the request the referee sends,
        overwritten), returning ``sent_after``. The default copies ``view_message``'s message; a game may write
        ``dest`` directly to save that copy."""
        msg, after = self.view_message(state, seat, sent)
        dest.CopyFrom(msg)
        return after

    def view_from_message(self, msg: Any, kind: str | None, kept: Any) -> tuple[Any, Any]:
        """Bot side (the SDK server, per (match, seat)): the typed view of a message made by ``view_message``,
        completed with what was ``kept`` from the earlier messages of the same (match, seat) (None at the first),
        and what to keep from it: ``(view, kept_after)``. The view equals the referee's ``observe(state, seat)``
        whenever what was left out is kept (a bot restarted mid-match gets the message's part: the game documents
        how its view says so). Decodes only what the message carries. Raises ``WireError`` as
        ``view_from_proto``. The default decodes the message alone."""
        return self.view_from_proto(msg, kind), None

    @abstractmethod
    def action_to_proto(self, action: Any) -> Any:
        """The game's action message (the field of ``DecideResponse.action`` named by the game id)."""

    @abstractmethod
    def action_from_proto(self, kind: str, msg: Any) -> Any:
        """Action of decision ``kind`` from the game's action message. Raises ``WireError`` (legality is the
        engine's job)."""

    # --- the bot side ------------------------------------------------------------------------------------

    @abstractmethod
    def decide(self, bot: Any, view: Any) -> Any:
        """Ask ``bot`` (an instance of ``bot_class``) the decision ``view.kind`` and return its checked action.
        Raises ``IllegalAnswerError`` (``arena_sdk.bot``) when the answer is not legal in ``view``, and whatever
        the bot's method raises."""

    @abstractmethod
    def view_legal_actions(self, view: Any) -> tuple[Any, ...]:
        """Every legal action of the decision pending in ``view`` (``view.kind``), computed from the view alone:
        what a bot may answer. () when no decision is pending."""

    @abstractmethod
    def answer_of(self, action: Any) -> Any:
        """What the bot method of ``action``'s decision returns to take it (e.g. a Take 5 card as an int): the
        inverse of ``decide``'s reading of an answer. Generic bots (tests, tools) use it with
        ``view_legal_actions``."""

    def check_view(self, view: Any, kind: str) -> str:
        """Why ``view`` cannot carry a decision of ``kind`` ("" when it can); the SDK server refuses such
        requests with INVALID_ARGUMENT."""
        return "" if kind in self.info.decision_kinds else f"{kind} is not a {self.info.title} decision"


class PackageGame(Game):
    """The ``Game`` of a game package laid out by convention: every engine method forwards to the function of the
    same name in the package's ``rules`` module, every codec to its ``wire`` module, ``decide`` to its ``bot``
    module, and ``info`` is ``rules.INFO``. A plug-in sets ``config_type``, ``bot_class`` and
    ``decision_methods``, and defines only what differs: ``view_legal_actions``, ``answer_of`` (no default), and
    any method whose engine function has another shape.

        class MyGame(PackageGame):          # in mygame/plugin.py, beside mygame/rules.py, wire.py, bot.py
            config_type = MyConfig
            bot_class = MyBot
            decision_methods = {"MYGAME_MOVE": "move"}

            def view_legal_actions(self, view): ...
            def answer_of(self, action): ...

    The modules are found when the subclass is defined, as the siblings ``rules``, ``wire`` and ``bot`` of the
    module that defines it; a subclass may set ``rules_module``, ``wire_module`` or ``bot_module`` itself.
    ``new_game`` calls ``rules.new_game(num_players, config, seed=seed, deals=deals)``.
    """

    rules_module: ClassVar[ModuleType | None] = None
    wire_module: ClassVar[ModuleType | None] = None
    bot_module: ClassVar[ModuleType | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        package = cls.__module__.rpartition(".")[0]
        for name in ("rules", "wire", "bot"):
            attr = f"{name}_module"
            if getattr(cls, attr) is None and package:
                full = f"{package}.{name}"
                if full in sys.modules or importlib.util.find_spec(full) is not None:
                    setattr(cls, attr, importlib.import_module(full))
        if getattr(cls, "info", None) is None and cls.rules_module is not None:
            info = getattr(cls.rules_module, "INFO", None)
            if isinstance(info, GameInfo):
                cls.info = info

    def _module(self, attr: str, method: str) -> ModuleType:
        module: ModuleType | None = getattr(self, attr)
        if module is None:
            raise NotImplementedError(f"{type(self).__name__} has no {attr.removesuffix('_module')} module: set "
                                      f"{attr} or override {method}()")
        return module

    def _rules(self, method: str) -> Any:
        return getattr(self._module("rules_module", method), method)

    def _wire(self, method: str) -> Any:
        return getattr(self._module("wire_module", method), method)

    # --- engine: the rules module ------------------------------------------------------------------------

    def new_game(self, num_players: int, config: Any = None, *, seed: int | None = None,
                 deals: Sequence[Any] = ()) -> Any:
        return self._rules("new_game")(num_players, config, seed=seed, deals=tuple(deals))

    def pending_seats(self, state: Any) -> tuple[int, ...]:
        seats: tuple[int, ...] = self._rules("pending_seats")(state)
        return seats

    def decision_kind(self, state: Any, seat: int) -> str | None:
        kind: str | None = self._rules("decision_kind")(state, seat)
        return kind

    def legal_actions(self, state: Any, seat: int) -> tuple[Any, ...]:
        actions: tuple[Any, ...] = self._rules("legal_actions")(state, seat)
        return actions

    def apply(self, state: Any, seat: int, action: Any) -> Any:
        return self._rules("apply")(state, seat, action)

    def observe(self, state: Any, seat: int) -> Any:
        return self._rules("observe")(state, seat)

    def default_action(self, state: Any, seat: int) -> Any:
        return self._rules("default_action")(state, seat)

    def is_over(self, state: Any) -> bool:
        return bool(self._rules("is_over")(state))

    def outcome(self, state: Any) -> Outcome:
        result: Outcome = self._rules("outcome")(state)
        return result

    # --- codecs: the wire module -------------------------------------------------------------------------

    def config_from_dict(self, data: Mapping[str, Any] | None) -> Any:
        return self._wire("config_from_dict")(data)

    def config_to_dict(self, config: Any) -> dict[str, Any]:
        data: dict[str, Any] = self._wire("config_to_dict")(config)
        return data

    def deal_from_dict(self, data: Mapping[str, Any]) -> Any:
        return self._wire("deal_from_dict")(data)

    def deal_to_dict(self, deal: Any) -> dict[str, Any]:
        data: dict[str, Any] = self._wire("deal_to_dict")(deal)
        return data

    def action_from_dict(self, kind: str, data: Any) -> Any:
        return self._wire("action_from_dict")(kind, data)

    def action_to_dict(self, action: Any) -> dict[str, Any]:
        data: dict[str, Any] = self._wire("action_to_dict")(action)
        return data

    def config_to_proto(self, config: Any) -> Any:
        return self._wire("config_to_proto")(config)

    def config_from_proto(self, msg: Any) -> Any:
        return self._wire("config_from_proto")(msg)

    def view_to_proto(self, view: Any) -> Any:
        return self._wire("view_to_proto")(view)

    def view_from_proto(self, msg: Any, kind: str | None) -> Any:
        return self._wire("view_from_proto")(msg, kind)

    def action_to_proto(self, action: Any) -> Any:
        return self._wire("action_to_proto")(action)

    def action_from_proto(self, kind: str, msg: Any) -> Any:
        return self._wire("action_from_proto")(kind, msg)

    # --- the bot side: the bot module ----------------------------------------------------------------------

    def decide(self, bot: Any, view: Any) -> Any:
        return self._module("bot_module", "decide").decide(bot, view)
