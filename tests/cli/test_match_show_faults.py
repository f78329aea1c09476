"""``arena match show`` of a withheld match, with several owner tokens saved on this machine: the faults their
GetMatch answers give are merged without losing or doubling any (``arena.cli.match.merge_own_faults``)."""

from __future__ import annotations

from arena.cli.match import merge_own_faults
from arena_sdk.pb import arena_pb2


def _fault(seat: int, hand: int, turn: int, kind: str = "timeout", detail: str = "no answer within 1000 ms") -> \
        arena_pb2.SeatFault:
    return arena_pb2.SeatFault(seat=seat, hand=hand, turn=turn, kind=kind, detail=detail)


def test_two_equal_faults_of_one_seat_both_stay_and_the_owners_merge_in_match_order() -> None:
    twice = [_fault(2, 0, 0), _fault(2, 0, 0), _fault(2, 1, 3, "illegal", "played 7; legal cards: 1, 2")]
    other = [_fault(0, 0, 0), _fault(0, 1, 0)]
    merged = merge_own_faults([twice, other])
    assert [(f.seat, f.hand, f.turn, f.kind) for f in merged] == [
        (0, 0, 0, "timeout"), (2, 0, 0, "timeout"), (2, 0, 0, "timeout"), (0, 1, 0, "timeout"),
        (2, 1, 3, "illegal")]


def test_a_seat_two_answers_prove_is_counted_once() -> None:
    mine = [_fault(1, 0, 2)]
    assert [(f.seat, f.turn) for f in merge_own_faults([mine, [*mine, _fault(3, 0, 1)], []])] == [(3, 1), (1, 2)]
    assert merge_own_faults([]) == []
