"""Size limits of every input the arena accepts, in one place (STYLE.md habit 12).

Every string and list field of every ``arena.v1.Arena`` request, and every field of a bot's ``GetInfo`` answer, has
a limit here; ``proto/arena/v1/*.proto`` repeats each number in the field's comment
(``tests/platform/test_input_limits.py`` checks both: every such field is listed, and its comment names the number).
A request over a limit is refused with INVALID_ARGUMENT naming the field (``request_problem``); a bot whose GetInfo
answer is over a limit is refused at registration (``bot_info_problem``). Lengths count characters (Python ``len``).

| what | limit |
|---|---|
| any Arena request message | 64 KiB (the gRPC server's max receive size; larger: RESOURCE_EXHAUSTED) |
| game id | 32 characters |
| bot NAME | 64 characters of ``A-Z a-z 0-9 _ . -`` |
| VERSION (GetInfo) | 64 characters of ``A-Z a-z 0-9 _ . + -`` |
| bot ref ``NAME@VERSION`` | 129 characters |
| endpoint ``HOST:PORT`` | 255 characters |
| owner token, admin token | 256 characters (an admin token given to ``arena serve``: at least 16) |
| bot secret | 16..256 visible ASCII characters, no spaces |
| GetInfo author | 128 characters |
| GetInfo sdk_version | 64 characters |
| GetInfo games | 16 game ids of 32 characters |
| GetInfo answer | 16 KiB (the referee's max receive size on that call) |
| a bot's answers during a match | 64 KiB each |
| tournament id, match id | 24, 64 characters |
| bot versions per game: of one NAME, of one owner (all its names) | 100, 100 |
| bots of a tournament | 128 |
| deal plan of a tournament | 16 characters |
| matches of a tournament | 100000 (``arena.tournaments.MAX_MATCHES``) |
| field bots of an SPRT | 64 |
| ListMatches limit | 1000 |
| GetInfo checks at once, by caller class | organiser 4; owner 4 (2 per client); stranger 4 (1 per client); list 1 |
| endpoints one ``ListBots(check_endpoints)`` dials | 128 (the others come from the cache or unchecked) |
| GetInfo outcomes kept for reuse | 4096 endpoints, 3 s each |
| page token of a list method (ListBots, ListTournaments, ListMatches, ListWorkers) | 512 characters |
| page size of a list method | clamped to its maximum (``arena.server.pages``) |
| endpoint problem in a ListBots answer | 256 characters (longer ones are cut) |
| owner label, owner id, registration mode | 64, 18, 16 characters (ListOwners' page token: the page token's) |
| ListOwners page size | 1000 |
| CLI: embedded workers (``arena serve --workers``), matches per worker at once (``--concurrency``) | 256, 10000 |
| CLI: a seed of deals (``arena play --seed``) | 2**64 - 1 |
| web pages, per client address (an IPv6 /64) | 16 requests (8 pages) at once; 100 a second, 3000 a minute |
| web connections (at most a quarter of the descriptors) | 128 per peer address, 4096 in all; 10 s to say something |
| Arena service connections (at most a quarter of the descriptors) | 4096; 10 s to handshake; closed after 2 min idle |

Every integer option of the ``arena`` CLI has a maximum (a huge value is a usage error, never an overflow later);
``tests/cli/test_cli_huge_ints.py`` sweeps them all.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from arena_sdk import guard

KIB = 1024
MAX_WORKERS = 256  # workers embedded in one `arena serve`
MAX_CONCURRENCY = 10_000  # matches one worker runs at once
MAX_SEED = 2**64 - 1  # a seed of deals given on the command line: 64 bits

MAX_REQUEST_BYTES = 64 * KIB  # the Arena server's grpc.max_receive_message_length
MAX_BOT_INFO_BYTES = 16 * KIB  # the referee's max receive size for a bot's GetInfo answer
MAX_BOT_ANSWER_BYTES = 64 * KIB  # the referee's max receive size for a bot's StartMatch/Decide/EndMatch answers
MAX_BOT_METADATA_BYTES = 32 * KIB  # the referee's soft limit on a bot's call metadata (grpc's default: 8 KiB)
BOT_STATUS_TEXT = 1024  # characters of a bot's error status (or StepFailure message) kept in a fault's detail

GAME_ID = 32
BOT_NAME = 64
VERSION = 64
BOT_REF = BOT_NAME + 1 + VERSION  # "NAME@VERSION"
ENDPOINT = 255
TOKEN = 256  # owner tokens and admin tokens as sent in a request or call metadata
MIN_ADMIN_TOKEN = 16  # an admin token given to `arena serve` (ARENA_ADMIN_TOKEN) must be at least this long
MIN_BOT_SECRET = guard.MIN_BOT_SECRET  # a bot secret's characters, at least and at most: the SDK's one rule
BOT_SECRET = guard.MAX_BOT_SECRET
AUTHOR = 128
SDK_VERSION = 64
GAMES_PER_BOT = 16
TOURNAMENT_ID = 24
MATCH_ID = 64
TOURNAMENT_BOTS = 128
VERSIONS_PER_NAME = 100  # versions one bot NAME may have registered per game (one more: RESOURCE_EXHAUSTED)
VERSIONS_PER_OWNER = 100  # bot versions one owner may have registered per game, all its names together (one more:
# RESOURCE_EXHAUSTED): with 50 new owners per address and hour, one address adds at most 5,000 an hour, not 100,000
FIRST_ROUND = 16  # SwissOptions.first_round: "rating" | "random"
DEAL_PLAN = 16  # CreateTournamentRequest.deals, CreateSprtRequest.deals: "duplicate", "unique" or "rotate"
LADDER_METHOD = 16  # GetLadderRequest.method: "elo" or "fit"
MATCH_LIST = 1000  # ListMatchesRequest.limit is capped at this
# ListMatchesRequest.offset at most (more: INVALID_ARGUMENT): an offset costs the results it skips, read and decoded
# in every game, so an unbounded one let one unauthenticated call read every stored result; page_token goes deeper
MATCH_OFFSET = 1000
SPRT_FIELD = 64  # CreateSprtRequest.field
HOUSE_BOT = 71  # CreateSprtRequest.house: "house:" and a sample name of at most 64 characters
SPRT_HOUSE = 9  # CreateSprtRequest.house: one house bot per other seat of at most 10 seats
SPRT_STATISTIC = 16  # CreateSprtRequest.statistic: "score" or "points"
# Calls that call bots' GetInfo at the same time, per caller class (arena.server.admission); more get
# RESOURCE_EXHAUSTED (a ListBots over its share comes unchecked instead).
ORGANISER_CHECKS = 4  # calls with the admin token (a tournament's readiness probe)
OWNER_CHECKS = 4  # calls proving the owner key of the bot NAME they act on (RegisterBot again, UpdateBot)
OWNER_CHECKS_PER_CLIENT = 2  # of those, from one client address (an IPv6 /64)
STRANGER_CHECKS = 4  # every other registration (a new NAME)
STRANGER_CHECKS_PER_CLIENT = 1  # of those, from one client address
LIST_CHECKS = 1  # ListBots(check_endpoints) calls that dial bots
LIST_CHECK_DIALS = 128  # endpoints one ListBots(check_endpoints) dials; the rest come from the cache or unchecked
CHECK_CACHE_ENDPOINTS = 4096  # GetInfo outcomes kept for reuse, one per endpoint
CHECK_CACHE_S = 3.0  # seconds a GetInfo outcome is reused
PAGE_TOKEN = 512  # page_token of every list request (arena.server.pages makes tokens far shorter)
PROBLEM_TEXT = 256  # BotRecord.endpoint_problem and health_reason are cut to this many characters
OWNER_LABEL = 64  # CreateOwnerRequest.label
OWNER_ID = 18  # "o-" and 16 hex digits (arena.store.keys.owner_id)
REGISTRATION_MODE = 16  # SetRegistrationRequest.mode: "open" | "closed"
OWNER_PAGE = 1000  # ListOwnersRequest.page_size is capped at this
WEB_CLIENT_AT_ONCE = 16  # web requests of one client address being answered at once (`arena web`; 429 beyond)
WEB_CLIENT_PAGES_AT_ONCE = 8  # of those, pages and /api/ answers (not static files)
WEB_CLIENT_RATE = "100/second;3000/minute"  # web requests of one client address per window (`limits` rate string)
WEB_CONNECTIONS_PER_CLIENT = 128  # open web connections of one peer address (more are reset at once)
WEB_CONNECTIONS = 4096  # open web connections in all (at most a quarter of the process's file descriptors)
METRICS_CONNECTIONS = 16  # connections the --metrics endpoint serves at once (more are closed at once)
METRICS_CONNECTIONS_PER_CLIENT = 4  # of those, from one peer address
METRICS_READ_S = 5.0  # a --metrics connection whose whole request has not come in this long is closed
WEB_FIRST_REQUEST_S = 10.0  # seconds a new web connection has to send its first bytes
RPC_CONNECTIONS = 4096  # connections the Arena gRPC service accepts at once (at most a quarter of the descriptors)
# call metadata of the web app's calls to the Arena service: the referee's web key, which gives the pages a share of
# the service of their own (arena.server.shares); env ARENA_WEB_KEY sets it for `arena serve` and a separate `arena web`
WEB_KEY_METADATA = "arena-web-key"
WEB_KEY_ENV = "ARENA_WEB_KEY"

# Every string and repeated field of every Arena request: (max characters of each string, max entries of a list).
# A list of strings has both. Nested messages (GameConfig) are walked too; their scalar fields need no entry.
REQUEST_FIELDS: dict[str, tuple[int | None, int | None]] = {
    "RegisterBotRequest.name": (BOT_NAME, None),
    "RegisterBotRequest.endpoint": (ENDPOINT, None),
    "RegisterBotRequest.game": (GAME_ID, None),
    "RegisterBotRequest.owner_token": (TOKEN, None),
    "RegisterBotRequest.bot_secret": (BOT_SECRET, None),
    "UpdateBotRequest.bot": (BOT_REF, None),
    "UpdateBotRequest.game": (GAME_ID, None),
    "UpdateBotRequest.endpoint": (ENDPOINT, None),
    "UpdateBotRequest.owner_token": (TOKEN, None),
    "UpdateBotRequest.bot_secret": (BOT_SECRET, None),
    "RemoveBotRequest.bot": (BOT_REF, None),
    "RemoveBotRequest.game": (GAME_ID, None),
    "RemoveBotRequest.owner_token": (TOKEN, None),
    "ListBotsRequest.game": (GAME_ID, None),
    "ListBotsRequest.page_token": (PAGE_TOKEN, None),
    "ListBotsRequest.name": (BOT_NAME, None),
    "CreateTournamentRequest.game": (GAME_ID, None),
    "CreateTournamentRequest.bots": (BOT_REF, TOURNAMENT_BOTS),
    "CreateTournamentRequest.deals": (DEAL_PLAN, None),
    "SwissOptions.first_round": (FIRST_ROUND, None),
    "GetTournamentRequest.id": (TOURNAMENT_ID, None),
    "ListTournamentsRequest.game": (GAME_ID, None),
    "ListTournamentsRequest.page_token": (PAGE_TOKEN, None),
    "CancelTournamentRequest.id": (TOURNAMENT_ID, None),
    "GetStandingsRequest.id": (TOURNAMENT_ID, None),
    "ListMatchesRequest.tournament_id": (TOURNAMENT_ID, None),
    "ListMatchesRequest.bot": (BOT_REF, None),
    "ListMatchesRequest.page_token": (PAGE_TOKEN, None),
    "ListWorkersRequest.page_token": (PAGE_TOKEN, None),
    "GetMatchRequest.match_id": (MATCH_ID, None),
    "GetLiveMatchRequest.match_id": (MATCH_ID, None),
    "CreateSprtRequest.game": (GAME_ID, None),
    "CreateSprtRequest.v1": (BOT_REF, None),
    "CreateSprtRequest.v2": (BOT_REF, None),
    "CreateSprtRequest.field": (BOT_REF, SPRT_FIELD),
    "CreateSprtRequest.deals": (DEAL_PLAN, None),
    "CreateSprtRequest.house": (HOUSE_BOT, SPRT_HOUSE),
    "CreateSprtRequest.statistic": (SPRT_STATISTIC, None),
    "GetSprtRequest.id": (TOURNAMENT_ID, None),
    "GetLadderRequest.game": (GAME_ID, None),
    "GetLadderRequest.method": (LADDER_METHOD, None),
    "RebuildLadderRequest.game": (GAME_ID, None),
    "CreateOwnerRequest.label": (OWNER_LABEL, None),
    "GetOwnerRequest.owner_token": (TOKEN, None),
    "GetOwnerRequest.id": (OWNER_ID, None),
    "RemoveOwnerRequest.id": (OWNER_ID, None),
    "ListOwnersRequest.page_token": (PAGE_TOKEN, None),
    "SetRegistrationRequest.mode": (REGISTRATION_MODE, None),
}
# A field missing from REQUEST_FIELDS (one added to the protocol without a limit here) still gets these bounds at
# run time; tests/platform/test_input_limits.py fails until it is listed.
FALLBACK_CHARS = 256
FALLBACK_ENTRIES = 16

# The fields of a bot's GetInfo answer (BotInfo): the same shape as REQUEST_FIELDS.
BOT_INFO_FIELDS: dict[str, tuple[int | None, int | None]] = {
    "BotInfo.name": (BOT_NAME, None),
    "BotInfo.version": (VERSION, None),
    "BotInfo.games": (GAME_ID, GAMES_PER_BOT),
    "BotInfo.sdk_version": (SDK_VERSION, None),
    "BotInfo.author": (AUTHOR, None),
}


def limited_fields(descriptor: Descriptor, prefix: str = "") -> Iterator[tuple[str, FieldDescriptor]]:
    """Every string or repeated field of the message type ``descriptor`` and of the messages it holds, as
    ("Message.field", field descriptor); nested ones are named by their own message type."""
    for field in descriptor.fields:
        name = f"{descriptor.name}.{field.name}"
        if field.type == FieldDescriptor.TYPE_STRING or field.is_repeated:
            yield name, field
        if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type is not None:
            yield from limited_fields(field.message_type)


def message_problem(message: Any, table: dict[str, tuple[int | None, int | None]]) -> str | None:
    """The first field of ``message`` (a protobuf message) over its limit in ``table``, as one sentence naming
    the field, its size and the limit, e.g. "RegisterBotRequest.name is 300 characters long; the limit is 64";
    ``None`` when every field is within its limits. Linear in the size of the message."""
    descriptor = message.DESCRIPTOR
    for field in descriptor.fields:
        name = f"{descriptor.name}.{field.name}"
        chars, entries = table.get(name, (FALLBACK_CHARS, FALLBACK_ENTRIES))
        value = getattr(message, field.name)
        if field.is_repeated:
            if entries is not None and len(value) > entries:
                return f"{name} holds {len(value)} entries; the limit is {entries}"
            items = list(value)
        else:
            if field.type == FieldDescriptor.TYPE_MESSAGE and not message.HasField(field.name):
                continue
            items = [value]
        for i, item in enumerate(items):
            where = f"{name}[{i}]" if field.is_repeated else name
            if field.type == FieldDescriptor.TYPE_STRING and chars is not None and len(item) > chars:
                return f"{where} is {len(item)} characters long; the limit is {chars}"
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                problem = message_problem(item, table)
                if problem:
                    return problem
    return None


def request_problem(request: Any) -> str | None:
    """``message_problem`` of an Arena request against ``REQUEST_FIELDS``."""
    return message_problem(request, REQUEST_FIELDS)


def bot_info_problem(info: Any) -> str | None:
    """``message_problem`` of a bot's ``BotInfo`` (its GetInfo answer) against ``BOT_INFO_FIELDS``."""
    return message_problem(info, BOT_INFO_FIELDS)
