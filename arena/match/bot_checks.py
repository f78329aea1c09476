"""Checks of a bot before it plays, made alike by registration (``arena.server.checks``, ``arena.server.admission``:
RegisterBot, UpdateBot) and by ``arena play`` (``arena.cli.play``), so that a bot author testing locally learns what
registration would refuse: its GetInfo answer read within ``limits.MAX_BOT_INFO_BYTES`` (``GETINFO_OPTIONS``; a
larger one: ``over_limit_refusal``), its ``BotInfo`` within the limits of ``limits.BOT_INFO_FIELDS``, playing the
game and with a well-formed version (``bot_info_refusal``), and, when it says ``serves_match_stream``, a match stream
it does not refuse with UNIMPLEMENTED (``stream_refusal``: the check the referee makes in a match,
``arena.match.streams``). Each returns None, or the refusal as one sentence that tells the bot's author what to
change."""

from __future__ import annotations

import re
import threading
from typing import Any

import grpc

from arena.core import limits
from arena.core.config import DEFAULTS
from arena.core.specs import VERSION_RE
from arena.core.text import printable
from arena.match.channels import PLAINTEXT_OR_SYSTEM_ROOTS, BotDialer
from arena.match.streams import PROBE_S
from arena_sdk.games import GAMES
from arena_sdk.guard import secret_metadata
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

# the options of a channel that asks a bot's GetInfo: an answer over MAX_BOT_INFO_BYTES is not read
GETINFO_OPTIONS = (("grpc.max_receive_message_length", limits.MAX_BOT_INFO_BYTES),)
# what grpc core says of an answer over the channel's receive limit, e.g. "Received message larger than max (20040
# vs. 16384)": the answer's size in bytes
_TOO_LARGE = re.compile(r"larger than max \((\d+) vs\. \d+\)")


def bot_info_limits() -> str:
    """The limits of a ``BotInfo``'s fields (``limits.BOT_INFO_FIELDS``), e.g. "name 64 characters, ..., games at
    most 16 ids of 32 characters, ..., author 128 characters"."""
    parts = []
    for name, (chars, entries) in limits.BOT_INFO_FIELDS.items():
        field = name.split(".", 1)[1]
        if entries is not None:
            parts.append(f"{field} at most {entries} ids of {chars} characters")
        else:
            parts.append(f"{field} {chars} characters")
    return ", ".join(parts)


def answer_over_limit(exc: grpc.RpcError) -> bool:
    """True when the failed GetInfo call ``exc`` (on a channel with ``GETINFO_OPTIONS``) failed because the bot's
    answer was over ``limits.MAX_BOT_INFO_BYTES``: grpc's RESOURCE_EXHAUSTED "Received message larger than max"."""
    code = exc.code() if callable(getattr(exc, "code", None)) else None
    details = (exc.details() if callable(getattr(exc, "details", None)) else "") or ""
    return code == grpc.StatusCode.RESOURCE_EXHAUSTED and _TOO_LARGE.search(details) is not None


def over_limit_refusal(endpoint: str, details: str = "") -> str:
    """The refusal of a bot at ``endpoint`` whose GetInfo answer was over ``limits.MAX_BOT_INFO_BYTES``
    (``answer_over_limit``; ``details``: grpc's status details, which give the answer's size), naming the limits."""
    found = _TOO_LARGE.search(details)
    size = f" ({int(found.group(1)):,} bytes)" if found else ""
    return (f"the bot at {endpoint} answered GetInfo with a BotInfo over the arena's size limit{size}: the arena "
            f"reads at most {limits.MAX_BOT_INFO_BYTES:,} bytes ({limits.MAX_BOT_INFO_BYTES // limits.KIB} KiB) of "
            f"it, and its fields must keep within {bot_info_limits()} (bot.proto, BotInfo)")


REGISTERING = "registering a bot of {game}? give the game: --game {game}"  # bot_info_refusal's hint at registration


def bot_info_refusal(endpoint: str, info: bot_pb2.BotInfo, game: str, other_game: str = REGISTERING) -> str | None:
    """Why the bot at ``endpoint`` whose GetInfo answered ``info`` cannot play ``game`` in the arena: a field over
    its limit (``limits.bot_info_problem``: a 2.5 MB author is refused, never stored or shown), ``game`` not among
    its games (with the hint ``other_game``, its ``{game}`` filled in, when it plays another game the arena knows),
    or a malformed version; None when it can. The name is not checked here (registration compares it with the NAME
    registered)."""
    problem = limits.bot_info_problem(info)
    if problem:
        return f"the bot at {endpoint} answered GetInfo over the arena's limits: {problem}"
    if game not in info.games:
        plays = [g for g in info.games if g in GAMES]
        hint = f" ({other_game.format(game=plays[0])})" if plays else ""
        played = printable(", ".join(info.games)) or "no game"
        return f"the bot at {endpoint} plays {played}, not {game}; start a bot of {game} there{hint}"
    if not VERSION_RE.match(info.version):
        return (f"the bot at {endpoint} reports version {info.version!r} in GetInfo; a version must be 1..64 "
                f"characters of A-Z a-z 0-9 _ . + - (set the bot's version, e.g. version = \"1.0\")")
    return None


def stream_refusal(endpoint: str, secret: str = "", timeout_s: float = DEFAULTS.verify_timeout_s,
                   dialer: BotDialer = PLAINTEXT_OR_SYSTEM_ROOTS, probe_s: float = PROBE_S) -> str | None:
    """Whether the bot at ``endpoint``, whose GetInfo says ``serves_match_stream``, implements ``PlayMatch``: asked
    with a match stream on which nothing is written, the referee's side closed at once (carrying the bot secret
    ``secret``, "" for none), once the channel is connected (within ``timeout_s`` seconds). A bot that does not
    implement it refuses that stream at once with UNIMPLEMENTED: then the refusal sentence, which tells its author
    what to change. A bot that serves it ends it at once too, having been asked nothing (the Python SDK: OK, in
    about a millisecond). None for any other status, or none within ``probe_s`` seconds (the match's calls find out
    what that means), or when the bot cannot be reached (neither can the match's calls)."""
    channel = dialer.channel(endpoint, options=[("grpc.max_receive_message_length", limits.MAX_BOT_ANSWER_BYTES)])
    call: Any = None  # the stream call: a grpc Future too (add_done_callback), which its stub type omits
    try:
        try:
            grpc.channel_ready_future(channel).result(timeout=timeout_s)
        except grpc.FutureTimeoutError:
            return None
        call = bot_pb2_grpc.BotStub(channel).PlayMatch(
            iter(()), metadata=secret_metadata(secret), wait_for_ready=False)
        over = threading.Event()
        call.add_done_callback(lambda _call: over.set())
        if not over.wait(probe_s) or call.code() != grpc.StatusCode.UNIMPLEMENTED:
            return None
        return (f"the bot at {endpoint} says serves_match_stream in GetInfo, but it does not implement PlayMatch "
                f"(it refused a match stream with UNIMPLEMENTED), so it would fault at every call of every match: "
                f"implement PlayMatch (bot.proto, \"The match stream\"), or leave serves_match_stream false, and the "
                f"referee plays it through StartMatch, Decide and EndMatch")
    finally:
        if call is not None:
            call.cancel()
        channel.close()
