"""Every Redis key of the arena, in one place (STYLE.md habit 12; DESIGN.md "Scheduling and storage"); the Lua
scripts over them are in ``arena.store.scripts`` (the owners' in ``arena.store.owner_scripts``).

Key layout (all under the prefix ``arena:``). Keys that one script or transaction touches share the hash tag
``{<game>}``, so the same code runs on Redis Cluster::

    arena:id                                 string this arena's id: random, set once (SET NX), never changed
    arena:games                              set    game ids that have registered bots
    arena:{G}:bots                           set    bot ids "NAME@VERSION" registered for game G
    arena:{G}:bot-index                      zset   the same bot ids, every score 0: in byte order for the pages
                                                    of ListBots (ZRANGE BYLEX); rebuilt from the set when their
                                                    sizes differ (``BotStore.bots_page``)
    arena:{G}:bot:<bot id>                   hash   name, version, bot_id, game, endpoint, registered_at,
                                                    updated_at (s since epoch), sdk_version, author
    arena:{G}:versions:<NAME>                zset   VERSION -> registered_at: the registered versions of NAME
    arena:{G}:owner:<NAME>                   string sha256 (hex) of NAME's owner token; kept when every version
                                                    is removed, so nobody else can take over NAME's ladder history
    arena:{G}:owner-bots:<key>               set    bot ids that the owner whose key is <key> registered in G and
                                                    has not removed (``limits.VERSIONS_PER_OWNER``)
    arena:{G}:removed-owners                 set    keys of the owners the organiser removed (RemoveOwner): no bot
                                                    of G is registered for them again (checked in the registering step)
    arena:tournament-ids                     string counter behind the ids "t1", "t2", ...
    arena:tournaments                        hash   tournament id -> game
    arena:{G}:tournament:<id>                hash   id, game, spec (JSON), matches_total, matches_done, faults,
                                                    state ("running" | "finished" | "cancelled"), created_at,
                                                    finished_at, cancelled_at. "running" becomes "finished"
                                                    when matches_done + |cancelled| + |failed| = matches_total,
                                                    unless field controlled = "1" (a tournament that grows while
                                                    it runs: its controller finishes it, see
                                                    ``arena.tournaments.controllers``); "cancelled" is final
    arena:{G}:tournament:<id>:standings      hash   per-bot counters of the tournament (see ``BotTally``):
                                                    matches:<b>, score_sum:<b>, half_points:<b>, pairs:<b>,
                                                    wins:<b>, losses:<b>, vs:<b>|<opponent>
    arena:{G}:tournament:<id>:matches        zset   match ids of the tournament's stored results -> index number
    arena:{G}:tournament:<id>:cancelled      set    match ids dropped by a cancellation (never played)
    arena:{G}:tournament:<id>:failed         set    match ids given up after ``max_deliveries`` deliveries
    arena:{G}:tournament:<id>:separation     hash   a tournament run until its bots are separated
                                                    (``arena.tournaments.until_separated``): checked_total,
                                                    last_check (the last fit's verdict while it runs); once
                                                    stopped, set with state "finished" in one transaction: stopped_by
                                                    ("separated" | "cap"), reason, rounds, matches, order
    arena:{G}:tournament:<id>:format         hash   a format's own state, written in the transaction that queues
                                                    the matches it describes (``Store.create_tournament`` and
                                                    ``Store.extend_tournament``, ``state=``): a Swiss keeps
                                                    round:<r> -> that round's tables and byes (JSON)
    arena:{G}:tournament:<id>:attempts       hash   match id -> times a worker started playing it (the attempt
                                                    number of its deal: a match played again gets a fresh deal)
    arena:{G}:tournament:<id>:sprt           hash   an SPRT's state (``arena.store.sprt``): h:<outcome> -> blocks
                                                    counted with that outcome (half points, -2(k-1)..2(k-1)),
                                                    void -> blocks not counted (a table failed); once decided:
                                                    verdict ("H0" | "H1" | "inconclusive"), reason, decided_at,
                                                    final (JSON: the counts it was decided on), llr
    arena:{G}:tournament:<id>:sprt-blocks    hash   block number -> its outcome (half points) or "void": each
                                                    block is counted once (``SPRT_COUNT_BLOCK``)
    arena:{G}:jobs                           stream match jobs (fields match, tournament, spec = MatchSpec
                                                    JSON), consumer group "workers"; a worker holds at most
                                                    concurrency + 1 (one claimed ahead, RELEASE on stop)
    arena:{G}:result:<match id>              string result JSON, written once per match id (the idempotency key)
    arena:{G}:match:<match id>               string full match record, packed (``codec.pack_record``)
    arena:{G}:results                        list   match ids in the order their ratings were applied: the
                                                    append-only results log (position 1 = first)
    arena:{G}:matches                        zset   match id -> index number (newest = highest; one number per
                                                    match, rated or not, from arena:{G}:match-seq)
    arena:{G}:match-seq                      string the last index number given (``RECORD_RESULT``)
    arena:{G}:bot-matches:<bot id>           zset   the same, for the matches of one bot version
    arena:{G}:name-matches:<NAME>            zset   the same, for the matches of every version of NAME
    arena:{G}:ladder                         zset   bot id -> Elo rating (points)
    arena:{G}:ladder-stats                   hash   matches:<bot>, wins:<bot> (rank 1, shared firsts count),
                                                    score_sum:<bot> (sum of game scores)
    arena:{G}:ratings:pairs                  string JSON pairwise counts (``PairCounts.to_dict``) of the first
                                                    "results" entries of the results log: the live ladder's
                                                    margins and LOS (``arena.ladder.cache``)
    arena:{G}:ratings:matches                string the results the ratings cache has read (bytes: "<count>\n" then
                                                    zlib'd JSON {bots, rows}: ``ratings_fits.encode_matches``),
                                                    extended as the log grows
    arena:{G}:ratings:fit                    string JSON batch fit of every stored result of G (``CachedFit``):
                                                    results counted, computed_at, replicates, lines
    arena:{G}:ratings:lock                   string token of the process refreshing G's ratings cache (SET NX PX,
                                                    renewed while it works; one refresh at a time)
    arena:{G}:tournament:<id>:fit            string JSON batch fit of one tournament's results (``CachedFit``),
                                                    keyed by the matches_done it counts
    arena:{G}:tournament:<id>:fit-lock       string token of the process fitting that tournament (SET NX PX)
    arena:workers                            zset   worker name -> last heartbeat (s since epoch)
    arena:worker:<name>                      hash   one worker's heartbeat (see ``WorkerStatus``); TTL
                                                    ``worker_forget_s``
    arena:{G}:health:<bot id>                hash   a bot version's health as the workers see it
                                                    (``arena.worker.health``): failures (failed matches in a row),
                                                    state ("healthy" | "unhealthy"), since, reason, last_failure,
                                                    last_failure_at, failed_match, recovered_at; absent for a bot
                                                    that never failed
    arena:{G}:unhealthy                      zset   bot id -> unhealthy since (s since epoch)
    arena:{G}:deferred                       zset   match id -> first deferral (s since epoch): matches put off
                                                    because a seat's bot is unhealthy (not on the jobs stream)
    arena:{G}:deferred-jobs                  hash   match id -> its job's stream fields (JSON list k1, v1, ...)
    arena:bot-check                          string the worker doing the periodic check of unhealthy bots now
                                                    (SET NX PX: one worker per interval)
    arena:challenge-key                      string hex key of the GetChallenge nonces (SET NX once)
    arena:seal-key                           string hex X25519 private key of the sealed fields (SET NX once;
                                                    ``arena.core.sealing``)
    arena:seal-client:<sha256>               string a client seal key used by a call (SET NX, expires after
                                                    ``CLIENT_SEAL_KEY_TTL_S``): refused in any later call
    arena:nonce:<nonce>                      string a nonce that signed a call (SET NX PX: each signs one call)
    arena:owner-ids                          hash   owner id -> owner key (``token_hash`` of the owner token)
    arena:registration                       hash   the organiser's registration settings (``arena.store.owners``):
                                                    mode ("open" | "closed"), max_names_per_owner,
                                                    max_owners_per_address, max_names_total (0 = no limit)
    arena:{owners}:account:<key>             hash   one owner account, <key> = its key (``token_hash`` of its
                                                    token): id, label, created_at, created_by ("registration" |
                                                    "organiser" | "migration")
    arena:{owners}:names:<key>               set    the bot names the owner holds, "GAME/NAME" (kept when every
                                                    version is removed, like the name's owner key)
    arena:{owners}:index                     zset   owner id -> 0: every owner, in id order (ListOwners pages)
    arena:{owners}:all-names                 set    "GAME/NAME" of every name some owner holds (the arena quota)
    arena:{owners}:name-owners               hash   ``name_owners_field(NAME)`` (NAME ASCII-lowercased) -> the key
                                                    of the owner that holds NAME, in every game and every letter
                                                    case: a NAME belongs to one owner across games and spellings
                                                    (``OWNER_ADD_NAME`` and ``OWNER_CREATE`` refuse it to another);
                                                    set with the first reservation of NAME in any game, filled for
                                                    older names by ``OwnerStore.migrate_owners`` (a NAME that older
                                                    data holds for two owners, in two games or two spellings, keeps
                                                    the first one seen here; a field of older data keyed by a
                                                    spelling with capitals is moved to its lowercased field there,
                                                    and by any script that finds it first)
    arena:live:{<match id>}:head             string JSON of a match a worker is playing now, for the match viewer
                                                    (``arena.store.live``): game, config, seed, deals, seats,
                                                    tournament, started_at, updated_at; TTL ``LIVE_TTL_S``, renewed
                                                    while it is played, deleted once its result is stored
    arena:live:{<match id>}:log              list   the match's decisions, faults and forfeits so far, one JSON
                                                    entry each ({"d": decision} | {"f": fault} | {"x": forfeit}),
                                                    in the order they happened; same TTL and end
    arena:{owners}:address:<host>            string new owners created by registration from client address <host>
                                                    (an IPv4 host, an IPv6 /64) in the current window (INCR; expires
                                                    ``ADDRESS_WINDOW_S`` after the window's first)
"""

from __future__ import annotations

from arena.core.signing import owner_id as owner_id  # an owner's public id
from arena.core.signing import token_hash as token_hash  # what the store keeps of an owner token

PREFIX = "arena:"
ARENA_ID = PREFIX + "id"
JOBS_GROUP = "workers"
GAMES_SET = PREFIX + "games"
TOURNAMENT_IDS = PREFIX + "tournament-ids"
TOURNAMENTS = PREFIX + "tournaments"
WORKERS = PREFIX + "workers"
CHALLENGE_KEY = PREFIX + "challenge-key"  # string: the key that makes GetChallenge nonces unforgeable
SEAL_KEY = PREFIX + "seal-key"  # string: the arena's private key of the sealed fields (arena.core.sealing)


def client_seal_key_key(digest: str) -> str:
    """A client seal key used once (its SHA-256, hex): a call's key is refused again (``use_client_seal_key``)."""
    return f"{PREFIX}seal-client:{digest}"
OWNER_IDS = PREFIX + "owner-ids"  # hash: owner id -> owner key (token_hash), to check signed owner calls
REGISTRATION = PREFIX + "registration"  # hash: the organiser's registration settings (mode, quotas)
_OWNERS = PREFIX + "{owners}:"  # one hash tag: the owner scripts touch several of these keys at once
OWNER_INDEX = _OWNERS + "index"
OWNED_NAMES = _OWNERS + "all-names"
NAME_OWNERS = _OWNERS + "name-owners"  # hash: name_owners_field(NAME) -> key of its owner, in every game
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


# --- key names -------------------------------------------------------------------------------------------------


def _tag(game: str) -> str:
    return f"{PREFIX}{{{game}}}:"


def bots_key(game: str) -> str:
    return _tag(game) + "bots"


def bot_index_key(game: str) -> str:
    return _tag(game) + "bot-index"


def bot_key(game: str, bot: str) -> str:
    return _tag(game) + "bot:" + bot


def versions_key(game: str, name: str) -> str:
    return _tag(game) + "versions:" + name


def owner_key(game: str, name: str) -> str:
    return _tag(game) + "owner:" + name


def owner_bots_key(game: str, key: str) -> str:
    """Set: the bot ids (every version of every NAME) that the owner whose key is ``key`` registered in ``game``
    and has not removed: what ``limits.VERSIONS_PER_OWNER`` counts."""
    return _tag(game) + "owner-bots:" + key


def removed_owners_key(game: str) -> str:
    """Set: the keys of the owners the organiser removed, which no registration in ``game`` accepts again."""
    return _tag(game) + "removed-owners"


def account_key(key: str) -> str:
    """The hash of the owner account whose key is ``key``."""
    return _OWNERS + "account:" + key


def owner_names_key(key: str) -> str:
    """The set of "GAME/NAME" the owner whose key is ``key`` holds."""
    return _OWNERS + "names:" + key


def name_owners_field(name: str) -> str:
    """The field of bot NAME ``name`` in ``NAME_OWNERS``: ``name`` with A-Z lowercased and every other character
    kept (as Lua's ``string.lower`` in Redis, whose scripts compare names so), e.g. "Heuristic" -> "heuristic".
    Names that differ only in letter case share one field, so they are one NAME with one owner."""
    return name.translate(_ASCII_LOWER)


def address_key(host: str) -> str:
    """The counter of new owners registered from client host ``host`` in the current window."""
    return _OWNERS + "address:" + host


def tournament_key(game: str, tournament_id: str) -> str:
    return _tag(game) + "tournament:" + tournament_id


def standings_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":standings"


def tournament_matches_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":matches"


def cancelled_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":cancelled"


def failed_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":failed"


def separation_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":separation"


def format_state_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":format"


def attempts_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":attempts"


def sprt_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":sprt"


def sprt_blocks_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":sprt-blocks"


def jobs_key(game: str) -> str:
    return _tag(game) + "jobs"


def result_key(game: str, match_id: str) -> str:
    return _tag(game) + "result:" + match_id


def match_key(game: str, match_id: str) -> str:
    return _tag(game) + "match:" + match_id


def results_log_key(game: str) -> str:
    return _tag(game) + "results"


def matches_index_key(game: str) -> str:
    return _tag(game) + "matches"


def match_sequence_key(game: str) -> str:
    """The counter whose next number each stored match of ``game`` takes as its score in the match indexes."""
    return _tag(game) + "match-seq"


def bot_matches_key(game: str, bot: str) -> str:
    return _tag(game) + "bot-matches:" + bot


def name_matches_key(game: str, name: str) -> str:
    return _tag(game) + "name-matches:" + name


def ladder_key(game: str) -> str:
    return _tag(game) + "ladder"


def ladder_stats_key(game: str) -> str:
    return _tag(game) + "ladder-stats"

def ratings_pairs_key(game: str) -> str:
    return _tag(game) + "ratings:pairs"


def ratings_matches_key(game: str) -> str:
    return _tag(game) + "ratings:matches"


def ratings_fit_key(game: str) -> str:
    return _tag(game) + "ratings:fit"


def ratings_lock_key(game: str) -> str:
    return _tag(game) + "ratings:lock"


def tournament_fit_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":fit"


def tournament_fit_lock_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":fit-lock"


def worker_key(name: str) -> str:
    return PREFIX + "worker:" + name


BOT_CHECK = PREFIX + "bot-check"


def health_key(game: str, bot: str) -> str:
    return _tag(game) + "health:" + bot


def unhealthy_key(game: str) -> str:
    return _tag(game) + "unhealthy"


def deferred_key(game: str) -> str:
    return _tag(game) + "deferred"


def deferred_jobs_key(game: str) -> str:
    return _tag(game) + "deferred-jobs"


def nonce_key(nonce: str) -> str:
    """A used GetChallenge nonce (string, expires with the nonce): each signs one call."""
    return PREFIX + "nonce:" + nonce


def name_of(bot: str) -> str:
    return bot.split("@", 1)[0]


def live_head_key(match_id: str) -> str:
    return f"{PREFIX}live:{{{match_id}}}:head"


def live_log_key(match_id: str) -> str:
    return f"{PREFIX}live:{{{match_id}}}:log"
