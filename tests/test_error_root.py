"""One root for the platform's own errors: every error class of core, ratings, store and match derives from
``arena.core.errors.ArenaError`` and keeps the built-in base that callers already catch."""

import pytest

from arena.core.errors import ArenaError, TournamentError
from arena.match.record import MatchRecord, RecordError
from arena.ratings.design import FitError
from arena.ratings.fit import fit_ratings
from arena.ratings.sprt import SprtError
from arena.store.base import OwnershipError, StoreError
from arena.store.codec import RecordCodecError, unpack_record
from arena.store.redis_server import RedisStartError

ROOTED = [
    (TournamentError, ValueError),
    (RecordError, ValueError),
    (RecordCodecError, ValueError),
    (FitError, ValueError),
    (SprtError, ValueError),
    (StoreError, RuntimeError),
    (OwnershipError, RuntimeError),
    (RedisStartError, RuntimeError),
]


@pytest.mark.parametrize(("error", "builtin"), ROOTED, ids=[e.__name__ for e, _ in ROOTED])
def test_every_platform_error_is_an_arena_error_and_keeps_its_builtin_base(error: type, builtin: type) -> None:
    assert issubclass(error, ArenaError)
    assert issubclass(error, builtin)


def test_a_raised_platform_error_is_caught_as_arena_error() -> None:
    with pytest.raises(ArenaError, match="match record must be a JSON object"):
        MatchRecord.from_dict([])  # type: ignore[arg-type]
    with pytest.raises(ArenaError):
        fit_ratings([])
    with pytest.raises(ArenaError):
        unpack_record("neither packed nor JSON")
