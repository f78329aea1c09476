"""What signed calls and sealed fields need from Redis (``arena.core.signing``, ``arena.core.sealing``): the key of
the challenge nonces, the nonces already used, the owner keys by owner id, and the arena's sealing key."""

from __future__ import annotations

import hashlib
import re
import secrets

from arena.core.sealing import new_private_key
from arena.store.base import StoreBase
from arena.store.keys import (
    CHALLENGE_KEY,
    GAMES_SET,
    OWNER_IDS,
    SEAL_KEY,
    bots_key,
    client_seal_key_key,
    name_of,
    nonce_key,
    owner_id,
    owner_key,
)

HEX_KEY = re.compile(r"^[0-9a-f]{64}\Z")  # an owner key: token_hash, SHA-256 hex
CLIENT_SEAL_KEY_TTL_S = 90 * 24 * 3600  # a used client seal key is refused for this long (a fresh one per call)


class CredentialStore(StoreBase):
    """Challenge key, used nonces, the owner-id index and the sealing key."""

    def challenge_key(self) -> bytes:
        """The arena's key for GetChallenge nonces (32 random bytes chosen by the first caller, SET NX, kept in
        Redis so that every referee of the arena and every restart agree)."""
        self.client.set(CHALLENGE_KEY, secrets.token_hex(32), nx=True)
        return bytes.fromhex(str(self.client.get(CHALLENGE_KEY)))

    def seal_key(self) -> bytes:
        """The arena's X25519 private key of the sealed fields (``arena.core.sealing``): made by the first caller
        (SET NX) and kept in Redis, so every referee of the arena and every restart present one public key, which
        clients pin. Read first, so that once it exists asking it writes nothing (GetArenaInfo, and the web pages
        behind it, answer while Redis refuses writes, its disk full)."""
        kept = self.client.get(SEAL_KEY)
        if kept:
            return bytes.fromhex(str(kept))
        self.client.set(SEAL_KEY, new_private_key().hex(), nx=True)
        return bytes.fromhex(str(self.client.get(SEAL_KEY)))

    def use_client_seal_key(self, public: bytes) -> bool:
        """Mark the client seal key ``public`` of a call used (SET NX, kept ``CLIENT_SEAL_KEY_TTL_S``); True when no
        call used it before, so a sealed field captured from one call opens in no other. Called only by a call
        about to be served: a refused one stores nothing (``client_seal_key_used`` reads without writing)."""
        digest = hashlib.sha256(public).hexdigest()
        return bool(self.client.set(client_seal_key_key(digest), "1", nx=True, ex=CLIENT_SEAL_KEY_TTL_S))

    def client_seal_key_used(self, public: bytes) -> bool:
        """Whether a served call used the client seal key ``public`` (``use_client_seal_key``); writes nothing."""
        return bool(self.client.exists(client_seal_key_key(hashlib.sha256(public).hexdigest())))

    def use_nonce(self, nonce: str, ttl_ms: int) -> bool:
        """Mark ``nonce`` used for ``ttl_ms`` milliseconds; True when it was not used before (SET NX PX)."""
        return bool(self.client.set(nonce_key(nonce), "1", nx=True, px=max(1, ttl_ms)))

    def index_owner(self, key: str) -> str:
        """File the owner key ``key`` under its owner id (idempotent); returns the id."""
        oid = owner_id(key)
        self.client.hsetnx(OWNER_IDS, oid, key)
        return oid

    def owner_key_by_id(self, oid: str) -> str | None:
        """The owner key filed under owner id ``oid``, or None for an unknown owner."""
        value = self.client.hget(OWNER_IDS, oid)
        return str(value) if value else None

    def index_owners(self) -> int:
        """File the key of every owned bot NAME under its owner id (names registered before the index existed);
        idempotent. Returns how many keys it read."""
        pipe = self.client.pipeline(transaction=False)
        names: list[tuple[str, str]] = []
        for game in sorted(self.client.smembers(GAMES_SET)):
            for name in sorted({name_of(b) for b in self.client.smembers(bots_key(game))}):
                names.append((game, name))
                pipe.get(owner_key(game, name))
        found = [k for k in (pipe.execute() if names else []) if k]
        for key in set(found):
            if HEX_KEY.match(str(key)):  # not the placeholder of a removed owner's kept names, nor a test's value
                self.index_owner(str(key))
        return len(found)
