"""Batch fits as the ratings cache keeps them (``CachedFit``) and the process that computes the large ones
(``arena.ratings_cache``; the math is ``arena.ratings.ladder``).

A fit of many results takes minutes of CPU, so ``fit_elsewhere`` runs it in a child process
(``python -m arena.ratings_fits``), the arguments and the result pickled through its stdin and stdout: the arena
process's GIL stays free for its gRPC threads and the referee's deadlines, any main module works, and the child
ends with the fit or as soon as its parent is gone.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from arena.ratings.fit import MatchResult
from arena.ratings.ladder import fit_for_ladder, fit_lines


@dataclass(frozen=True)
class FitLine:
    """One line of a cached fit: bot id; rating, margin, low, high (Elo points; margin may be inf); los_next (over
    the next line of the fit's own order, 0..1, None on the last); matches (the bot's matches in the fit)."""

    bot: str
    rating: float
    margin: float | None
    low: float | None
    high: float | None
    los_next: float | None
    matches: int


@dataclass(frozen=True)
class CachedFit:
    """A batch fit as cached: results (stored results it counts), computed_at (s since epoch), seconds (wall time
    of the fit), cpu_seconds (CPU time of the process that fitted), replicates, deal_sd (Elo points), lines (best
    rating first), los (pair "a|b" with a < b -> LOS of a over b, every pair; tournament fits only)."""

    results: int
    computed_at: float
    seconds: float
    replicates: int
    deal_sd: float
    lines: tuple[FitLine, ...]
    los: dict[str, float]
    cpu_seconds: float = 0.0

    def los_of(self, a: str, b: str) -> float | None:
        """LOS of ``a`` over ``b`` (0..1) when the fit has it for that pair, else None."""
        if a == b:
            return None
        if a < b:
            return self.los.get(f"{a}|{b}")
        p = self.los.get(f"{b}|{a}")
        return None if p is None else 1.0 - p

    def to_json(self) -> str:
        return json.dumps({"results": self.results, "computed_at": self.computed_at, "seconds": self.seconds,
                           "cpu_seconds": self.cpu_seconds,
                           "replicates": self.replicates, "deal_sd": self.deal_sd, "los": self.los,
                           "lines": [[x.bot, x.rating, x.margin, x.low, x.high, x.los_next, x.matches]
                                     for x in self.lines]})

    @classmethod
    def from_json(cls, raw: str) -> CachedFit:
        d = json.loads(raw)
        return cls(results=int(d["results"]), computed_at=float(d["computed_at"]), seconds=float(d["seconds"]),
                   replicates=int(d["replicates"]), deal_sd=float(d["deal_sd"]), los=dict(d.get("los", {})),
                   cpu_seconds=float(d.get("cpu_seconds", 0.0)),
                   lines=tuple(FitLine(*row) for row in d["lines"]))


def fit_elsewhere(matches: Sequence[MatchResult], count: int, seed: int, all_pairs: bool) -> CachedFit:
    """``fit_document`` in a child process of its own (``python -m arena.ratings_fits``, the data pickled through
    its stdin and stdout): a fit of many results takes minutes of CPU, which would otherwise hold this process's GIL
    against its gRPC threads and the referee's deadlines. The child ends with the fit, or as soon as this process
    is gone (it watches its parent). Raises ``RuntimeError`` when the child fails (its stderr's last line)."""
    payload = pickle.dumps((list(matches), count, seed, all_pairs))
    done = subprocess.run([sys.executable, "-m", "arena.ratings_fits"], input=payload, capture_output=True,
                          check=False)
    if done.returncode != 0:
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"the fit process exited with {done.returncode}: {last}")
    doc: CachedFit = pickle.loads(done.stdout)
    return doc


def _fit_child() -> None:
    """The child of ``fit_elsewhere``: read the pickled arguments, fit, write the pickled ``CachedFit``; exit
    at once when the parent goes away."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(3)

    threading.Thread(target=watch, daemon=True).start()
    args = pickle.loads(sys.stdin.buffer.read())
    sys.stdout.buffer.write(pickle.dumps(fit_document(*args)))
    sys.stdout.buffer.flush()


def fit_document(matches: Sequence[MatchResult], count: int, seed: int, all_pairs: bool) -> CachedFit:
    """``fit_for_ladder`` over ``matches`` as a ``CachedFit`` counting ``count`` results; ``all_pairs``: with the
    LOS of every pair (tournament fits). Raises ``FitError`` (no match, a bad match)."""
    start, cpu = time.perf_counter(), time.process_time()
    fit = fit_for_ladder(matches, seed=seed)
    lines = tuple(FitLine(x.bot, x.rating, x.margin, x.low, x.high, x.los_next, fit.matches[x.bot])
                  for x in fit_lines(fit))
    los: dict[str, float] = {}
    if all_pairs and fit.samples.shape[0] > 0:
        bots = sorted(fit.bots)
        los = {f"{a}|{b}": fit.los(a, b) for i, a in enumerate(bots) for b in bots[i + 1:]}
    return CachedFit(results=count, computed_at=time.time(), seconds=time.perf_counter() - start,
                     replicates=fit.replicates, deal_sd=fit.deal_sd, lines=lines, los=los,
                     cpu_seconds=time.process_time() - cpu)


if __name__ == "__main__":
    from arena.ratings_fits import _fit_child as child  # the module by its name, so the result unpickles as one

    child()
