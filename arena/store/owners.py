"""Owner accounts and the organiser's registration settings (DESIGN.md "Owners are accounts").

An owner is an identity with one token: the store keeps its key (``keys.token_hash`` of the token, SHA-256 hex),
never the token. The key is also what every bot name it holds stores (``keys.owner_key(game, name)``), so deal
plans, SPRT fields and the ladder group bots by owner with no second lookup. Its public id is ``keys.owner_id(key)``.

Registration settings live in the hash ``keys.REGISTRATION``: ``mode`` ("open": anyone may create an owner by
registering a bot; "closed": owners are created by the organiser only) and three quotas, 0 meaning no limit:
``max_names_per_owner`` (bot names one owner may hold, in every game together), ``max_owners_per_address`` (owners
that open registration may create from one client address per ``ADDRESS_WINDOW_S``, counted when one is created)
and ``max_names_total`` (bot names held in the whole arena). A name stays
held, and counted, when every version of it is removed: its owner keeps it.

A bot NAME belongs to one owner in every game and every letter case (``keys.NAME_OWNERS``, keyed by
``keys.name_owners_field``: NAME ASCII-lowercased -> owner key), so nobody can pass for the owner of "heuristic" as
"Heuristic": its owner may hold it in each game, and a reservation of NAME by another owner, in any game and any
spelling, is refused (``NameTakenError``) in the same atomic step as the quotas. Its owner keeps one spelling: a
reservation of another spelling of a NAME it holds is refused too (``NameSpellingError``). Names that older data holds
for two owners (in two games, or in two spellings) stay as they are, each registered where it was; no new such pair
is made. Fields of older data keyed by a spelling with capitals are still found, and ``migrate_owners`` moves them to
their lowercased field.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from arena.core.specs import bot_id, name_skeleton
from arena.store.base import OwnershipError, RedisClient, StoreBase
from arena.store.keys import (
    GAMES_SET,
    NAME_OWNERS,
    OWNED_NAMES,
    OWNER_IDS,
    OWNER_INDEX,
    REGISTRATION,
    account_key,
    address_key,
    name_owners_field,
    owner_bots_key,
    owner_id,
    owner_key,
    owner_names_key,
    removed_owners_key,
    versions_key,
)
from arena.store.owner_scripts import OWNER_ADD_NAME, OWNER_CREATE, OWNER_FOLD_NAME, OWNER_RELEASE_NAME
from arena_sdk.games import GAMES

MODES = ("open", "closed")
REMOVED_OWNER = "removed-owner"  # the holder of a removed owner's names that have stored matches (no owner's key)
ADDRESS_WINDOW_S = 3600  # the window of max_owners_per_address, seconds
QUOTA_FIELDS = ("max_names_per_owner", "max_owners_per_address", "max_names_total")


@dataclass(frozen=True)
class Registration:
    """The organiser's registration settings: mode ("open" | "closed") and the quotas (0 = no limit):
    max_names_per_owner (bot names per owner), max_owners_per_address (new owners by registration per client host
    and ``ADDRESS_WINDOW_S``), max_names_total (bot names in the arena).

    Defaults, for open registration: 20 names per owner (a person's bots, each with any number of versions),
    50 new owners per address and hour (a classroom or a company behind one NAT registering at once; a flood from
    one host is held to 1,000 names an hour), 10,000 names in all (far more than any tournament, at most 128 bots,
    needs; a few MB of Redis)."""

    mode: str = "open"
    max_names_per_owner: int = 20
    max_owners_per_address: int = 50
    max_names_total: int = 10_000


DEFAULT_REGISTRATION = Registration()


@dataclass(frozen=True)
class OwnerAccount:
    """One owner: key (``token_hash`` of its token; never shown), id (public), label ("" for none), created_at (s
    since epoch), created_by ("registration" | "organiser" | "migration"), names (sorted (game, NAME) pairs)."""

    key: str
    id: str
    label: str
    created_at: float
    created_by: str
    names: tuple[tuple[str, str], ...]


class QuotaError(ValueError):
    """A registration over a quota: ``quota`` names the setting (a ``QUOTA_FIELDS`` entry), ``limit`` its value."""

    def __init__(self, quota: str, limit: int) -> None:
        super().__init__(f"{quota} = {limit} reached")
        self.quota = quota
        self.limit = limit


class UnknownOwnerError(KeyError):
    """An owner key that is no owner of this arena."""


class NameTakenError(OwnershipError):
    """A bot NAME that another owner holds (in this game or another, in this spelling or another: a NAME belongs to
    one owner in every game and every letter case). ``held``: the spelling that owner holds it in ("" unknown)."""

    def __init__(self, name: str, held: str = "") -> None:
        as_held = f" as {held!r}" if held and held != name else ""
        super().__init__(f"bot name {name!r} belongs to another owner{as_held}")
        self.name = name
        self.held = held


class NameLookAlikeError(OwnershipError):
    """A new bot NAME that reads as another owner's (``arena.core.specs.name_skeleton``: "heuristic." for
    "heuristic", "rnontecarlo" for "montecarlo"); ``held``: that owner's spelling."""

    def __init__(self, name: str, held: str) -> None:
        super().__init__(f"bot name {name!r} reads as {held!r}, another owner's")
        self.name = name
        self.held = held


class NameSpellingError(OwnershipError):
    """A bot NAME whose owner holds it in another letter case only: ``held`` is that spelling, the one it may
    register (names that differ only in letter case are one NAME)."""

    def __init__(self, name: str, held: str) -> None:
        super().__init__(f"bot name {name!r} is held by its owner as {held!r}: names that differ only in letter case "
                         f"are one NAME, so register it as {held!r}")
        self.name = name
        self.held = held


def _member(game: str, name: str) -> str:
    return f"{game}/{name}"


def _spellings(members: Sequence[str] | set[str], name: str) -> list[str]:
    """Of an owner's "GAME/NAME" members, the spellings of ``name`` it holds (any letter case), sorted, ``name``
    itself first when held."""
    field = name_owners_field(name)
    found = {n for n in (m.partition("/")[2] for m in members) if name_owners_field(n) == field}
    return sorted(found, key=lambda n: (n != name, n))


def public_id(key: str | None) -> str:
    """``owner_id(key)``, or "" for no key or one that is not a SHA-256 hex digest (a name stored without a real
    owner key, e.g. by tests)."""
    try:
        return owner_id(key) if key else ""
    except ValueError:
        return ""


class OwnerStore(StoreBase):
    """Owner accounts, the names they hold, and the registration settings."""

    def _bind(self, client: RedisClient) -> None:
        super()._bind(client)
        self._owner_add_name = client.register_script(OWNER_ADD_NAME)
        self._owner_create = client.register_script(OWNER_CREATE)
        self._owner_release_name = client.register_script(OWNER_RELEASE_NAME)
        self._owner_fold_name = client.register_script(OWNER_FOLD_NAME)

    # -- settings ---------------------------------------------------------------------------------------------

    def registration(self) -> Registration:
        """The registration settings; a field never set has its ``DEFAULT_REGISTRATION`` value."""
        h = self.client.hgetall(REGISTRATION)
        quotas = {f: int(h[f]) if str(h.get(f, "")).isdigit() else getattr(DEFAULT_REGISTRATION, f)
                  for f in QUOTA_FIELDS}
        return Registration(mode="closed" if h.get("mode") == "closed" else "open", **quotas)

    def set_registration(self, mode: str | None = None, **quotas: int | None) -> Registration:
        """Change the mode ("open" | "closed"; None keeps it) and any of ``QUOTA_FIELDS`` (a whole number >= 0;
        None keeps it). Raises ``ValueError`` for another mode, field or value. Returns the new settings."""
        fields: dict[str, str] = {}
        if mode is not None:
            if mode not in MODES:
                raise ValueError(f"unknown registration mode {mode!r}; choose open or closed")
            fields["mode"] = mode
        for name, value in quotas.items():
            if name not in QUOTA_FIELDS:
                raise ValueError(f"unknown quota {name!r}; choose one of {', '.join(QUOTA_FIELDS)}")
            if value is not None:
                if value < 0:
                    raise ValueError(f"{name} must be 0 (no limit) or more, got {value}")
                fields[name] = str(int(value))
        if fields:
            self.client.hset(REGISTRATION, mapping=fields)
        return self.registration()

    def names_total(self) -> int:
        """Bot names held by owners in the whole arena (every game)."""
        return int(self.client.scard(OWNED_NAMES))

    # -- accounts ---------------------------------------------------------------------------------------------

    def owner_exists(self, key: str) -> bool:
        return bool(self.client.exists(account_key(key)))

    def owner_key_of_id(self, oid: str) -> str | None:
        """The key of the owner whose public id is ``oid``, or None."""
        key: str | None = self.client.hget(OWNER_IDS, oid)
        return key

    def get_owner(self, key: str) -> OwnerAccount | None:
        """The owner whose key is ``key``, or None."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(account_key(key))
        pipe.smembers(owner_names_key(key))
        h, members = pipe.execute()
        if not h:
            return None
        names = tuple(sorted(tuple(m.split("/", 1)) for m in members if "/" in m))
        return OwnerAccount(key=key, id=h.get("id") or owner_id(key), label=h.get("label", ""),
                            created_at=float(h.get("created_at") or 0.0), created_by=h.get("created_by", ""),
                            names=names)

    def list_owners(self, after: str = "", limit: int = 100) -> tuple[list[OwnerAccount], str]:
        """Up to ``limit`` owners in id order, those after id ``after`` ("" from the first), and the id to pass as
        ``after`` for the next page ("" when this page is the last)."""
        start = f"({after}" if after else "-"
        ids = list(self.client.zrangebylex(OWNER_INDEX, start, "+", start=0, num=limit + 1))
        more = len(ids) > limit
        ids = ids[:limit]
        keys = self.client.hmget(OWNER_IDS, ids) if ids else []
        owners = [o for o in (self.get_owner(k) for k in keys if k) if o is not None]
        return owners, (ids[-1] if more and ids else "")

    def create_owner(self, key: str, *, label: str = "", created_by: str = "organiser", first: tuple[str, str] | None
                     = None, address: str = "", registration: Registration | None = None,
                     now: float | None = None, exclusive: bool = True) -> bool:
        """Create the owner whose key is ``key`` (holding the bot name ``first`` = (game, NAME), if given). With
        ``registration``, its ``max_names_total`` applies to ``first`` and its ``max_owners_per_address`` to
        ``address`` (a client host; "" counts nothing); without, no quota applies. ``exclusive`` (the default):
        a NAME another owner holds, in any game, is refused; False records ``first`` whoever holds its NAME
        (adopting stored names). Returns False when the owner exists already (nothing changed). Raises
        ``QuotaError`` or ``NameTakenError`` (nothing changed)."""
        reg = registration or Registration(max_names_per_owner=0, max_owners_per_address=0, max_names_total=0)
        per_address = reg.max_owners_per_address if address else 0
        reply = int(self._owner_create(
            keys=[account_key(key), owner_names_key(key), OWNED_NAMES, OWNER_INDEX, address_key(address or "-"),
                  NAME_OWNERS],
            args=[key, owner_id(key), label, repr(float(time.time() if now is None else now)), created_by,
                  _member(*first) if first else "", reg.max_names_total, per_address, ADDRESS_WINDOW_S,
                  first[1] if first else "", "1" if exclusive else "0", name_owners_field(first[1]) if first else ""]))
        if reply == -6 and first:
            raise NameTakenError(first[1], self.held_spelling(first[1]))
        if reply == -3:
            raise QuotaError("max_names_total", reg.max_names_total)
        if reply == -4:
            raise QuotaError("max_owners_per_address", reg.max_owners_per_address)
        if reply == 1:
            self.client.hsetnx(OWNER_IDS, owner_id(key), key)  # the id index signed owner calls use too
        return reply == 1

    def check_new_name(self, key: str | None, game: str, name: str, address: str, registration: Registration) -> None:
        """Whether bot NAME ``name`` of ``game`` could be registered now, for the owner whose key is ``key`` or, with
        ``key`` None, for a new owner created from client ``address``, under ``registration``'s quotas: reads only
        (the registration itself checks again, atomically). Raises ``UnknownOwnerError``, ``NameTakenError`` (NAME
        is another owner's, in this game or another, in this letter case or another), ``NameSpellingError`` (the
        owner holds NAME in another letter case) or ``QuotaError``."""
        reg = registration
        pipe = self.client.pipeline(transaction=False)
        pipe.exists(account_key(key or "-"))
        pipe.scard(owner_names_key(key or "-"))
        pipe.sismember(owner_names_key(key or "-"), _member(game, name))
        pipe.scard(OWNED_NAMES)
        pipe.sismember(OWNED_NAMES, _member(game, name))
        pipe.get(address_key(address or "-"))
        pipe.hmget(NAME_OWNERS, [name_owners_field(name), name])  # the lowercased field, or one of older data
        pipe.smembers(owner_names_key(key or "-"))
        exists, held, holds_it, total, taken, created, holders, members = pipe.execute()
        holder = holders[0] or (holders[1] if name != name_owners_field(name) else None)
        if key and not exists:
            raise UnknownOwnerError(owner_id(key))
        if holder and holder != key:
            raise NameTakenError(name, self.held_spelling(name))
        if key and holds_it:
            return
        if not holder:
            self._check_look_alike(key, name)
        spellings = _spellings(members, name) if key else []
        if spellings and spellings[0] != name:
            raise NameSpellingError(name, spellings[0])
        if key and reg.max_names_per_owner and held >= reg.max_names_per_owner:
            raise QuotaError("max_names_per_owner", reg.max_names_per_owner)
        if reg.max_names_total and not taken and total >= reg.max_names_total:
            raise QuotaError("max_names_total", reg.max_names_total)
        if not key and address and reg.max_owners_per_address and int(created or 0) >= reg.max_owners_per_address:
            raise QuotaError("max_owners_per_address", reg.max_owners_per_address)

    def _check_look_alike(self, key: str | None, name: str) -> None:
        """Raise ``NameLookAlikeError`` when a NAME another owner holds reads as ``name`` (``name_skeleton``). Reads
        every NAME's owner once (a registration of a new NAME, at most ``max_names_total`` of them)."""
        wanted, folded = name_skeleton(name), name_owners_field(name)
        for field, holder in self.client.hscan_iter(NAME_OWNERS, count=1000):
            if holder != key and name_skeleton(field) == wanted:
                if field == folded or field == name:  # the NAME itself, taken meanwhile (a racing registration)
                    raise NameTakenError(name, self.held_spelling(name))
                raise NameLookAlikeError(name, self.held_spelling(field) or field)

    def add_owner_name(self, key: str, game: str, name: str, registration: Registration | None = None, *,
                       exclusive: bool = True) -> bool:
        """Let the owner whose key is ``key`` hold bot NAME ``name`` of ``game``, under ``registration``'s
        per-owner and arena quotas (None: none). ``exclusive`` (the default): a NAME another owner holds, in any
        game and any letter case, is refused, and so is another spelling of a NAME this owner holds; False records
        it whoever holds NAME (adopting stored names). Returns True when added now, False when held already. Raises
        ``UnknownOwnerError`` (no such owner), ``NameTakenError``, ``NameSpellingError`` or ``QuotaError``
        (nothing changed)."""
        reg = registration or Registration(max_names_per_owner=0, max_owners_per_address=0, max_names_total=0)
        reply = int(self._owner_add_name(keys=[account_key(key), owner_names_key(key), OWNED_NAMES, NAME_OWNERS],
                                         args=[_member(game, name), reg.max_names_per_owner, reg.max_names_total,
                                               name, key, "1" if exclusive else "0", name_owners_field(name)]))
        if reply == -6:
            raise NameTakenError(name, self.held_spelling(name))
        if reply == -7:
            raise NameSpellingError(name, self.held_spelling(name, key) or name)
        if reply == -1:
            raise UnknownOwnerError(owner_id(key))
        if reply == -2:
            raise QuotaError("max_names_per_owner", reg.max_names_per_owner)
        if reply == -3:
            raise QuotaError("max_names_total", reg.max_names_total)
        return reply == 1

    def release_owner_name(self, key: str, game: str, name: str) -> None:
        """Undo ``add_owner_name`` of a name that was not registered after all (its bot check failed, or another
        owner claimed it first); the arena's count keeps a name that some owner holds, and NAME stays this owner's
        in every game while it holds NAME in another game. Releasing NAME frees it in every letter case."""
        self._owner_release_name(keys=[owner_names_key(key), NAME_OWNERS],
                                 args=[_member(game, name), name, key, name_owners_field(name)])
        self._release_unclaimed([(game, name)])

    def _release_unclaimed(self, names: Sequence[tuple[str, str]]) -> None:
        """Drop from the arena's names those of ``names`` that no owner claimed (``keys.owner_key`` unset)."""
        pipe = self.client.pipeline(transaction=False)
        for game, name in names:
            pipe.exists(owner_key(game, name))
        unclaimed = [_member(g, n) for (g, n), held in zip(names, pipe.execute() if names else []) if not held]
        if unclaimed:
            self.client.srem(OWNED_NAMES, *unclaimed)

    def drop_owner(self, key: str) -> None:
        """Delete the owner whose key is ``key`` and release its names: only for an owner created by a registration
        that failed before its token was returned (nobody holds that token)."""
        members = self.client.smembers(owner_names_key(key))
        for member in members:
            name = member.partition("/")[2]
            self._owner_release_name(keys=[owner_names_key(key), NAME_OWNERS],
                                     args=[member, name, key, name_owners_field(name)])
        self._release_unclaimed([tuple(m.split("/", 1)) for m in members if "/" in m])
        self.drop_account(key)

    def owner_removed(self, key: str) -> bool:
        """Whether the organiser removed the owner whose key is ``key`` (``Store.remove_owner``): its token is then
        nobody's, for good."""
        games = sorted(self.client.smembers(GAMES_SET) | set(GAMES))
        pipe = self.client.pipeline(transaction=False)
        for game in games:
            pipe.sismember(removed_owners_key(game), key)
        return any(pipe.execute())

    def hold_removed_name(self, game: str, name: str) -> None:
        """Keep bot NAME ``name`` of ``game`` held by ``REMOVED_OWNER``, a value that is no owner's key: no token
        registers NAME (in any game or spelling) and no ``adopt_owner`` makes an account of it."""
        pipe = self.client.pipeline(transaction=False)
        pipe.set(owner_key(game, name), REMOVED_OWNER)
        pipe.hset(NAME_OWNERS, name_owners_field(name), REMOVED_OWNER)
        pipe.execute()

    def drop_account(self, key: str) -> None:
        """Delete the account of the owner whose key is ``key`` (its token is then no owner's); the names it still
        holds stay held by that key."""
        pipe = self.client.pipeline(transaction=False)
        pipe.delete(account_key(key))  # one key per DEL: a cluster pipeline refuses a DEL of several keys
        pipe.delete(owner_names_key(key))
        pipe.hdel(OWNER_IDS, owner_id(key))
        pipe.zrem(OWNER_INDEX, owner_id(key))
        pipe.execute()

    def adopt_owner(self, key: str, game: str, name: str) -> bool:
        """Make sure bot NAME ``name`` of ``game``, whose stored owner key is ``key``, belongs to an owner account
        (a name registered when an owner was a per-name token becomes an owner the first time it is seen).
        Idempotent; no quota applies, and NAME is recorded as this owner's in every game unless another owner
        holds it already (older data may hold one NAME for two owners in two games: both keep theirs). Returns True
        when something was added (False also for a stored value that is no owner key, e.g. written by a test)."""
        if not public_id(key) or self.owner_removed(key):  # a removed owner stays removed, also at a start
            return False
        if self.create_owner(key, created_by="migration", first=(game, name), exclusive=False):
            return True
        return self.add_owner_name(key, game, name, exclusive=False)

    def migrate_owners(self) -> int:
        """``adopt_owner`` for every stored bot name (``keys.owner_key``, found with SCAN), which also files each
        NAME's owner in ``keys.NAME_OWNERS`` (names stored before a NAME was one owner's in every game); returns how
        many names were added to an owner now (0 the second time). First, fields of ``keys.NAME_OWNERS`` that older
        data keyed by a spelling with capitals move to their lowercased field (``name_owners_field``; when two
        spellings of one NAME had two fields, the one found first, or the lowercase one, keeps it). Each NAME's
        registered versions are also counted for its owner (``keys.owner_bots_key``: versions registered before an
        owner's versions were counted)."""
        older = [f for f, _holder in self.client.hscan_iter(NAME_OWNERS, count=500) if f != name_owners_field(f)]
        for field in older:
            self._owner_fold_name(keys=[NAME_OWNERS], args=[name_owners_field(field), field])
        added = 0
        held: list[tuple[str, str, str]] = []  # (game, NAME, owner key) of every NAME held
        for k in self.client.scan_iter(match="arena:{*}:owner:*", count=500):
            game, _, name = k[len("arena:{"):].partition("}:owner:")
            stored = self.client.get(k)
            if game and name and stored:
                added += int(self.adopt_owner(str(stored), game, name))
                held.append((game, name, str(stored)))
        for start in range(0, len(held), 500):  # their versions, counted for their owners: two round trips a chunk
            chunk = held[start:start + 500]
            reads = self.client.pipeline(transaction=False)
            for game, name, _key in chunk:
                reads.zrange(versions_key(game, name), 0, -1)
            writes = self.client.pipeline(transaction=False)
            for (game, name, key), versions in zip(chunk, reads.execute(), strict=True):
                if versions:
                    writes.sadd(owner_bots_key(game, key), *(bot_id(name, v) for v in versions))
            writes.execute()
        return added

    def name_owner(self, name: str) -> str | None:
        """The key of the owner that holds bot NAME ``name`` (in every game and every letter case;
        ``keys.NAME_OWNERS``), or None."""
        field = name_owners_field(name)
        holder, older = self.client.hmget(NAME_OWNERS, [field, name])
        found: str | None = holder or (older if name != field else None)
        return found

    def held_spelling(self, name: str, key: str | None = None) -> str:
        """The spelling in which the owner whose key is ``key`` (None: the owner that holds bot NAME ``name``)
        holds NAME: ``name`` itself when held so, else another letter case of it; "" when that owner holds no
        spelling of NAME (or nobody holds NAME)."""
        key = key or self.name_owner(name)
        spellings = _spellings(self.client.smembers(owner_names_key(key)), name) if key else []
        return spellings[0] if spellings else ""

    def owner_ids_of(self, names: Sequence[tuple[str, str]]) -> list[str]:
        """The public owner id of each (game, NAME) ("" for a name nobody owns), in one round trip."""
        if not names:
            return []
        pipe = self.client.pipeline(transaction=False)
        for game, name in names:
            pipe.get(owner_key(game, name))
        return [public_id(k) for k in pipe.execute()]
