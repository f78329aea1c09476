"""The sealed fields' scheme (``arena.core.sealing``), pure: what one side seals the other opens, for that field
and that call only; anything else is a ``SealError``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.core import sealing


@given(st.text(min_size=0, max_size=256).filter(lambda t: len(t.encode()) <= 256))
def test_what_the_client_seals_the_arena_opens_and_back(text: str) -> None:
    arena = sealing.new_private_key()
    client = sealing.ClientSeal(sealing.public_key(arena))
    key = sealing.arena_call_key(arena, client.public)
    assert sealing.unseal(key, sealing.BOT_SECRET, client.seal(sealing.BOT_SECRET, text)) == text
    assert client.unseal(sealing.OWNER_TOKEN, sealing.seal(key, sealing.OWNER_TOKEN, text)) == text


def test_a_sealed_field_opens_for_its_field_and_call_only() -> None:
    arena = sealing.new_private_key()
    client, other = sealing.ClientSeal(sealing.public_key(arena)), sealing.ClientSeal(sealing.public_key(arena))
    key = sealing.arena_call_key(arena, client.public)
    box = client.seal(sealing.BOT_SECRET, "secret-0123456789")
    assert box != client.seal(sealing.BOT_SECRET, "secret-0123456789")  # a fresh nonce each time
    for bad_key, field, sealed in ((key, sealing.OWNER_TOKEN, box),  # another field
                                   (sealing.arena_call_key(arena, other.public), sealing.BOT_SECRET, box),
                                   (key, sealing.BOT_SECRET, box[:-1] + bytes([box[-1] ^ 1])),  # changed
                                   (key, sealing.BOT_SECRET, box[:20])):  # cut
        with pytest.raises(sealing.SealError):
            sealing.unseal(bad_key, field, sealed)
    with pytest.raises(sealing.SealError, match="32 bytes, got 31"):
        sealing.arena_call_key(arena, client.public[:31])
    with pytest.raises(sealing.SealError, match="no shared secret"):
        sealing.arena_call_key(arena, bytes(32))  # a low-order point
    with pytest.raises(sealing.SealError, match="is 28..284 bytes"):
        sealing.unseal(key, sealing.BOT_SECRET, bytes(300))


def test_kept_drops_the_least_recently_used_beyond_its_weight() -> None:
    """``arena.core.kept.Kept`` (the referee's kept answers: GetMatch records, Swiss standings)."""
    from arena.core.kept import Kept

    kept: Kept[str, str] = Kept(10, len)
    kept.put("a", "aaaa")
    kept.put("b", "bbbb")
    assert kept.get("a") == "aaaa"  # now the most recently used
    kept.put("c", "cccc")  # 12 > 10: "b" goes
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == ("aaaa", None, "cccc")
    kept.put("huge", "x" * 11)  # heavier than the whole: not kept, nothing dropped
    assert kept.get("huge") is None and kept.get("a") == "aaaa"
    kept.put("a", "a")  # replaced: its old weight given back
    kept.put("d", "dddd")
    assert (kept.get("a"), kept.get("c"), kept.get("d")) == ("a", "cccc", "dddd")
