"""Batch fits as the ratings cache keeps them (``CachedFit``) and the process that computes the large ones
(``arena.ladder.cache``; the math is ``arena.ratings.ladder``).

A fit of many results takes minutes of CPU, so ``elsewhere`` runs it (``refit``: the compact copy of the results
read so far, extended and fitted; ``fit_document``: a fit of given matches) in a child process
(``python -m arena.ladder.fits``), the call and its result pickled through its stdin and stdout: the arena
process's GIL stays free for its gRPC threads and the referee's deadlines, any main module works, and the child
ends with the call or as soon as its parent is gone.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.core.orphans import exit_with_parent
from arena.ratings.design import RatedMatch
from arena.ratings.ladder import RatedLine, fit_groups, fit_lines


@dataclass(frozen=True)
class FitLine(RatedLine):
    """One line of a cached fit: a ``RatedLine`` (bot id; rating, margin, low, high in Elo points, margin finite or
    None; los_next over the next line of the fit's own order within the group, None on a group's last line; group,
    1 = the group with the most bots; too_few_matches) and ``matches``, the bot's matches in the fit."""

    matches: int = 0


FIELDS = ("bot", "rating", "margin", "low", "high", "los_next", "matches", "group", "too_few_matches")  # JSON row


@dataclass(frozen=True)
class CachedFit:
    """A batch fit as cached: results (stored results it counts), computed_at (s since epoch), seconds (wall time
    of the fit), cpu_seconds (CPU time of the process that fitted), replicates, deal_sd (Elo points, the fit of
    group 1), lines (group by group, best rating first in each), los (pair "a|b" with a < b -> LOS of a over b,
    every pair of one group; tournament fits only), groups (connected groups of the fit's bots)."""

    results: int
    computed_at: float
    seconds: float
    replicates: int
    deal_sd: float
    lines: tuple[FitLine, ...]
    los: dict[str, float]
    cpu_seconds: float = 0.0
    groups: int = 1

    def los_of(self, a: str, b: str) -> float | None:
        """LOS of ``a`` over ``b`` (0..1) when the fit has it for that pair (two bots of one group), else None."""
        if a == b:
            return None
        if a < b:
            return self.los.get(f"{a}|{b}")
        p = self.los.get(f"{b}|{a}")
        return None if p is None else 1.0 - p

    def to_json(self) -> str:
        return json.dumps({"results": self.results, "computed_at": self.computed_at, "seconds": self.seconds,
                           "cpu_seconds": self.cpu_seconds, "groups": self.groups,
                           "replicates": self.replicates, "deal_sd": self.deal_sd, "los": self.los,
                           "fields": list(FIELDS), "lines": [[getattr(x, f) for f in FIELDS] for x in self.lines]})

    @classmethod
    def from_json(cls, raw: str) -> CachedFit:
        """Inverse of ``to_json``. Raises ``ValueError`` (or ``KeyError``, ``TypeError``) for a malformed document
        and for one cached with other line fields (an older arena's, fitted without groups): it is fitted again."""
        d = json.loads(raw)
        if d.get("fields") != list(FIELDS):
            raise ValueError(f"cached fit lines hold {d.get('fields')}, not {list(FIELDS)}")
        return cls(results=int(d["results"]), computed_at=float(d["computed_at"]), seconds=float(d["seconds"]),
                   replicates=int(d["replicates"]), deal_sd=float(d["deal_sd"]), los=dict(d.get("los", {})),
                   cpu_seconds=float(d.get("cpu_seconds", 0.0)), groups=int(d["groups"]),
                   lines=tuple(FitLine(**dict(zip(FIELDS, row))) for row in d["lines"]))


def encode_matches(bots: list[str], rows: list[list[Any]]) -> bytes:
    """The compact copy of the results read so far: ``b"<count>\\n"`` then zlib'd JSON {"bots", "rows"}, a row being
    [deal or None, match id when there is no deal, [bot indexes in seat order], [ranks]]."""
    body = zlib.compress(json.dumps({"bots": bots, "rows": rows}).encode(), 1)
    return f"{len(rows)}\n".encode() + body


def matches_count(blob: bytes | None) -> int:
    """Results in a compact copy (its header only; 0 for None or a malformed copy)."""
    if not blob:
        return 0
    head = blob.split(b"\n", 1)[0]
    return int(head) if head.isdigit() else 0


def decode_matches(blob: bytes | None) -> tuple[list[str], list[list[Any]]]:
    """Inverse of ``encode_matches`` (([], []) for None). Raises ``ValueError`` for a malformed copy."""
    if not blob:
        return [], []
    try:
        data = json.loads(zlib.decompress(blob.split(b"\n", 1)[1]))
        return list(data["bots"]), list(data["rows"])
    except (IndexError, KeyError, TypeError, zlib.error) as exc:
        raise ValueError(f"malformed compact matches: {exc}") from exc


def refit(blob: bytes | None, new: list[RatedMatch], seed: int, fit: bool) -> tuple[bytes, CachedFit | None]:
    """Extend the compact copy ``blob`` with the results ``new`` (log order) and, when ``fit``, fit them all.
    Returns the new copy and the ``CachedFit`` (None when not asked). Raises ``ValueError`` for a malformed copy,
    ``FitError`` for a bad match."""
    bots, rows = decode_matches(blob)
    index = {b: i for i, b in enumerate(bots)}
    for m in new:
        for b in m.bots:
            if b not in index:
                index[b] = len(bots)
                bots.append(b)
        rows.append([m.deal, m.match_id if m.deal is None else None, [index[b] for b in m.bots], list(m.ranks)])
    out = encode_matches(bots, rows)
    if not fit or not rows:
        return out, None
    matches = [RatedMatch(tuple(bots[i] for i in seats), tuple(ranks), deal, None, mid)
               for deal, mid, seats, ranks in rows]
    return out, fit_document(matches, len(rows), seed, False)


CHILD_CALLS = ("fit_document", "refit")  # what ``elsewhere`` may run


def elsewhere(name: str, *args: Any) -> Any:
    """``name(*args)`` (one of ``CHILD_CALLS``) in a child process of its own (``python -m arena.ladder.fits``, the
    call pickled through its stdin and stdout): a fit of many results takes minutes of CPU (and decoding the compact
    copy of 100,000 results holds the interpreter for a second), which would otherwise hold this process's GIL
    against its gRPC threads and the referee's deadlines. The child ends with the call, or as soon as this process
    is gone (it watches its parent). Raises ``RuntimeError`` when the child fails (its stderr's last line)."""
    if name not in CHILD_CALLS:
        raise ValueError(f"{name!r} is not run in a child; choose one of {', '.join(CHILD_CALLS)}")
    payload = pickle.dumps((name, args))
    done = subprocess.run([sys.executable, "-m", "arena.ladder.fits"], input=payload, capture_output=True,
                          check=False)
    if done.returncode != 0:
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"the fit process exited with {done.returncode}: {last}")
    return pickle.loads(done.stdout)


def fit_elsewhere(matches: Sequence[RatedMatch], count: int, seed: int, all_pairs: bool) -> CachedFit:
    """``fit_document`` run by ``elsewhere``."""
    doc: CachedFit = elsewhere("fit_document", list(matches), count, seed, all_pairs)
    return doc


def _fit_child() -> None:
    """The child of ``elsewhere``: read the pickled call, run it, write its pickled result; exit at once when the
    parent goes away."""
    exit_with_parent()
    name, args = pickle.loads(sys.stdin.buffer.read())
    if name not in CHILD_CALLS:
        raise SystemExit(f"not a child call: {name!r}")
    sys.stdout.buffer.write(pickle.dumps(globals()[name](*args)))
    sys.stdout.buffer.flush()


def fit_document(matches: Sequence[RatedMatch], count: int, seed: int, all_pairs: bool) -> CachedFit:
    """``fit_groups`` over ``matches`` (one fit per connected group) as a ``CachedFit`` counting ``count`` results;
    ``all_pairs``: with the LOS of every pair of one group (tournament fits). Raises ``FitError`` (no match, a bad
    match)."""
    start, cpu = time.perf_counter(), time.process_time()
    fits = fit_groups(matches, seed=seed)
    lines: list[FitLine] = []
    los: dict[str, float] = {}
    for group, fit in enumerate(fits, 1):
        lines += [FitLine(**{f: getattr(x, f) for f in FIELDS if f != "matches"}, matches=fit.matches[x.bot])
                  for x in fit_lines(fit, group=group)]
        if all_pairs and fit.samples.shape[0] > 0:
            bots = sorted(fit.bots)
            los.update({f"{a}|{b}": fit.los(a, b) for i, a in enumerate(bots) for b in bots[i + 1:]})
    return CachedFit(results=count, computed_at=time.time(), seconds=time.perf_counter() - start,
                     replicates=fits[0].replicates, deal_sd=fits[0].deal_sd, lines=tuple(lines), los=los,
                     cpu_seconds=time.process_time() - cpu, groups=len(fits))


if __name__ == "__main__":
    from arena.ladder.fits import _fit_child as child  # the module by its name, so the result unpickles as one

    child()
