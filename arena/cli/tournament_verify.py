"""``arena tournament verify``: check an ended tournament's deals against its revealed seed."""

from __future__ import annotations

import json
from typing import Any

import click
import grpc

from arena.cli.app import RPC_TIMEOUT_S, AppContext, ArenaClient, print_json
from arena.cli.errors import ArenaCliError, rpc_error
from arena.cli.options import json_option, option, server_option
from arena.cli.pages import every_page
from arena.cli.tournament import tournament
from arena.cli.tournament_views import sprt_of
from arena.match.record import MatchRecord, RecordError
from arena.tournaments.verify import verify_deals
from arena_sdk.pb import arena_pb2

VERIFY_PAGE = 1000  # matches per ListMatches page (the server's maximum page size)


def record_seeds(client: ArenaClient, match_id: str) -> tuple[dict[str, Any], str]:
    """The seeds the record of ``match_id`` was played with, as ``verify_deals`` takes them (``record_seed``,
    ``record_seat_seeds``), and ""; or {} and why the record cannot be checked: the referee cannot read it (DATA_LOSS:
    damaged in its store), it is no match record (``MatchRecord.from_dict`` refuses it), it is the record of another
    match or of no deal seed, or there is none. Any other failed call raises the CLI's one-line ``ArenaCliError``."""
    try:
        detail = client.stub.GetMatch(arena_pb2.GetMatchRequest(match_id=match_id), timeout=RPC_TIMEOUT_S)
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.DATA_LOSS:
            return {}, exc.details() or "the referee cannot read it (DATA_LOSS)"
        raise rpc_error(exc, client.server) from None
    if not detail.record_json:
        return {}, detail.withheld or "the arena has no record of it"
    try:
        record = MatchRecord.from_dict(json.loads(detail.record_json))
    except (ValueError, RecursionError) as exc:  # RecordError, or JSON that does not decode
        reason = str(exc) if isinstance(exc, RecordError) else f"not JSON: {exc}"
        return {}, f"its record is no match record ({reason})"
    if record.match_id != match_id:
        return {}, f"its record is that of match {record.match_id}"
    if record.seed is None:
        return {}, "its record has no deal seed"
    return {"record_seed": record.seed, "record_seat_seeds": list(record.seat_seeds)}, ""


@tournament.command("verify", short_help="Check an ended tournament's deals against its revealed seed.")
@click.argument("tournament_id", metavar="ID")
@option("--records", is_flag=True,
        help="Also fetch every match record and check the deal seed and the seat seeds it was played with.")
@server_option
@json_option
@click.pass_obj
def tournament_verify(app: AppContext, tournament_id: str, records: bool, server: str, as_json: bool) -> None:
    """Check a tournament that has ended: SHA-256 of its revealed seed equals the commitment published at its
    creation, every match's deal seed is HMAC-SHA256(seed, "ID/ROUND/DEAL/ATTEMPT") (first 8 bytes, top bit
    cleared), and no bot received cards of one deal in two matches. With --records, every match record's seed too
    (`arena match show MATCH --json > m.json && arena replay m.json` replays one); a record that cannot be read
    (damaged in the arena's store, or no match record) is listed as damaged, and the other matches are still
    checked. A head-to-head SPRT (`arena sprt V1 V2` without --field) plays V1 against V2 at both tables of every
    block, so those two see each deal twice by design: that is noted, not failed (everything else is checked); a
    paired SPRT (with --house) deals each block's cards to V1 and to V2 by design: that is noted. Exit code 1 when
    anything does not check.

    Example:

    \b
        arena tournament verify t3 --records
    """
    client = app.arena(server)
    t = client.call("GetTournament", arena_pb2.GetTournamentRequest(id=tournament_id))
    if not t.seed_hex:
        raise ArenaCliError(f"tournament {t.id} has not ended ({t.state}, {t.matches_done}/{t.matches_total} matches "
                            f"played): its seed is secret until then; its commitment is {t.seed_commitment}")
    matches: list[dict[str, Any]] = []
    damaged: list[dict[str, str]] = []  # with --records: the matches whose record cannot be checked, and why
    request = arena_pb2.ListMatchesRequest(tournament_id=t.id, limit=VERIFY_PAGE, page_size=VERIFY_PAGE)
    for m in every_page(client, "ListMatches", request, "matches"):
        entry = {"match_id": m.match_id, "seats": list(m.seats), "seed": m.seed, "round": m.round,
                 "deal": m.deal, "table": m.table, "attempt": m.attempt}
        if records:
            seeds, reason = record_seeds(client, m.match_id)
            entry.update(seeds)
            if reason:
                damaged.append({"match_id": m.match_id, "reason": reason})
        matches.append(entry)
    sprt = sprt_of(client, t)
    # only on duplicate deals do V1 and V2 of a head-to-head SPRT share a deal (unique deals: a deal per table)
    # (a paired test with house bots seats V1 and V2 once per deal: no exception; house bots are never checked)
    twice = ((sprt.v1, sprt.v2) if sprt is not None and not sprt.field and not sprt.house and t.deals != "unique"
             else ())
    note = (f"note: {t.id} is a head-to-head SPRT: {twice[0]} (V1) and {twice[1]} (V2), two versions of one "
            f"owner, play each other at both tables of every block, so each receives every deal twice by design"
            if twice else "")
    if sprt is not None and sprt.house:
        note = (f"note: {t.id} is a paired SPRT: {sprt.v1} (V1) and {sprt.v2} (V2), two versions of one owner, each "
                f"receive every deal once, at tables of their own with the same house bots, by design (common "
                f"random numbers: the tournaments' rule that no two bots of one owner receive one deal does not "
                f"apply)")
    problems = verify_deals(t.id, t.seed_hex, t.seed_commitment, matches, twice_allowed=twice)
    problems += [f"match {d['match_id']}: damaged record, its seeds not checked: {d['reason']}" for d in damaged]
    if len(matches) != t.matches_done:
        problems.append(f"{len(matches)} matches listed, but the tournament counts {t.matches_done} done")
    if as_json:
        print_json({"tournament": t.id, "ok": not problems, "matches": len(matches), "seed_hex": t.seed_hex,
                    "seed_commitment": t.seed_commitment, "records_checked": records, "problems": problems,
                    "damaged_records": damaged,
                    "twice_by_design": list(twice), "note": note})
    else:
        if note:
            click.echo(note)
        for problem in problems:
            click.echo(f"FAIL {problem}")
        if not problems:
            click.echo(f"tournament {t.id}: the seed {t.seed_hex} matches the commitment {t.seed_commitment}; "
                       f"{len(matches)} matches, each dealt from HMAC-SHA256(seed, \"{t.id}/round/deal/attempt\")"
                       f"{' (records checked too)' if records else ''}; "
                       + ("V1 and V2 received each deal at its two tables only" if twice
                          else "no bot received a deal twice"))
    if problems:
        if as_json:
            raise SystemExit(1)
        raise ArenaCliError(f"tournament {t.id} does not verify: {len(problems)} problem"
                            f"{'s' if len(problems) != 1 else ''}"
                            + (f" ({len(damaged)} damaged record{'s' if len(damaged) != 1 else ''}: "
                               f"{', '.join(d['match_id'] for d in damaged)})" if damaged else ""))
