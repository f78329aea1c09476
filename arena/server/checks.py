"""Checks of bot endpoints by the Arena service: GetInfo at registration, before a tournament and in `arena bot
list`, bounded in time and size, with one refusal sentence for every failure to answer (an answer over the size
limit has its own: only an arena bot sends one), and no name of another bot in any refusal, so that RegisterBot is
no port scanner. What a bot must answer is ``arena.match.bot_checks``'s, which ``arena play`` applies too. Who may
run a check when, the cache of recent outcomes and the padding of failed registrations are
``arena.server.admission``'s."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import grpc

from arena.core import limits
from arena.core.config import DEFAULTS
from arena.core.text import printable
from arena.match.bot_checks import GETINFO_OPTIONS, answer_over_limit, bot_info_refusal, over_limit_refusal
from arena.match.channels import PLAINTEXT_OR_SYSTEM_ROOTS, BotDialer, split_endpoint
from arena.store import BotEntry, Store
from arena.store.health import MISMATCH_PREFIX
from arena.worker.health import registration_mismatch
from arena_sdk.guard import secret_metadata
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

log = logging.getLogger("arena.server.servicer")

VERIFY_TIMEOUT_S = DEFAULTS.verify_timeout_s


class EndpointError(RuntimeError):
    """A bot endpoint cannot be registered: it does not answer GetInfo, does not play the game, reports another
    name or a bad version; the message says which, in one sentence."""


@dataclass(frozen=True)
class NoAnswer:
    """A GetInfo call that got no answer it could read: ``reason`` in a few words (``describe_rpc_failure``);
    ``over_limit`` when the answer was over ``limits.MAX_BOT_INFO_BYTES`` (``bot_checks.answer_over_limit``)."""

    reason: str
    over_limit: bool = False


Outcome = bot_pb2.BotInfo | NoAnswer  # what one GetInfo call to an endpoint gave


def describe_rpc_failure(exc: grpc.RpcError, timeout_s: float) -> str:
    """What a failed call to a bot means, in a few words: "connection refused" (nothing listens on that port),
    "host name not found (...)", "unreachable (...)" (another transport failure), "no answer within 3 s" (the
    deadline passed: a hung or overloaded bot, or a port that is not a gRPC server), or "error status CODE:
    details" (the bot answered with an error)."""
    code = exc.code() if callable(getattr(exc, "code", None)) else None
    details = (exc.details() if callable(getattr(exc, "details", None)) else "") or ""
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return f"no answer within {timeout_s:g} s"
    if code == grpc.StatusCode.UNAVAILABLE:
        lowered = details.lower()
        if "connection refused" in lowered:
            return "connection refused"
        if "resolv" in lowered or "domain name not found" in lowered or "dns" in lowered:
            return f"host name not found ({details})"
        return f"unreachable ({details})"
    name = code.name if code is not None else "UNKNOWN"
    return f"error status {name}: {details}" if details else f"error status {name}"


def no_bot_message(endpoint: str, timeout_s: float) -> str:
    """The one message of a registration check that got no GetInfo answer, whatever the reason (nothing listens, a
    host that does not resolve, another service, a silent socket, an error status): the referee is not a port
    scanner. (An answer over ``limits.MAX_BOT_INFO_BYTES`` has a message of its own, ``over_limit_refusal``: only
    a server of ``arena.v1.Bot/GetInfo`` sends one, and its author needs to know what to change.)"""
    tls = (" and, over TLS, that its certificate names that host and is signed by a CA the arena trusts "
           "(`arena serve --bot-ca FILE`, else the system's roots)") if split_endpoint(endpoint)[1] else ""
    return (f"no arena bot answered GetInfo at {endpoint} within {timeout_s * 1000:.0f} ms; check that the bot "
            f"runs there (e.g. `python my_bot.py --port N` prints where it listens), that the referee can "
            f"reach that address{tls}")


def dial_infos(endpoints: Sequence[str], timeout_s: float = VERIFY_TIMEOUT_S,
               dialer: BotDialer = PLAINTEXT_OR_SYSTEM_ROOTS,
               secrets: Mapping[str, str] | None = None) -> dict[str, Outcome]:
    """Call GetInfo at every distinct endpoint of ``endpoints`` (dialed by ``dialer``), all at once, waiting at
    most ``timeout_s`` seconds in all, with the bot secret ``secrets`` gives an endpoint (a bot answers GetInfo to
    anyone, but the Python SDK counts calls without its secret in a share strangers can fill); answers over
    ``limits.MAX_BOT_INFO_BYTES`` are not read (a ``NoAnswer`` marked ``over_limit``).

    Returns endpoint -> its ``BotInfo`` or ``NoAnswer``, for each distinct endpoint."""
    distinct = list(dict.fromkeys(endpoints))
    channels = [dialer.channel(endpoint, options=GETINFO_OPTIONS) for endpoint in distinct]
    out: dict[str, Outcome] = {}
    try:
        calls = [bot_pb2_grpc.BotStub(ch).GetInfo.future(bot_pb2.GetInfoRequest(), timeout=timeout_s,
                                                         metadata=secret_metadata((secrets or {}).get(e, "")))
                 for e, ch in zip(distinct, channels)]
        for endpoint, call in zip(distinct, calls):
            try:
                out[endpoint] = call.result()
            except grpc.RpcError as exc:
                out[endpoint] = NoAnswer(describe_rpc_failure(exc, timeout_s), answer_over_limit(exc))
    finally:
        for ch in channels:
            ch.close()
    return out


def registration_info(endpoint: str, game: str, name: str, outcome: Outcome,
                      timeout_s: float = VERIFY_TIMEOUT_S) -> bot_pb2.BotInfo:
    """The ``BotInfo`` that the GetInfo ``outcome`` of ``endpoint`` gave, when it lets a bot NAME ``name`` of
    ``game`` be registered there. Raises ``EndpointError``: with ``no_bot_message`` when there was no answer (the
    same sentence for every failure), except an answer over ``limits.MAX_BOT_INFO_BYTES``
    (``bot_checks.over_limit_refusal``, naming the limits); with ``bot_checks.bot_info_refusal`` (the check
    ``arena play`` makes too) when a field is over its size limit of ``arena.core.limits`` (a 2.5 MB author is
    refused here, never stored), when the bot does not play ``game`` or reports a malformed version; when it reports
    another name than ``name`` (never saying which: that is another bot's)."""
    if isinstance(outcome, NoAnswer):
        if outcome.over_limit:  # an arena bot's answer (only a server of arena.v1.Bot/GetInfo sends one)
            raise EndpointError(over_limit_refusal(endpoint, outcome.reason))
        if split_endpoint(endpoint)[1]:  # for the operator (the caller gets the one message): a certificate?
            log.info("registration check of %s failed: %s", endpoint, outcome.reason)
        raise EndpointError(no_bot_message(endpoint, timeout_s))
    refusal = bot_info_refusal(endpoint, outcome, game)
    if refusal:
        raise EndpointError(refusal)
    if outcome.name != name:
        raise EndpointError(f"the bot at {endpoint} reports another name than {name!r} in GetInfo; make it report "
                            f"{name} (a Python SDK bot: start it with --name={name}), or register it under the name "
                            f"it reports")
    shown = printable(outcome.author), printable(outcome.sdk_version)
    if shown != (outcome.author, outcome.sdk_version):
        cleaned = bot_pb2.BotInfo()
        cleaned.CopyFrom(outcome)
        cleaned.author, cleaned.sdk_version = shown
        return cleaned
    return outcome


def secret_refusal(endpoint: str, secret: str, timeout_s: float = VERIFY_TIMEOUT_S,
                   dialer: BotDialer = PLAINTEXT_OR_SYSTEM_ROOTS, *, kept: bool = False) -> str | None:
    """Whether the bot at ``endpoint`` accepts ``secret`` ("" for none; ``kept``: the one stored for the bot, none
    given with the call) as its bot secret, asked with one ``EndMatch`` without a match id (bot.proto: a bot with a
    secret refuses it without the secret, UNAUTHENTICATED, or with another, PERMISSION_DENIED; any other status of
    its own is an acceptance). Returns None, or the refusal sentence of a registration: also when the bot gave no
    answer within ``timeout_s`` (DEADLINE_EXCEEDED, UNAVAILABLE), since a bot that keeps the check waiting could
    otherwise be registered by anyone. The secret proves that whoever registers the bot controls it (GetInfo, open
    to everyone, proves nothing), and a bot registered without its secret would fault in every call of its first
    match."""
    channel = dialer.channel(endpoint, options=[("grpc.max_receive_message_length", limits.MAX_BOT_INFO_BYTES)])
    try:
        bot_pb2_grpc.BotStub(channel).EndMatch(bot_pb2.EndMatchRequest(), timeout=timeout_s,
                                               metadata=secret_metadata(secret))
    except grpc.RpcError as exc:
        code = exc.code() if hasattr(exc, "code") else None
        if code in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
            return (f"the bot at {endpoint} answered GetInfo but not the bot secret check (EndMatch without a match "
                    f"id) within {timeout_s * 1000:.0f} ms ({code.name}): a bot must answer it at once, whether "
                    f"it has a secret or not (bot.proto, \"Bot secret\")")
        if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
            if not secret:
                return (f"the bot at {endpoint} answers match calls only with its bot secret ({code.name}): give "
                        f"the secret it was started with (--bot-secret, or RegisterBotRequest.bot_secret)")
            which = "the bot secret kept for it (none was given)" if kept else "the bot secret given"
            return (f"the bot at {endpoint} refuses {which} ({code.name}): give the secret it was started with "
                    f"(--bot-secret)")
    finally:
        channel.close()
    return None


def fetch_bot_info(endpoint: str, game: str, name: str, timeout_s: float = VERIFY_TIMEOUT_S,
                   dialer: BotDialer = PLAINTEXT_OR_SYSTEM_ROOTS) -> bot_pb2.BotInfo:
    """Ask the bot at ``endpoint`` (``tls://HOST:PORT``: over TLS, as ``dialer`` dials) for its ``BotInfo``,
    waiting at most ``timeout_s`` seconds, and check it as ``registration_info`` does (``EndpointError``)."""
    return registration_info(endpoint, game, name, dial_infos([endpoint], timeout_s, dialer)[endpoint], timeout_s)


def bot_problems(bots: Sequence[BotEntry], outcomes: Mapping[str, Outcome]) -> list[tuple[str, str] | None]:
    """What the GetInfo ``outcomes`` (endpoint -> outcome, ``dial_infos``) say of each bot of ``bots``.

    Returns, per bot in order, ("", "") when it answers, plays its game and reports its registered version;
    ("down", why) when it does not answer (e.g. "connection refused", "no answer within 3 s"); ("changed", what)
    when it answers but not as registered (``registration_mismatch``: another name, another game, another
    version); None when ``outcomes`` has nothing for its endpoint (not checked). A bot registered without a check
    (version "0", ``verify_bots=False``) is not held to its name and version."""
    out: list[tuple[str, str] | None] = []
    for bot in bots:
        info = outcomes.get(bot.endpoint)
        if info is None:
            out.append(None)
        elif isinstance(info, NoAnswer):
            out.append(("down", info.reason))
        else:
            out.append(registration_mismatch(bot, info))
    return out


def mark_mismatches(store: Store, bots: Sequence[BotEntry], problems: Sequence[tuple[str, str] | None]) -> None:
    """Record in the health of each bot of ``bots`` what ``bot_problems`` found (``problems``, in order): a bot
    answering but not as registered is unhealthy with the reason "not as registered: WHAT" (the workers defer its
    matches; ``arena bot list`` shows it); one marked so that now answers as registered is healthy again. Only a
    change is written and logged: a bot found again as it was marked costs no write and no log line (anyone's
    read with ``check_endpoints`` may find it)."""
    states = store.bots_health([(b.game, b.bot_id) for b in bots])
    for bot, problem, state in zip(bots, problems, states):
        kind, why = problem or ("unchecked", "")
        if kind == "changed" and not (not state.healthy and state.reason == f"{MISMATCH_PREFIX}{why}"):
            store.mark_unhealthy(bot.game, bot.bot_id, f"{MISMATCH_PREFIX}{why}")
            log.warning("bot %s (%s) answers GetInfo, but not as registered: %s; its matches wait", bot.bot_id,
                        bot.game, why)
        elif kind == "" and not state.healthy and state.reason.startswith(MISMATCH_PREFIX):
            store.mark_healthy(bot.game, bot.bot_id)


def check_bots_ready(bots: Sequence[BotEntry], outcomes: Mapping[str, Outcome],
                     store: Store | None = None) -> str | None:
    """Whether every bot of ``bots`` (bots of one game) answered GetInfo as registered, by ``outcomes``
    (``dial_infos`` of their endpoints; a bot without an outcome counts as not answering); with ``store``, mark
    those that answer but not as registered (``mark_mismatches``).

    Returns ``None`` when every bot answers with its registered name and version and plays its game; else one
    sentence naming the others, e.g. "bots not answering: a@1.0 (127.0.0.1:5001: connection refused), b@1.0
    (127.0.0.1:5002: no answer within 3 s)", followed by the bots that answer but not as registered (another
    game, version or name; the other name is not repeated)."""
    found = bot_problems(bots, outcomes)
    if store is not None:
        mark_mismatches(store, bots, found)
    problems = [p or ("down", "not checked") for p in found]
    down = [f"{b.bot_id} ({b.endpoint}: {why})" for b, (kind, why) in zip(bots, problems) if kind == "down"]
    changed = [f"{b.bot_id} ({b.endpoint} {why})" for b, (kind, why) in zip(bots, problems) if kind == "changed"]
    parts = []
    if down:
        parts.append("bots not answering: " + ", ".join(down))
    if changed:
        parts.append("bots not as registered: " + ", ".join(changed))
    return "; ".join(parts) if parts else None
