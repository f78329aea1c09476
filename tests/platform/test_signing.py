"""Signed calls, the pure parts: the MAC covers exactly one call, a header parses only when well formed, a nonce is
fresh only when this arena issued it less than its lifetime ago."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from arena.core import signing
from arena.server.auth import CLOCK_SKEW_MS, Challenges

TOKEN = "an-owner-token-of-forty-three-characters-xx"


class _Keys:
    def __init__(self) -> None:
        self.key = bytes(range(32))

    def challenge_key(self) -> bytes:
        return self.key

    def use_nonce(self, nonce: str, ttl_ms: int) -> bool:  # pragma: no cover - not used here
        return True

    def owner_key_by_id(self, oid: str) -> str | None:  # pragma: no cover - not used here
        return None

    def arena_id(self) -> str:  # pragma: no cover - not used here
        return "a" * 32


def test_the_key_is_the_sha256_of_the_token_and_the_owner_id_reveals_neither() -> None:
    key = signing.token_hash(TOKEN)
    assert key == hashlib.sha256(TOKEN.encode()).hexdigest()
    oid = signing.owner_id(key)
    assert oid.startswith("o-") and len(oid) == 18 and oid[2:] not in key and oid[2:] not in TOKEN
    assert signing.key_id_of(TOKEN, admin=False) == oid and signing.key_id_of(TOKEN, admin=True) == "admin"


@given(method=st.sampled_from(["/arena.v1.Arena/UpdateBot", "/arena.v1.Arena/RemoveBot"]),
       arena=st.sampled_from(["a" * 32, "b" * 32]), nonce=st.sampled_from(["n1", "n2"]),
       request=st.binary(max_size=40), other=st.binary(max_size=40))
def test_a_signature_verifies_for_its_own_call_only(method: str, arena: str, nonce: str, request: bytes,
                                                    other: bytes) -> None:
    value = signing.sign(TOKEN, admin=False, method=method, arena_id=arena, nonce=nonce, request_bytes=request)
    sig = signing.parse(value)
    assert sig is not None and sig.key_id == signing.key_id_of(TOKEN, admin=False) and sig.nonce == nonce
    key = signing.token_hash(TOKEN)
    assert signing.verify(key, sig, method, arena, request)
    assert signing.verify(key, sig, method, arena, other) == (other == request)
    assert not signing.verify(key, sig, method + "x", arena, request)
    assert not signing.verify(key, sig, method, arena[::-1] + "c", request)
    assert not signing.verify(signing.token_hash(TOKEN + "!"), sig, method, arena, request)
    assert TOKEN not in value and key not in value


def test_only_well_formed_headers_parse() -> None:
    good = "v1 admin " + "n" * 10 + " " + "0" * 64
    assert signing.parse(good) is not None
    for bad in ("", "v1", "v2 admin n " + "0" * 64, "v1 root n " + "0" * 64, "v1 admin n " + "0" * 63,
                "v1 admin n  " + "0" * 64, "v1 o-123 n " + "0" * 64, "v1 admin " + "n" * 129 + " " + "0" * 64,
                "v1 admin n/x " + "0" * 64, "v1 admin n " + "G" * 64):
        assert signing.parse(bad) is None, bad


def test_a_nonce_is_fresh_only_when_issued_here_within_its_lifetime() -> None:
    challenges = Challenges(_Keys(), ttl_ms=60_000)
    now = 1_800_000_000_000
    nonce = challenges.issue(now_ms=now)
    assert len(nonce) <= signing.MAX_NONCE and signing.parse(f"v1 admin {nonce} " + "0" * 64) is not None
    assert challenges.fresh(nonce, now_ms=now) and challenges.fresh(nonce, now_ms=now + 60_000)
    assert not challenges.fresh(nonce, now_ms=now + 60_001)
    assert challenges.fresh(nonce, now_ms=now - CLOCK_SKEW_MS) and not challenges.fresh(nonce, now_ms=now - 10_000)
    stamp, rest = nonce.split(".", 1)
    assert not challenges.fresh(f"{int(stamp, 16) + 1:x}.{rest}", now_ms=now)  # a later stamp breaks the tag
    assert not challenges.fresh(nonce[:-1] + ("0" if nonce[-1] != "0" else "1"), now_ms=now)
    assert not challenges.fresh("garbage", now_ms=now) and not challenges.fresh("zz.x.y", now_ms=now)
    other = Challenges(_Keys(), ttl_ms=60_000)
    other._key = bytes(32)  # another arena's key
    assert not other.fresh(nonce, now_ms=now)
