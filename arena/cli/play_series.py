"""``arena play GAME --games N``: a series of local games between the same bots, seats rotated, and what each bot
scored on average: is my bot better than the samples, without an arena."""

from __future__ import annotations

import math
import statistics
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from arena.cli.app import AppContext, PlainLines, print_json
from arena.cli.errors import ArenaCliError, interruption
from arena.cli.tables import Col, fit, print_tables
from arena.core.limits import MAX_SEED

Z95 = 1.959964  # the normal quantile of a two-sided 95 % interval


@dataclass
class BotTally:
    """One bot's games of a series: its score, rank, faults and whether it forfeited, per game."""

    bot: str
    scores: list[float] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    faults: int = 0
    forfeits: int = 0

    @property
    def games(self) -> int:
        return len(self.scores)

    @property
    def mean_score(self) -> float:
        return statistics.fmean(self.scores)

    @property
    def margin(self) -> float:
        """Half the 95 % interval of the mean score (normal approximation); nan under 2 games."""
        if self.games < 2:
            return math.nan
        return Z95 * statistics.stdev(self.scores) / math.sqrt(self.games)

    @property
    def mean_rank(self) -> float:
        return statistics.fmean(self.ranks)

    @property
    def wins(self) -> int:
        """Games it ranked first in (ties for first included)."""
        return sum(r == 1 for r in self.ranks)

    def as_dict(self) -> dict[str, Any]:
        return {"bot": self.bot, "games": self.games, "mean_score": self.mean_score,
                "score_margin": None if math.isnan(self.margin) else self.margin, "mean_rank": self.mean_rank,
                "wins": self.wins, "faults": self.faults, "forfeits": self.forfeits}


def seats_of_game(specs: Sequence[Any], index: int) -> list[Any]:
    """The seats of game ``index`` (0-based) of a series: ``specs`` rotated by ``index``, so that over
    ``len(specs)`` games every bot holds every seat once."""
    n = len(specs)
    return [specs[(j + index) % n] for j in range(n)]


def seed_of_game(seed: int, index: int) -> int:
    """The seed of game ``index`` of a series that starts at ``seed``: ``seed + index``, wrapped within 0..MAX_SEED."""
    return (seed + index) % (MAX_SEED + 1)


def tally(records: Sequence[Any], names: Sequence[str]) -> list[BotTally]:
    """Per bot of ``names``, its results in ``records`` (``MatchRecord``s), best mean rank first (ties keep
    ``names``' order)."""
    tallies = {n: BotTally(n) for n in names}
    for record in records:
        result = record.result
        forfeited = getattr(result, "forfeits", ()) or ()
        for seat, spec in enumerate(record.seats):
            t = tallies[spec.name]
            t.scores.append(float(result.scores[seat]))
            t.ranks.append(int(result.ranks[seat]))
            t.faults += int(result.faults[seat])
            t.forfeits += bool(seat < len(forfeited) and forfeited[seat])
    return sorted((t for t in tallies.values() if t.games), key=lambda t: t.mean_rank)


def play_series(app: AppContext, game: str, specs: Sequence[Any], config: Any, seed: int, games: int,
                options: Any, as_json: bool) -> None:
    """Play ``games`` games between ``specs`` (``SeatSpec``s of running bots), game i with seed ``seed + i`` and the
    seats rotated by i; save every record under records/SERIES_ID/ and print each bot's tally (``tally``). Ctrl-C
    prints the tally of the games played so far, then stops (``ArenaInterrupted``)."""
    from arena.core.seeds import local_seat_seeds
    from arena.match.referee import run_match_sync

    series = f"series-{datetime.now().strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    folder = Path("records") / series
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArenaCliError(f"cannot make {folder} for the records: {exc.strerror or exc}") from None
    names = [s.name for s in specs]
    records: list[Any] = []
    plain = PlainLines(app.console, as_json)
    started = time.monotonic()
    status = None if as_json else app.console.status("", spinner="dots")
    try:
        if status is not None:
            status.start()
        for i in range(games):
            line = (f"game {i + 1}/{games} of {game} between {', '.join(names)} (seed {seed_of_game(seed, i)})"
                    + (f"; leader so far {tally(records, names)[0].bot}" if records else ""))
            plain.say(line)
            if status is not None:
                status.update(line)
            game_seed = seed_of_game(seed, i)
            seats = seats_of_game(specs, i)
            record = run_match_sync(f"{series}-{i:05d}", game, seats, config, seed=game_seed, options=options,
                                    seat_seeds=local_seat_seeds(game_seed, len(seats)))
            try:
                record.save(folder / f"{record.match_id}.json")
            except OSError as exc:
                raise ArenaCliError(f"cannot save a record in {folder}: {exc.strerror or exc}") from None
            records.append(record)
    except KeyboardInterrupt as exc:
        if status is not None:
            status.stop()
            status = None
        if records:
            _report(app, game, series, folder, seed, records, names, games, started, as_json)
        raise interruption(f"interrupted after {len(records)} of {games} games (the game under way was "
                                 f"stopped; the records of those played are in {folder})", exc) from None
    finally:
        if status is not None:
            status.stop()
    _report(app, game, series, folder, seed, records, names, games, started, as_json)


def _report(app: AppContext, game: str, series: str, folder: Path, seed: int, records: Sequence[Any],
            names: Sequence[str], games: int, started: float, as_json: bool) -> None:
    """Print the tally of ``records`` (the games of a series played so far)."""
    from arena.render import score_unit

    tallies = tally(records, names)
    if as_json:
        print_json({"series": series, "game": game, "seed": seed, "games": len(records), "asked": games,
                    "records": str(folder), "bots": [t.as_dict() for t in tallies],
                    "results": [{"match_id": r.match_id, "seed": r.seed, "seats": [s.name for s in r.seats],
                                 "scores": list(r.result.scores), "ranks": list(r.result.ranks)} for r in records]})
        return
    unit = score_unit(game, records[0].config)
    columns = [Col("bot", cells="name", justify="left"), Col("games", drop=3),
               Col(f"mean {unit} (95 %)", f"mean {unit}"), Col("mean rank", "rank"), Col("wins"),
               Col("faults", drop=1), Col("forfeits", drop=2)]
    rows = [[t.bot, str(t.games),
             f"{t.mean_score:.1f}" + ("" if math.isnan(t.margin) else f" ± {t.margin:.1f}"),
             f"{t.mean_rank:.2f}", f"{t.wins} ({100 * t.wins / t.games:.0f} %)", str(t.faults), str(t.forfeits)]
            for t in tallies]
    shown = fit(columns, rows, app.console.width)
    print_tables(app.console, [shown.table(f"{len(records)} games of {game}, seats rotated", rows)], shown.note())
    click.echo(f"seeds {seed}..{seed_of_game(seed, len(records) - 1)}, {time.monotonic() - started:.1f} s; a tie for "
               f"first is a win of each bot in it; records in {folder}/ (`arena match show FILE`, `arena replay FILE`)")

