"""Registered bots: versions, endpoints, owner tokens (as hashes)."""

from __future__ import annotations

import hmac
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.core.specs import bot_id, split_bot_ref
from arena.store.base import OwnershipError, StoreBase, StoreError, VersionsExhausted
from arena.store.keys import (
    GAMES_SET,
    NAME_OWNERS,
    OWNER_IDS,
    REGISTRATION,
    bot_index_key,
    bot_key,
    bots_key,
    name_owners_field,
    owner_bots_key,
    owner_id,
    owner_key,
    removed_owners_key,
    token_hash,
    versions_key,
)

HEX_KEY_RE = re.compile(r"^[0-9a-f]{64}\Z")  # an owner key: token_hash, SHA-256 hex
UNVERIFIED_VERSION = "0"  # version of a bot registered without asking its GetInfo (tests, verify_bots=False)


@dataclass(frozen=True)
class BotEntry:
    """A registered bot version.

    Attributes: name (NAME); game; endpoint "host:port"; registered_at (first registration of this version, s
    since epoch); version (from the bot's GetInfo); sdk_version and author (GetInfo); updated_at (last
    registration or update, s since epoch); secret: the bot secret its owner gave ("" for none), which the referee
    sends in the ``arena-bot-secret`` call metadata; kept out of ``repr`` and of every reply; checked: its
    registration checked the bot's GetInfo, so the bot at its endpoint must keep answering that name and version
    (``arena.worker.health.registration_mismatch``; a record written before the flag existed: checked unless its
    version is ``UNVERIFIED_VERSION``). ``bot_id`` is the ladder identity "NAME@VERSION".
    """

    name: str
    game: str
    endpoint: str
    registered_at: float
    version: str = UNVERIFIED_VERSION
    sdk_version: str = ""
    author: str = ""
    updated_at: float = 0.0
    secret: str = field(default="", repr=False)
    checked: bool = False

    @property
    def bot_id(self) -> str:
        return bot_id(self.name, self.version)


class BotStore(StoreBase):
    """Bot registration, lookup, update and removal."""

    def register_bot(self, game: str, name: str, endpoint: str, *, version: str = UNVERIFIED_VERSION,
                     sdk_version: str = "", author: str = "", owner_hash: str | None = None,
                     now: float | None = None, secret: str = "", checked: bool = False) -> BotEntry:
        """Register bot version ``name@version`` of ``game`` at ``endpoint``, or update it (upsert): a version
        registered again keeps its first ``registered_at`` and its ladder entry.

        Ownership: with ``owner_hash`` (``token_hash`` of the owner token), an unowned NAME is claimed for it
        and an owned one must be owned by it; ``owner_hash=None`` skips ownership (internal use and tests; the
        Arena service always passes one).
        ``secret``: the bot secret to send to it ("" keeps the one this version had, if any). ``checked``: the
        caller checked the bot's GetInfo (name, version, game), which the workers then hold it to (``BotEntry``).
        Raises ``OwnershipError`` when NAME is owned by another hash (nothing changed).
        """
        entry, _claimed = self.register_bot_claim(game, name, endpoint, version=version, sdk_version=sdk_version,
                                                  author=author, owner_hash=owner_hash, now=now, secret=secret,
                                                  checked=checked)
        return entry

    def register_bot_claim(self, game: str, name: str, endpoint: str, *, version: str = UNVERIFIED_VERSION,
                           sdk_version: str = "", author: str = "", owner_hash: str | None = None,
                           now: float | None = None, secret: str = "", checked: bool = False,
                           max_versions: int = 0, max_owner_versions: int = 0) -> tuple[BotEntry, bool]:
        """``register_bot``, also telling whether this call claimed NAME (its first registration). ``max_versions``
        (0: no limit): a new version of a NAME that holds that many already raises ``VersionsExhausted``;
        ``max_owner_versions`` (0: no limit): so does a new version when ``owner_hash``'s owner holds that many bot
        versions in ``game`` already, over all its names (``keys.owner_bots_key``). Both are checked and written in
        one atomic step, so concurrent registrations never pass them."""
        now = time.time() if now is None else now
        bid = bot_id(name, version)
        keys = [owner_key(game, name), versions_key(game, name), bot_key(game, bid), bots_key(game),
                bot_index_key(game)]
        if owner_hash:
            keys += [owner_bots_key(game, owner_hash), removed_owners_key(game)]
        claimed, _registered = self._register(
            keys=keys, args=[owner_hash or "", name, version, bid, game, endpoint, repr(float(now)), sdk_version,
                             author, secret, max_versions, max_owner_versions, "1" if checked else "0"])
        if int(claimed) == -1:
            raise OwnershipError(f"bot name {name!r} of {game} belongs to another owner token")
        if int(claimed) == -2:
            raise VersionsExhausted(f"{name} has {max_versions} versions registered for {game}, the most one name "
                                    f"may have: remove old ones (arena bot remove {name}@VERSION) before "
                                    f"registering {version!r}")
        if int(claimed) == -3:
            raise VersionsExhausted(f"the owner of {name} has {max_owner_versions} bot versions registered for "
                                    f"{game} (all its names together), the most one owner may have: remove old "
                                    f"ones (arena bot remove NAME@VERSION) before registering {name}@{version}")
        if owner_hash and HEX_KEY_RE.match(owner_hash):  # signed owner calls find the key by owner id
            self.client.hsetnx(OWNER_IDS, owner_id(owner_hash), owner_hash)
            if int(claimed):  # NAME is its owner's in every game (the service reserved it so already; kept if held)
                self.client.hsetnx(NAME_OWNERS, name_owners_field(name), owner_hash)
        self.client.sadd(GAMES_SET, game)
        entry = self.get_bot(game, bid)
        if entry is None:  # removed between the two calls
            raise StoreError(f"bot {bid} of {game} vanished while it was being registered")
        return entry, bool(int(claimed))

    def owner_token_matches(self, game: str, name: str, token: str) -> bool | None:
        """Whether ``token`` is the owner token of bot NAME ``name`` of ``game`` (constant-time comparison of the
        hashes); ``None`` when nobody owns NAME yet."""
        stored = self.client.get(owner_key(game, name))
        if stored is None:
            return None
        return hmac.compare_digest(token_hash(token).encode(), stored.encode())

    def registration_open(self) -> bool:
        """True unless the organiser closed registration (``REGISTRATION`` field ``mode`` = "closed"): in open
        registration anyone may create an owner by registering a bot."""
        return bool(self.client.hget(REGISTRATION, "mode") != "closed")

    def owner_hash(self, game: str, name: str) -> str | None:
        """The stored hash of NAME's owner token, or ``None`` when nobody owns NAME."""
        stored: str | None = self.client.get(owner_key(game, name))
        return stored

    @staticmethod
    def _bot(h: dict[str, str]) -> BotEntry:
        return BotEntry(name=h["name"], game=h["game"], endpoint=h["endpoint"],
                        registered_at=float(h.get("registered_at", 0.0)),
                        version=h.get("version", UNVERIFIED_VERSION), sdk_version=h.get("sdk_version", ""),
                        author=h.get("author", ""), updated_at=float(h.get("updated_at", 0.0)),
                        secret=h.get("secret", ""),
                        checked=h["checked"] == "1" if "checked" in h else h.get("version") != UNVERIFIED_VERSION)

    def bot_versions(self, game: str, name: str) -> list[str]:
        """The registered versions of NAME, oldest registration first."""
        return list(self.client.zrange(versions_key(game, name), 0, -1))

    def resolve_bot(self, game: str, ref: str) -> str | None:
        """The bot id that ``ref`` names: "NAME@VERSION" itself when registered, "NAME" its latest registered
        version (newest first registration); ``None`` when not registered. Raises ``TournamentError`` (a
        ``ValueError``) for a malformed ref."""
        name, version = split_bot_ref(ref)
        if version is not None:
            return ref if self.client.exists(bot_key(game, ref)) else None
        latest = self.client.zrevrange(versions_key(game, name), 0, 0)
        return bot_id(name, latest[0]) if latest else None

    def versions_of(self, game: str | None, name: str) -> list[BotEntry]:
        """The registered versions of NAME in ``game`` (every game when None or empty: by game id), oldest
        registration first within a game; two round trips per game, and one to list the games."""
        out: list[BotEntry] = []
        for g in [game] if game else sorted(self.client.smembers(GAMES_SET)):
            ids = [bot_id(name, v) for v in self.bot_versions(g, name)]
            if ids:
                pipe = self.client.pipeline(transaction=False)
                for b in ids:
                    pipe.hgetall(bot_key(g, b))
                out.extend(self._bot(h) for h in pipe.execute() if h)
        return out

    def get_bot(self, game: str, ref: str) -> BotEntry | None:
        """The bot ``ref`` ("NAME@VERSION", or "NAME" for its latest version) of ``game``, or ``None`` when it is
        not registered (or ``ref`` is malformed)."""
        try:
            bid = self.resolve_bot(game, ref)
        except ValueError:
            return None
        if bid is None:
            return None
        h = self.client.hgetall(bot_key(game, bid))
        return self._bot(h) if h else None

    def registered_among(self, game: str, bots: Sequence[str]) -> set[str]:
        """The bot ids of ``bots`` ("NAME@VERSION") registered for ``game`` now, in one round trip."""
        pipe = self.client.pipeline(transaction=False)
        for b in bots:
            pipe.sismember(bots_key(game), b)
        return {b for b, member in zip(bots, pipe.execute()) if member}

    def bot_names(self, game: str) -> list[str]:
        """The NAMEs with a bot registered for ``game``, sorted (one read of its bot ids)."""
        return sorted({b.partition("@")[0] for b in self.client.smembers(bots_key(game))})

    def list_bots(self, game: str | None = None) -> list[BotEntry]:
        """Registered bot versions of ``game`` (every game when ``None`` or empty), sorted by game, name, then
        registration time."""
        games = [game] if game else sorted(self.client.smembers(GAMES_SET))
        out: list[BotEntry] = []
        for g in games:
            ids = sorted(self.client.smembers(bots_key(g)))
            pipe = self.client.pipeline(transaction=False)
            for b in ids:
                pipe.hgetall(bot_key(g, b))
            bots = [self._bot(h) for h in pipe.execute() if h]
            out.extend(sorted(bots, key=lambda b: (b.name, b.registered_at, b.version)))
        return out

    def update_bot(self, game: str, bot: str, endpoint: str, *, sdk_version: str = "", author: str = "",
                   now: float | None = None, secret: str = "") -> BotEntry | None:
        """Point the registered version ``bot`` (a bot id) at ``endpoint`` (and give it a new bot ``secret``; ""
        keeps it); ``None`` when it is not registered."""
        now = time.time() if now is None else now
        if not int(self._update(keys=[bot_key(game, bot)],
                                args=[endpoint, repr(float(now)), sdk_version, author, secret])):
            return None
        return self.get_bot(game, bot)

    def remove_bot(self, game: str, ref: str) -> list[str]:
        """Unregister "NAME@VERSION", or every version of "NAME". Ladder history, results and NAME's owner stay.
        Returns the bot ids removed (empty when none was registered)."""
        name, version = split_bot_ref(ref)
        versions = [version] if version is not None else self.bot_versions(game, name)
        ids = [bot_id(name, v) for v in versions if self.client.exists(bot_key(game, bot_id(name, v)))]
        if not ids:
            return []
        owner = self.owner_hash(game, name)  # NAME's owner never changes: its count of versions goes down
        pipe = self.client.pipeline(transaction=True)
        for bid, v in zip(ids, [split_bot_ref(b)[1] for b in ids]):
            pipe.delete(bot_key(game, bid))
            pipe.zrem(versions_key(game, name), v)
            pipe.srem(bots_key(game), bid)
            pipe.zrem(bot_index_key(game), bid)
            if owner:
                pipe.srem(owner_bots_key(game, owner), bid)
        pipe.execute()
        return ids

    def bots_page(self, game: str | None, after: tuple[str, str] | None, size: int) -> tuple[list[BotEntry], bool]:
        """One page of registered bot versions: of ``game`` (every game when None or empty), in order of game id,
        then bot id (byte order), the first ``size`` after ``after`` = (game, bot id) of the previous page's last
        bot (None: from the start). Returns (bots, whether more may follow). Reads at most ``size + 1`` bot ids and
        ``size`` bot hashes, whatever the number registered (``ZRANGE BYLEX`` on each game's bot index)."""
        size = max(1, size)
        games = [game] if game else sorted(self.client.smembers(GAMES_SET))
        if after is not None:
            games = [g for g in games if g >= after[0]]
        out: list[BotEntry] = []
        for g in games:
            self._bot_index(g)
            start = f"({after[1]}" if after is not None and after[0] == g else "-"
            need = size - len(out)
            ids = self.client.zrange(bot_index_key(g), start, "+", bylex=True, offset=0, num=need + 1)
            if need == 0:
                if ids:
                    return out, True
                continue
            pipe = self.client.pipeline(transaction=False)
            for b in ids[:need]:
                pipe.hgetall(bot_key(g, b))
            out.extend(self._bot(h) for h in pipe.execute() if h)
            if len(ids) > need:
                return out, True
        return out, False

    def _bot_index(self, game: str) -> None:
        """Make ``game``'s bot index hold exactly its bots set, when their sizes differ (bots registered by an
        arena that kept no index): one pass over the set, then nothing until they differ again."""
        index, members = bot_index_key(game), bots_key(game)
        if int(self.client.zcard(index)) == int(self.client.scard(members)):
            return
        ids = set(self.client.smembers(members))
        stale = set(self.client.zrange(index, 0, -1)) - ids
        pipe = self.client.pipeline(transaction=False)
        ordered = sorted(ids)
        for start in range(0, len(ordered), 1000):
            pipe.zadd(index, {b: 0 for b in ordered[start:start + 1000]})
        if stale:
            pipe.zrem(index, *stale)
        pipe.execute()
