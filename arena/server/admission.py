"""Fair admission of the Arena service's bot checks (calls to bots' GetInfo): who may run one now, the reuse of
recent outcomes, and the time a failed registration takes.

- **Caller classes.** Every check belongs to one class, each with capacity of its own (``CAPACITY``, numbers in
  ``arena.core.limits``): ``ORGANISER`` (calls with the admin token: a tournament's readiness probe, an
  organiser's registration), ``OWNER`` (calls that prove the owner key of the bot NAME they act on), ``STRANGER``
  (every other registration, e.g. the first one of a new NAME) and ``LISTING`` (``ListBots(check_endpoints)``, a
  public read). A class whose slots are all taken refuses more (``AdmissionRefused``: RESOURCE_EXHAUSTED) and
  never takes another class's, so a flood by strangers leaves organiser and owner calls working. Owners and
  strangers are also limited per client (``client_of``: the caller's IP address; an IPv6 /64 counts as one), so
  one machine cannot take its whole class.
- **Bounded cost.** A call takes one slot however many bots it checks; its GetInfo calls run at once, each within
  the check's bound (``verify_timeout_s``), so a call holds its slot at most about one bound.
- **Reuse.** The outcome of every GetInfo call is kept per endpoint for ``limits.CHECK_CACHE_S`` seconds (at most
  ``limits.CHECK_CACHE_ENDPOINTS`` endpoints, least recently used dropped). Strangers reuse failures only, so a
  flood at one silent socket costs one dial per few seconds; ``ListBots(check_endpoints)`` reuses both (a status
  that may be that old); organiser and owner calls always dial, so nothing they store (a version, a name) and no
  tournament readiness comes from an old answer, and an owner who just started the bot is not refused by a
  failure cached before.
- **No port scanner.** A failed registration check (RegisterBot, UpdateBot) answers no sooner than the check's
  bound after it started, whatever the reason (closed port, silent listener, another service, another bot), while
  it keeps its slot; the messages are ``arena.server.checks``'s, which never name another bot.
"""

from __future__ import annotations

import enum
import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from arena.core import limits
from arena.match.bot_checks import stream_refusal
from arena.match.channels import BotDialer
from arena.server.checks import EndpointError, NoAnswer, Outcome, dial_infos, registration_info, secret_refusal
from arena_sdk.pb import bot_pb2


class Caller(enum.Enum):
    """The class of a call that checks bots (see the module docstring)."""

    ORGANISER = "organiser"
    OWNER = "owner"
    STRANGER = "stranger"
    LISTING = "listing"


@dataclass(frozen=True)
class Capacity:
    """Checks of one class that may run at once: ``at_once`` in all, ``per_client`` per client (None: no limit
    per client)."""

    at_once: int
    per_client: int | None = None


CAPACITY: dict[Caller, Capacity] = {
    Caller.ORGANISER: Capacity(limits.ORGANISER_CHECKS),
    Caller.OWNER: Capacity(limits.OWNER_CHECKS, limits.OWNER_CHECKS_PER_CLIENT),
    Caller.STRANGER: Capacity(limits.STRANGER_CHECKS, limits.STRANGER_CHECKS_PER_CLIENT),
    Caller.LISTING: Capacity(limits.LIST_CHECKS),
}

_WHO = {Caller.ORGANISER: "organiser calls", Caller.OWNER: "owners (calls with a bot's owner token)",
        Caller.STRANGER: "callers without an owner or admin token", Caller.LISTING: "bot lists"}


class AdmissionRefused(RuntimeError):
    """A check refused because its class (or its client's share of it) is full; the message says which and what
    to do."""


def caller_of(key: str | None, stored: str | None, is_admin: Callable[[], bool]) -> Caller:
    """The class of a call about one bot NAME: ``OWNER`` when ``key`` (the owner key the call proves,
    ``ArenaServicer.owner_key``) is NAME's stored owner key ``stored`` (constant-time comparison); else
    ``ORGANISER`` when ``is_admin()`` (asked only then); else ``STRANGER``."""
    if key and stored and hmac.compare_digest(key.encode(), stored.encode()):
        return Caller.OWNER
    return Caller.ORGANISER if is_admin() else Caller.STRANGER


class Admission:
    """Slots for bot checks, by ``Caller`` class and client (``CAPACITY``); thread-safe, never blocks."""

    def __init__(self, capacity: dict[Caller, Capacity] | None = None) -> None:
        self.capacity = dict(CAPACITY if capacity is None else capacity)
        self._lock = threading.Lock()
        self._running = {caller: 0 for caller in Caller}
        self._per_client: dict[tuple[Caller, str], int] = {}  # only clients with a check running

    def enter(self, caller: Caller, client: str) -> str | None:
        """Take a slot of ``caller``'s class for ``client``: None when taken (give it back with ``leave``), else
        why not (one sentence, for RESOURCE_EXHAUSTED)."""
        cap = self.capacity[caller]
        with self._lock:
            if self._running[caller] >= cap.at_once:
                return (f"{cap.at_once} bot checks (GetInfo calls to bots) of {_WHO[caller]} are running already, "
                        f"the arena's limit; try again in a few seconds")
            mine = self._per_client.get((caller, client), 0)
            if cap.per_client is not None and mine >= cap.per_client:
                return (f"{mine} bot check{'s' if mine > 1 else ''} (GetInfo calls to bots) of your address "
                        f"{client} {'are' if mine > 1 else 'is'} running already, the most for {_WHO[caller]}; "
                        f"wait for {'them' if mine > 1 else 'it'} to answer and try again")
            self._running[caller] += 1
            self._per_client[(caller, client)] = mine + 1
            return None

    def leave(self, caller: Caller, client: str) -> None:
        """Give back a slot taken by ``enter``."""
        with self._lock:
            self._running[caller] -= 1
            left = self._per_client[(caller, client)] - 1
            if left:
                self._per_client[(caller, client)] = left
            else:
                del self._per_client[(caller, client)]

    @contextmanager
    def slot(self, caller: Caller, client: str) -> Iterator[None]:
        """A context holding a slot; raises ``AdmissionRefused`` (before the block runs) when there is none."""
        refusal = self.enter(caller, client)
        if refusal is not None:
            raise AdmissionRefused(refusal)
        try:
            yield
        finally:
            self.leave(caller, client)

    def running(self, caller: Caller) -> int:
        """Checks of ``caller``'s class running now."""
        with self._lock:
            return self._running[caller]


class OutcomeCache:
    """Recent GetInfo outcomes per endpoint: each kept ``ttl_s`` seconds, at most ``size`` endpoints (the least
    recently stored dropped first); thread-safe. ``clock`` gives seconds (monotonic)."""

    def __init__(self, ttl_s: float = limits.CHECK_CACHE_S, size: int = limits.CHECK_CACHE_ENDPOINTS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.size = size
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[float, Outcome]] = OrderedDict()

    def get(self, endpoint: str) -> Outcome | None:
        """The outcome stored for ``endpoint`` less than ``ttl_s`` seconds ago, else None."""
        with self._lock:
            entry = self._entries.get(endpoint)
            if entry is None:
                return None
            if self._clock() - entry[0] >= self.ttl_s:
                del self._entries[endpoint]
                return None
            return entry[1]

    def put(self, endpoint: str, outcome: Outcome) -> None:
        with self._lock:
            self._entries[endpoint] = (self._clock(), outcome)
            self._entries.move_to_end(endpoint)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


class BotChecks:
    """The Arena service's calls to bots' GetInfo, admitted by class (``Admission``), their outcomes kept
    (``OutcomeCache``), failed registrations padded to the bound.

    Args:
        timeout_s: the check's bound: each GetInfo call's deadline, and the least time a failed registration
            check takes, seconds.
        dialer: how bots are dialed (``tls://`` endpoints over TLS).
        sleep, clock: for the padding (seconds; ``clock`` monotonic).
    """

    def __init__(self, timeout_s: float, dialer: BotDialer, *, admission: Admission | None = None,
                 cache: OutcomeCache | None = None, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout_s = timeout_s
        self.dialer = dialer
        self.admission = admission or Admission()
        self.cache = cache or OutcomeCache()
        self._sleep = sleep
        self._clock = clock

    def _dial(self, endpoints: Sequence[str], secrets: Mapping[str, str] | None = None) -> dict[str, Outcome]:
        outcomes = dial_infos(endpoints, self.timeout_s, self.dialer, secrets)
        for endpoint, outcome in outcomes.items():
            self.cache.put(endpoint, outcome)
        return outcomes

    def registration(self, endpoint: str, game: str, name: str, caller: Caller, client: str,
                     secret_of: Callable[[str], tuple[str, bool]] | None = None) -> bot_pb2.BotInfo:
        """The checked ``BotInfo`` of the bot at ``endpoint`` for registering (or moving) bot NAME ``name`` of
        ``game`` there (``checks.registration_info``), accepting as its bot secret ``secret_of(version)``: the
        secret the version it reports will have, and whether it is the one kept for it rather than one given (None:
        no secret; ``checks.secret_refusal``), and, when it says ``serves_match_stream``, implementing the match
        stream (``bot_checks.stream_refusal``, with that secret), in a slot of ``caller``'s class for ``client``.
        A ``STRANGER`` reuses a cached failure (no dial); every success comes from a fresh dial.

        Raises ``AdmissionRefused`` at once when there is no slot; ``EndpointError`` when the check fails, no
        sooner than ``timeout_s`` after the call started."""
        started = self._clock()
        with self.admission.slot(caller, client):
            try:
                cached = self.cache.get(endpoint) if caller is Caller.STRANGER else None
                outcome = cached if isinstance(cached, NoAnswer) else self._dial([endpoint])[endpoint]
                info = registration_info(endpoint, game, name, outcome, self.timeout_s)
                secret, kept = secret_of(info.version) if secret_of is not None else ("", False)
                refusal = secret_refusal(endpoint, secret, self.timeout_s, self.dialer, kept=kept)
                if refusal is None and info.serves_match_stream:
                    refusal = stream_refusal(endpoint, secret, self.timeout_s, self.dialer)
                if refusal is not None:
                    raise EndpointError(refusal)
                return info
            except EndpointError:
                left = started + self.timeout_s - self._clock()
                if left > 0:
                    self._sleep(left)
                raise

    def ready(self, endpoints: Sequence[str], caller: Caller = Caller.ORGANISER,
              client: str = "", secrets: Mapping[str, str] | None = None) -> dict[str, Outcome]:
        """Fresh outcomes of every endpoint of ``endpoints`` (a new tournament's bots), dialed at once in one slot
        of ``caller``'s class (about one ``timeout_s`` in all), each with the bot secret ``secrets`` gives it.
        Raises ``AdmissionRefused`` when there is no slot."""
        with self.admission.slot(caller, client):
            return self._dial(endpoints, secrets)

    def probe(self, endpoints: Sequence[str]) -> dict[str, Outcome]:
        """Outcomes for ``ListBots(check_endpoints)``: when the ``LISTING`` slot is free, fresh ones for at most
        ``limits.LIST_CHECK_DIALS`` endpoints, dialed at once (about one ``timeout_s``; those without a cached
        outcome first), and cached ones for the rest; when another list holds the slot, cached ones only (which
        that list keeps fresh). Never blocks and never refuses: an endpoint left out is unchecked."""
        distinct = list(dict.fromkeys(endpoints))
        cached = {e: o for e in distinct if (o := self.cache.get(e)) is not None}
        outcomes: dict[str, Outcome] = dict(cached)
        wanted = sorted(distinct, key=lambda e: e in cached)[:limits.LIST_CHECK_DIALS]
        if wanted and self.admission.enter(Caller.LISTING, "") is None:
            try:
                outcomes.update(self._dial(wanted))
            finally:
                self.admission.leave(Caller.LISTING, "")
        return outcomes
