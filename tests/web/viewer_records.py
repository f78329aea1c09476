"""Match records for the viewer's tests, made without bots: a registered game's engine played by a seeded random
policy, some decisions faulted (the engine's default applied), in the format of ``MatchRecord``; each is checked
with ``replay`` first, so the viewer is tested on records the referee could have written."""

from __future__ import annotations

import random
from typing import Any

from arena.match.record import MatchRecord
from arena.match.replay import replay
from arena_sdk import wire
from arena_sdk.games import GAMES


def play_record(game: str, num_players: int, seed: int, *, policy_seed: int = 0, fault_rate: float = 0.1,
                config: Any = None) -> tuple[dict[str, Any], list[Any]]:
    """A record of ``game`` played by a random policy, and the engine state before every decision and at the end
    (``states[i]`` before decision i)."""
    engine = GAMES[game]
    rng = random.Random(policy_seed)
    config = config if config is not None else engine.config_type()
    state = engine.new_game(num_players, config, seed=seed)
    decisions: list[dict[str, Any]] = []
    faults: list[dict[str, Any]] = []
    seq = [0] * num_players
    states = [state]
    while not engine.is_over(state):
        seat = engine.pending_seats(state)[0]
        kind = engine.decision_kind(state, seat)
        hand, turn = engine.position(state)
        source = "bot"
        if rng.random() < fault_rate:
            action, source = engine.default_action(state, seat), "default"
            faults.append({"kind": "illegal", "seat": seat, "hand": hand, "turn": turn,
                           "detail": f"secret-detail-{len(faults)}", "decision": len(decisions)})
        else:
            action = rng.choice(engine.legal_actions(state, seat))
        decisions.append({"seq": seq[seat], "seat": seat, "kind": kind, "hand": hand, "turn": turn,
                          "action": engine.action_to_dict(action), "source": source, "latency_ms": 3.5})
        seq[seat] += 1
        state = engine.apply(state, seat, action)
        states.append(state)
    outcome = engine.outcome(state)
    record = {
        "version": 1, "match_id": f"m-{game}-{seed}", "game": game, "config": wire.config_to_dict(game, config),
        "seed": seed, "deals": [],
        "seats": [{"name": f"bot{s}@1", "endpoint": f"127.0.0.1:{50100 + s}"} for s in range(num_players)],
        "deadline_ms": 50, "decisions": decisions, "faults": faults,
        "result": {"scores": [float(x) for x in outcome.scores], "ranks": list(outcome.ranks),
                   "faults": [sum(f["seat"] == s for f in faults) for s in range(num_players)]},
        "started_at": 1_700_000_000.0, "duration_s": 0.5,
    }
    assert replay(MatchRecord.from_dict(record)) == []
    return record, states
