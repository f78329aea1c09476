"""The spy audit's checkers (issue 8 item 7; STYLE.md habits 3 and 14): pure functions over what spy bots logged
(``tests/bots/spy_any_bot.py``), the match records, the engine's true hidden state and the replies of the Arena's
read methods. Nothing here is specific to one game: what the audit knows of a game's hidden information is its
``GameAuditor``, found by game id in ``tests/games/<game>/spy_auditor.py`` (``auditor_of``). Each returns a list of problems, one sentence each (empty = clean), so a test asserts ``== []`` and a
negative test feeds a doctored input and asserts the problem is named.

What a bot may know of a match is its seat's view; the checks compare every logged message with the true state
re-simulated by the engine (``arena_sdk.games.get_game(game)``, the record's seed or deals and its decisions):

* ``audit_match``: every Decide is exactly ``observe(state, seat)`` of the state it was asked in, and still is when
  everything the seat cannot see is re-dealt (other hands, undealt cards, draw pile, hidden choices, seed): the
  information-set check; plus each game's direct checks (``GameAuditor.view_problems``: another seat's card, an
  undealt or draw-pile card, another seat's choice before the reveal) and whole-match checks
  (``GameAuditor.match_problems``, e.g. Taki's +3 Breaker questions), unknown fields, StartMatch / EndMatch
  contents, and (``Forbidden``) no seed, secret or token anywhere in a message or its call metadata.
* ``deal_repeat_problems``: no bot receives cards of a deal it was dealt before in the same tournament.
* ``reply_problems``: no Arena read reply shows the tournament secret before the tournament ended, a deal seed or a
  match record while that deal is still being played, or any token.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from arena.match.record import MatchRecord
from arena_sdk import wire
from arena_sdk.games import GAMES, Game, get_game
from arena_sdk.pb import bot_pb2

REQUEST_TYPES: dict[str, type[Message]] = {
    "GetInfo": bot_pb2.GetInfoRequest, "StartMatch": bot_pb2.StartMatchRequest,
    "Decide": bot_pb2.DecideRequest, "EndMatch": bot_pb2.EndMatchRequest,
}
MIN_SECRET_TEXT = 8  # shorter texts (card tokens, small numbers) are never compared as secrets
SEED_BASE = 2**47  # every audited seed is a 15-digit number: no card, count or time can equal it by chance
AUDITOR_MODULE = "games.{game}.spy_auditor"  # tests/games/<game>/spy_auditor.py, defining AUDITOR


# --- the spy's log ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One call a spy received: ``bot`` (the spy's name), ``method``, call ``metadata``, the request's ``raw``
    bytes as they came off the wire, its ``time`` and the decoded ``message``."""

    bot: str
    method: str
    metadata: tuple[tuple[str, str], ...]
    raw: bytes
    time: float
    message: Any

    @property
    def match_id(self) -> str:
        return str(getattr(self.message, "match_id", ""))

    def doctored(self, message: Message) -> Call:
        """This call with another request (for negative tests): its bytes are the new message's."""
        return dataclasses.replace(self, message=message, raw=message.SerializeToString())


def read_log(path: Path, bot: str) -> list[Call]:
    """Every call of a spy log (see ``tests/bots/spy_any_bot.py``), in the order they were received."""
    calls = []
    if not path.exists():
        return calls
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        raw = base64.b64decode(entry["bytes"])
        method = entry["method"]
        calls.append(Call(bot, method, tuple((str(k), str(v)) for k, v in entry["metadata"]), raw,
                          float(entry["time"]), REQUEST_TYPES[method].FromString(raw)))
    return calls


def by_match(calls: Iterable[Call]) -> dict[str, list[Call]]:
    out: dict[str, list[Call]] = {}
    for call in calls:
        if call.method != "GetInfo":
            out.setdefault(call.match_id, []).append(call)
    return out


# --- secrets: values no message may hold ----------------------------------------------------------------------


@dataclass
class Forbidden:
    """Values no message may contain, each with a label and the time from which it may be shown (None: never).

    ``add_int`` forbids a number (a seed, a deal seed, the 256-bit tournament secret): as the value of any integer
    field (found as a varint in the message's bytes, so nested and unknown fields too), or of any float field (with
    ``walk``), its 64-bit halves too when it is longer (and its bytes), and its decimal and hex texts inside any
    string; ``add_text`` a text (a token), anywhere in the bytes. ``scan`` checks one message."""

    ints: dict[int, tuple[str, float | None]] = field(default_factory=dict)
    hex_texts: dict[str, tuple[str, float | None]] = field(default_factory=dict)
    texts: dict[str, tuple[str, float | None]] = field(default_factory=dict)
    blobs: dict[bytes, tuple[str, float | None]] = field(default_factory=dict)

    def add_int(self, value: int, label: str, until: float | None = None) -> None:
        self.ints[value] = (label, until)
        if value >= 2**64:  # e.g. a 256-bit secret: its bytes, and each 8 of them as a number or as bytes
            data = value.to_bytes(max(32, (value.bit_length() + 7) // 8), "big")
            self.blobs[data] = (label, until)
            for i in range(0, len(data), 8):
                part = int.from_bytes(data[i:i + 8], "big")
                self.ints[part] = (f"64 bits of {label}", until)
                for order in ("big", "little"):
                    self.blobs[part.to_bytes(8, order)] = (f"64 bits of {label}", until)
        for text in (str(value), format(value, "x"), format(value, "064x") if value >= 2**64 else ""):
            if len(text) >= MIN_SECRET_TEXT:
                self.hex_texts[text] = (label, until)

    def add_text(self, text: str, label: str, until: float | None = None) -> None:
        if text:
            self.texts[text.lower()] = (label, until)

    def _hit(self, entry: tuple[str, float | None] | None, at: float | None) -> str | None:
        if entry is None:
            return None
        label, until = entry
        return label if until is None or at is None or at < until else None

    def check_text(self, text: str | bytes, at: float | None = None) -> list[str]:
        """Labels of the forbidden texts inside ``text`` (case-insensitive). Numbers are only looked for in runs of
        at least ``MIN_SECRET_TEXT`` hex digits, which card tokens, names and ids do not have."""
        low = text.lower().encode("utf-8", "replace") if isinstance(text, str) else text.lower()
        found = []
        for run in _HEX_RUN.findall(low):
            found += [label for secret, entry in self.hex_texts.items()
                      if secret.encode() in run and (label := self._hit(entry, at)) is not None]
        found += [label for secret, entry in self.texts.items()
                  if secret.encode() in low and (label := self._hit(entry, at)) is not None]
        return found

    def scan(self, message: Message, at: float | None = None, where: str = "", walk: bool = False) -> list[str]:
        """Problems: forbidden values in ``message`` (sent at ``at``) that may not be shown at ``at``: in its
        serialized bytes (every varint of 4 bytes or more, hex runs, texts, blobs), and with ``walk`` in every float
        field too. The field holding a forbidden value is named when a walk finds it."""
        raw = message.SerializeToString()
        where = where or type(message).__name__
        labels = []
        for m in _VARINT.finditer(raw):
            label = self._hit(self.ints.get(_varint(m.group())), at)
            if label is not None:
                labels.append(label)
        labels += self.check_text(raw, at)
        labels += [label for blob, entry in self.blobs.items()
                   if blob in raw and (label := self._hit(entry, at)) is not None]
        problems = []
        if labels or walk:
            for path, value in walk_fields(message, where):
                if isinstance(value, bool):
                    continue
                if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
                    label = self._hit(self.ints.get(int(value)), at)
                    if label is not None:
                        problems.append(f"{path} = {value} is {label}")
                elif isinstance(value, str):
                    problems += [f"{path} contains {label}" for label in self.check_text(value, at)]
        if labels and not problems:
            problems = [f"{where} holds {label}" for label in labels]
        return problems


_HEX_RUN = re.compile(rb"[0-9a-f]{%d,}" % MIN_SECRET_TEXT)
_VARINT = re.compile(rb"[\x80-\xff]{3,9}[\x00-\x7f]")  # varints of 4..10 bytes: values >= 2**21


def _varint(data: bytes) -> int:
    value = 0
    for shift, byte in enumerate(data):
        value |= (byte & 0x7F) << (7 * shift)
    return value


def walk_fields(message: Message, path: str) -> Iterable[tuple[str, Any]]:
    """(field path, scalar value) of every set field of ``message``, nested messages included."""
    for fd, value in message.ListFields():
        name = f"{path}.{fd.name}"
        values = value if _is_repeated(fd) else [value]
        for i, item in enumerate(values):
            where = f"{name}[{i}]" if _is_repeated(fd) else name
            if fd.type == FieldDescriptor.TYPE_MESSAGE:
                yield from walk_fields(item, where)
            else:
                yield where, item


def _is_repeated(fd: FieldDescriptor) -> bool:
    return bool(fd.is_repeated)


def unknown_field_problems(message: Message, what: str) -> list[str]:
    """A message carrying fields its schema does not know (something smuggled past the protocol)."""
    bare = type(message)()
    bare.CopyFrom(message)
    bare.DiscardUnknownFields()
    if bare.ByteSize() != message.ByteSize():
        return [f"{what} carries {message.ByteSize() - bare.ByteSize()} bytes of fields unknown to the protocol"]
    return []


def metadata_problems(call: Call, own_secret: str, *forbidden: Forbidden) -> list[str]:
    """Call metadata: the bot's own secret (when it has one) and nothing forbidden (another bot's secret, a token,
    a seed)."""
    problems = []
    keys = {k for k, _ in call.metadata}
    if own_secret and call.method != "GetInfo" and ("arena-bot-secret", own_secret) not in call.metadata:
        problems.append(f"{call.method} to {call.bot} does not carry its own bot secret")
    for key, value in call.metadata:
        if key == "arena-bot-secret" and value == own_secret:
            continue
        problems += [f"{call.method} to {call.bot}: metadata {key!r} contains {label}"
                     for f in forbidden for label in f.check_text(value)]
    unexpected = keys - {"user-agent", "arena-bot-secret", "grpc-accept-encoding", "grpc-timeout"}
    if unexpected:
        problems.append(f"{call.method} to {call.bot} carries unexpected call metadata {sorted(unexpected)}")
    return problems


# --- the engine's truth ---------------------------------------------------------------------------------------


def replay_states(record: MatchRecord) -> list[Any]:
    """The engine state before each of the record's decisions, then the final state (the record re-simulated)."""
    engine = get_game(record.game)
    config = wire.config_from_dict(record.game, record.config)
    deals = tuple(wire.deal_from_dict(record.game, d) for d in record.deals)
    state = engine.new_game(len(record.seats), config, seed=record.seed, deals=deals)
    states = []
    for d in record.decisions:
        states.append(state)
        state = engine.apply(state, d["seat"], wire.action_from_dict(record.game, d["kind"], d["action"]))
    states.append(state)
    return states


@dataclass
class Counts:
    """What an audit looked at: matches, messages (StartMatch + Decide + EndMatch), decisions, and what a game's
    own checks looked at (``extra``: a count per phrase, e.g. Taki's ``"declined Breaker questions"``)."""

    matches: int = 0
    messages: int = 0
    decisions: int = 0
    extra: Counter[str] = field(default_factory=Counter)

    def add(self, other: Counts) -> None:
        self.matches += other.matches
        self.messages += other.messages
        self.decisions += other.decisions
        self.extra.update(other.extra)

    def __str__(self) -> str:
        text = f"{self.messages} messages ({self.decisions} decisions) of {self.matches} matches"
        return text + "".join(f", {n} {what}" for what, n in self.extra.items())


@dataclass
class Plan:
    """One seeded match the audit plays in process: its id, game, seat count, config, seed and explicit deals."""

    match_id: str
    game: str
    seats: int
    config: Any
    seed: int
    deals: tuple[Any, ...] = ()


@dataclass(frozen=True)
class TournamentPlan:
    """The round robin of spies the audit plays of a game through the queue: ``bots`` spies, ``seats`` per match,
    ``rounds`` per 200 audited matches (at least one), ``config``."""

    bots: int
    seats: int
    rounds: int
    config: Any


@dataclass
class Run:
    """Matches a spy fleet played, and what the spies logged."""

    game: str
    records: list[MatchRecord]
    calls: dict[str, list[Call]]
    secrets_of: dict[str, str]
    forbidden: Forbidden
    seconds: float
    other_calls: list[Call] = field(default_factory=list)


class GameAuditor:
    """What the audit knows of one game's hidden information and how to exercise it: one subclass per registered
    game, its instance ``AUDITOR`` in ``tests/games/<game>/spy_auditor.py`` (found by ``auditor_of``)."""

    game = ""
    tournament: TournamentPlan

    def plans(self, count: int) -> list[Plan]:
        """``count`` seeded in-process matches (seeds above ``SEED_BASE``) that exercise every decision kind and
        the situations the game's checks look at."""
        raise NotImplementedError

    def perturb(self, state: Any, seat: int, rng: random.Random) -> Any:
        """``state`` with everything ``seat`` cannot see re-dealt at random (same sizes)."""
        raise NotImplementedError

    def view_problems(self, state: Any, seat: int, kind: str, view: Any, record: MatchRecord,
                      states: Sequence[Any], index: int) -> list[str]:
        """Direct checks of one Decide view (``view``: the game's view message) asked in ``state``."""
        raise NotImplementedError

    def deals(self, record: MatchRecord, final: Any) -> list[Any]:
        """The deals the match dealt (hashable), for the never-twice check."""
        raise NotImplementedError

    def log_deal_problems(self, record: MatchRecord, final: Any, seat: int, calls: Sequence[Call]) -> list[str]:
        """The hands a seat's log shows at the start of each deal are the engine's deal (ties logs to deals)."""
        return []

    def match_problems(self, record: MatchRecord, states: Sequence[Any], views: Mapping[tuple[int, int], Any],
                       counts: Counts) -> list[str]:
        """Checks of a whole match; ``views``: (seat, sequence) -> the complete view its bot had."""
        return []

    def run_problems(self, counts: Counts) -> list[str]:
        """What an in-process run of ``plans`` should have exercised and did not (from its ``counts``)."""
        return []

    def leaky_observe(self, state: Any, seat: int) -> Any:
        """An ``observe`` that leaks hidden information inside an ordinary field (for the test that the
        information-set check catches what no direct check names)."""
        raise NotImplementedError

    def can_leak(self, record: MatchRecord, call: Call, state: Any, decision: dict) -> bool:
        """Whether ``leaky_observe`` leaks something in the situation of this Decide."""
        return True

    def checker_cases(self) -> Mapping[str, Callable[[Run], None]]:
        """The game's own tests of its checks: name -> a function that doctors a run's logs (``audit_doctored``)
        and asserts that the problem is named."""
        return {}


def auditor_of(game: str) -> GameAuditor | None:
    """The ``GameAuditor`` of ``game`` (``AUDITOR`` of ``tests/games/<game>/spy_auditor.py``), or None."""
    name = AUDITOR_MODULE.format(game=game)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            return None
        raise
    auditor = getattr(module, "AUDITOR", None)
    return auditor if isinstance(auditor, GameAuditor) and auditor.game == game else None


# --- helpers the game auditors share ----------------------------------------------------------------------


def redeal(pool: list[Any], rng: random.Random) -> list[Any]:
    """The hidden cards in another order (a random rotation, reversed half of the time): cheaper than a shuffle,
    and it moves cards between the hidden places (hands, undealt cards, draw pile) and changes the pile's order."""
    if len(pool) > 1:
        k = rng.randrange(1, len(pool))
        pool = pool[k:] + pool[:k]
        if rng.random() < 0.5:
            pool.reverse()
    return pool


def diff(view: Any, expected: Any) -> str:
    """The fields in which two views (dataclasses of one type) differ, for a problem sentence."""
    if type(view) is not type(expected):
        return f"a {type(view).__name__}, not a {type(expected).__name__}"
    names = [f.name for f in dataclasses.fields(view) if getattr(view, f.name) != getattr(expected, f.name)]
    return f"fields {names} differ" if names else "the views differ"


# --- one match ---------------------------------------------------------------------------------------------------


def audit_match(record: MatchRecord, calls: Sequence[Call], forbidden: Forbidden, rng: random.Random,  # noqa: C901 - one check per promise of a view
                secrets_of: Mapping[str, str] | None = None, counts: Counts | None = None,
                observe: Callable[[Any, int], Any] | None = None) -> list[str]:
    """Every problem of one match's logged calls (all calls the spies received for ``record.match_id``).

    ``forbidden``: values no message may hold; ``secrets_of``: each spy's own bot secret (its calls must carry
    it, and no other); ``observe``: the engine's ``observe`` (a test may pass a leaky one to see the
    information-set check fail). Adds what it looked at to ``counts``."""
    engine: Game = get_game(record.game)
    observe = observe or engine.observe
    auditor = AUDITORS[record.game]
    secrets_of = secrets_of or {}
    counts = counts if counts is not None else Counts()
    problems: list[str] = []
    mid = record.match_id
    states = replay_states(record)
    n = len(record.seats)
    names = [s.name for s in record.seats]
    asked = {(d["seat"], d["seq"]): i for i, d in enumerate(record.decisions) if d["seq"] is not None}
    requests: dict[tuple[int, int], Call] = {}
    decoded: dict[tuple[int, int], Any] = {}  # (seat, sequence) -> the complete view the seat's bot had
    decode = getattr(engine, "view_from_message", None)
    kept: dict[int, Any] = {}
    others_of: dict[str, Forbidden] = {}
    counts.matches += 1
    for call in calls:
        msg = call.message
        counts.messages += 1
        where = f"match {mid}: {call.method} to {call.bot}"
        problems += [f"{where}: {p}" for p in forbidden.scan(msg, where=call.method, walk=call.method != "Decide")]
        problems += unknown_field_problems(msg, where)
        own = secrets_of.get(call.bot, "")
        if call.bot not in others_of:
            others_of[call.bot] = Forbidden()
            for bot, secret in secrets_of.items():
                if bot != call.bot:
                    others_of[call.bot].add_text(secret, f"the bot secret of {bot}")
        others = others_of[call.bot]
        problems += [f"{where}: {p}" for p in others.scan(msg, where=call.method)]
        problems += [f"match {mid}: {p}" for p in metadata_problems(call, own, forbidden, others)]
        seat = getattr(msg, "seat", None)
        if seat is not None and record.seat_seeds:  # another seat's seat seed never reaches this seat
            other_seeds = Forbidden()
            for k, value in enumerate(record.seat_seeds):
                if k != seat:
                    other_seeds.add_int(value, f"the seat seed of seat {k}")
            problems += [f"{where}: {p}" for p in other_seeds.scan(msg, where=call.method)]
        if call.method == "StartMatch":
            want = record.seat_seeds[msg.seat] if record.seat_seeds and msg.seat < n else None
            if (msg.seat_seed if msg.HasField("seat_seed") else None) != want:
                problems.append(f"{where}: StartMatch's seat seed is not its own seat's seed of the record")
            config = wire.config_to_proto(record.game, wire.config_from_dict(record.game, record.config))
            if (msg.game, msg.num_players, list(msg.player_names), msg.config) != (record.game, n, names, config):
                problems.append(f"{where}: StartMatch says more or other than the match's game, seats and config")
        elif call.method == "EndMatch":
            r = record.result
            if (list(msg.result.scores), list(msg.result.ranks), list(msg.result.faults)) != (
                    list(r.scores), list(r.ranks), list(r.faults)):
                problems.append(f"{where}: EndMatch's result is not the match's result")
        elif call.method == "Decide":
            key = (msg.seat, msg.sequence)
            if key in requests and requests[key].raw != call.raw:
                problems.append(f"{where}: request {key} asked again with other content")
            requests[key] = call
    for key, call in sorted(requests.items()):
        index = asked.get(key)
        where = f"match {mid}: Decide #{key[1]} to seat {key[0]} ({call.bot})"
        if index is None:
            problems.append(f"{where} matches no decision of the record")
            continue
        counts.decisions += 1
        d = record.decisions[index]
        state = states[index]
        seat = d["seat"]
        msg = call.message
        if msg.WhichOneof("view") != record.game or wire.kind_name(msg.kind) != d["kind"]:
            problems.append(f"{where}: kind or game differs from the record's decision {index}")
            continue
        view_msg = getattr(msg, record.game)
        problems += [f"match {mid}: {p}" for p in
                     auditor.view_problems(state, seat, d["kind"], view_msg, record, states, index)]
        try:  # a message may leave out the history the seat's bot keeps (keeps_history): completed as the SDK does
            if decode is not None:
                view, kept[seat] = decode(view_msg, d["kind"], kept.get(seat))
            else:
                view = engine.view_from_proto(view_msg, d["kind"])
        except Exception as exc:
            problems.append(f"{where}: the view does not decode: {exc}")
            continue
        decoded[key] = view
        seen = observe(state, seat)
        if view != seen:
            problems.append(f"{where} is not observe(state, seat) of its state: {diff(view, seen)}")
        else:
            try:
                changed = observe(auditor.perturb(state, seat, rng), seat)
            except Exception as exc:  # observe read something of the hidden part that is gone now
                problems.append(f"{where}: observe fails when what seat {seat} cannot see is re-dealt: {exc!r}")
            else:
                if changed != seen:
                    problems.append(f"{where}: the view changes when what seat {seat} cannot see is re-dealt (it "
                                    f"depends on hidden information): {diff(seen, changed)}")
    problems += auditor.match_problems(record, states, decoded, counts)
    return problems


# --- tournaments: deals never seen twice ----------------------------------------------------------------------------


def deal_repeat_problems(records: Sequence[MatchRecord], bot_of: Callable[[MatchRecord, int], str],
                         calls: Mapping[str, Sequence[Call]] | None = None) -> list[str]:
    """No bot receives cards of a deal (any hand of it, at any seat) that it received before in the same tournament.
    ``bot_of(record, seat)``: the bot (spy) at a seat; ``calls``: each match's logged calls, to check that the hands
    the spy was shown are the engine's deal."""
    problems = []
    seen: dict[tuple[str, Any], tuple[str, int]] = {}
    for record in records:
        auditor = AUDITORS[record.game]
        final = replay_states(record)[-1]
        for seat in range(len(record.seats)):
            bot = bot_of(record, seat)
            if calls is not None:
                problems += auditor.log_deal_problems(record, final, seat, calls.get(record.match_id, ()))
            for deal in auditor.deals(record, final):
                before = seen.get((bot, deal))
                if before is not None and before[0] != record.match_id:
                    problems.append(f"bot {bot} received cards of one deal twice: match {before[0]} (seat "
                                    f"{before[1]}) and match {record.match_id} (seat {seat})")
                seen.setdefault((bot, deal), (record.match_id, seat))
    return problems


# --- Arena read methods ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """One read call: ``method`` and a description of its ``request``, ``at`` (when it was made, s since the epoch)
    and the reply message, or the error's details text."""

    method: str
    request: str
    at: float
    message: Message | None = None
    error: str = ""


def reply_problems(replies: Iterable[Reply], forbidden: Forbidden,
                   live_record: Callable[[str, float], str | None]) -> list[str]:
    """Problems of read replies: a forbidden value shown when it may not be (``Forbidden`` with ``until`` times:
    the tournament secret until it ended, a deal seed until the deal's last table finished, tokens never), and a
    match record whose deal was still being played when it was asked for (``live_record(match_id, at)``: why the
    record of ``match_id`` may not be shown at ``at``, or None)."""
    problems = []
    for r in replies:
        what = f"{r.method}({r.request})"
        if r.message is None:
            problems += [f"{what} error text contains {label}" for label in forbidden.check_text(r.error, r.at)]
            continue
        problems += [f"{what}: {p}" for p in forbidden.scan(r.message, r.at, r.method, walk=True)]
        problems += unknown_field_problems(r.message, what)
        record_json = getattr(r.message, "record_json", "")
        if record_json:
            data = json.loads(record_json)
            why = live_record(str(data.get("match_id", "")), r.at)
            if why:
                problems.append(f"{what} shows the record of match {data.get('match_id')} ({why})")
    return problems


def registered_games_without_auditor() -> list[str]:
    """Games of the registry the audit does not know how to check (a new game needs a ``GameAuditor``)."""
    return sorted(set(GAMES) - set(AUDITORS))


# --- negative tests: doctored logs ---------------------------------------------------------------------------------


def first_call(run: Run, predicate: Callable[[MatchRecord, Call, Any, dict], bool]) -> tuple[MatchRecord, Call, Any]:
    """The first logged Decide (with its record and the engine state it was asked in) satisfying ``predicate``."""
    for record in run.records:
        states = replay_states(record)
        index = {(d["seat"], d["seq"]): i for i, d in enumerate(record.decisions) if d["seq"] is not None}
        for call in run.calls[record.match_id]:
            if call.method == "Decide":
                i = index[(call.message.seat, call.message.sequence)]
                if predicate(record, call, states[i], record.decisions[i]):
                    return record, call, states[i]
    raise AssertionError("no such request in the run")


def audit_doctored(run: Run, record: MatchRecord, original: Call, doctored: Call, **kwargs: Any) -> list[str]:
    """Every problem of ``record``'s match when the call ``original`` of its log is replaced by ``doctored``."""
    calls = [doctored if c is original else c for c in run.calls[record.match_id]]
    return audit_match(record, calls, run.forbidden, random.Random(1), run.secrets_of, Counts(), **kwargs)


# Last, once every name above exists: the auditor modules import them from here.
AUDITORS: dict[str, GameAuditor] = {g: a for g in GAMES if (a := auditor_of(g)) is not None}
