"""The exact solver's yardstick: a fixed set of hard petit_menec positions, solved one by one.

The positions (benchmarks/solve_fixed_set.json) come from random play on petit_menec: for
seed ``s``, ``random.Random(s)`` picks a uniformly random legal action until the player to
place has ``k`` megaliths left; the file keeps, per ``k``, the seeds and the action lists that
reach the positions (so they replay on the core rules, with no state format to trust). It was
made by

    python benchmarks/solve_fixed_set.py --make --lefts 5,6,7,8,9,10 --count 10

Each position is solved from an empty transposition table (one core, one process), stopped at
``--cap`` seconds, by each solver configuration named in ``--configs`` in turn, interleaved
position by position (so a noisy machine slows each configuration alike). Per configuration and
``k`` it prints the median and maximum seconds and nodes (a capped solve counts as ``>cap``)
and whether the results agree across configurations.

    nice -n 0 python benchmarks/solve_fixed_set.py --lefts 8 --configs old,default --cap 60

Times are the solve's CPU seconds (``time.process_time``: the machine is shared); the cap is
wall-clock (``solve(seconds=...)``), and a capped solve's nodes are those searched by then.
Node counts are deterministic; times on a shared machine vary by half between runs.

The configurations (:data:`CONFIGS`) switch the solver's levers one at a time: ``old`` is the
search as it was before issue 52 (full window, 64 MiB table, one entry per slot, no symmetry,
the kernel's move order), ``default`` is ``solve``'s defaults.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from carnac_env.core.game import PLACE, GameState
from carnac_env.errors import CarnacError
from carnac_env.solve import clear_table, solve

SET = Path(__file__).resolve().parent / "solve_fixed_set.json"
BOARD = "petit_menec"

#: Solver options per configuration name: ``old`` is the pre-issue-52 search (its node counts
#: are the old commit's, position for position); each of the next adds one lever to it;
#: ``default`` is ``solve``'s defaults (every lever off, as ``old``); ``levers`` the three
#: that were on in the measurements of docs/solver.md; the others combine levers.
_OFF = {
    "null_window": False,
    "symmetry": False,
    "two_tier": False,
    "killers": False,
    "etc": False,
    "adjacent": 0,
    "last_megalith": False,
    "order": 0,
}
_LEVERS = {"null_window": True, "symmetry": True, "two_tier": True}
CONFIGS: dict[str, dict[str, Any]] = {
    "old": {"table_mb": 64, **_OFF},
    "null": {"table_mb": 64, **_OFF, "null_window": True},
    "tt64": {"table_mb": 64, **_OFF, "two_tier": True},
    "tt": {"table_mb": 1024, **_OFF, "two_tier": True},
    "sym": {"table_mb": 64, **_OFF, "symmetry": True},
    "killers": {"table_mb": 64, **_OFF, "killers": True},
    "etc": {"table_mb": 64, **_OFF, "etc": True},
    "adj1": {"table_mb": 64, **_OFF, "adjacent": 1},
    "adj2": {"table_mb": 64, **_OFF, "adjacent": 2},
    "last": {"table_mb": 64, **_OFF, "last_megalith": True},
    "levers_last": {**_LEVERS, "last_megalith": True},
    "last_order2": {"table_mb": 64, **_OFF, "last_megalith": True, "order": 2},
    "last_order3": {"table_mb": 64, **_OFF, "last_megalith": True, "order": 3},
    "last_order4": {"table_mb": 64, **_OFF, "last_megalith": True, "order": 4},
    "levers_last_order2": {**_LEVERS, "last_megalith": True, "order": 2},
    "levers_last_order3": {**_LEVERS, "last_megalith": True, "order": 3},
    "levers_last_order4": {**_LEVERS, "last_megalith": True, "order": 4},
    "run": {"table_mb": 64, **_OFF, "symmetry": True, "two_tier": True, "last_megalith": True, "order": 3},
    "run_killers": {
        "table_mb": 64,
        **_OFF,
        "symmetry": True,
        "two_tier": True,
        "last_megalith": True,
        "order": 3,
        "killers": True,
    },
    "run_null_etc": {
        "table_mb": 64,
        **_OFF,
        "null_window": True,
        "symmetry": True,
        "two_tier": True,
        "last_megalith": True,
        "order": 3,
        "etc": True,
    },
    "run_etc": {
        "table_mb": 64,
        **_OFF,
        "symmetry": True,
        "two_tier": True,
        "last_megalith": True,
        "order": 3,
        "etc": True,
    },
    "default_adj1": {**_LEVERS, "adjacent": 1},
    "default_adj2": {**_LEVERS, "adjacent": 2},
    "default": {},
    "levers": dict(_LEVERS),
    "all64": {"table_mb": 64, **_LEVERS, "killers": True},
    "ke": {"table_mb": 64, **_LEVERS, "killers": True, "etc": True},
    "all": {"table_mb": 1024, **_LEVERS, "killers": True},
    "plain": {"table_mb": 64},  # whatever solve does by default at 64 MiB (runs on the old commit too)
}


def random_position(seed: int, left: int) -> list[int]:
    """The actions of a random game on petit_menec up to the first placement with ``left``
    megaliths left (``random.Random(seed)`` choosing among the legal actions)."""
    rng = random.Random(seed)
    state = GameState(BOARD)
    actions: list[int] = []
    while not (state.phase == PLACE and state.supply == left):
        if state.is_over:
            raise CarnacError(f"seed {seed}: the game ended before {left} megaliths left")
        action = rng.choice(state.legal_actions())
        state.apply(action)
        actions.append(action)
    return actions


def make(lefts: list[int], count: int) -> None:
    """Write the fixed set: ``count`` positions per number of megaliths left."""
    from carnac_env._files import write_json

    positions: dict[str, list[dict[str, Any]]] = {}
    for left in lefts:
        rows = positions[str(left)] = []
        seed = 1000 * left
        while len(rows) < count:
            with contextlib.suppress(CarnacError):  # a game that ended early: the next seed
                rows.append({"seed": seed, "actions": random_position(seed, left)})
            seed += 1
    command = f"python benchmarks/solve_fixed_set.py --make --lefts {','.join(map(str, lefts))} --count {count}"
    write_json(SET, {"board": BOARD, "made_by": command, "positions": positions})


def load(left: int) -> list[GameState]:
    """The fixed set's positions with ``left`` megaliths left, replayed on the core rules."""
    data = json.loads(SET.read_text())
    states = []
    for row in data["positions"][str(left)]:
        state = GameState(data["board"])
        for action in row["actions"]:
            state.apply(action)
        states.append(state)
    return states


def timed(state: GameState, cap: float, options: dict[str, Any]) -> tuple[float, int, int | None]:
    """Seconds and nodes to solve ``state`` from an empty table, and its result (None past ``cap``)."""
    clear_table()
    start = time.process_time()  # the solve's own CPU time: the machine is shared
    try:
        solution = solve(state, max_megaliths_left=state.supply, seconds=cap, **options)
    except CarnacError as error:
        nodes = int(str(error).rsplit("(", 1)[-1].split()[0]) if "(" in str(error) else -1
        return float("inf"), nodes, None
    return time.process_time() - start, solution.nodes, solution.result


def _show(values: list[float], cap: float) -> str:
    return f">{cap:g}" if values == [] or values[0] == float("inf") else f"{values[0]:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--make", action="store_true", help="write the fixed set and stop")
    parser.add_argument("--lefts", default="8", help="megaliths left (comma-separated)")
    parser.add_argument("--count", type=int, default=10, help="positions per k (--make; or the first N to solve)")
    parser.add_argument("--configs", default="old,default", help=f"configurations: {', '.join(CONFIGS)}")
    parser.add_argument("--cap", type=float, default=60.0, help="stop a solve after this many seconds")
    args = parser.parse_args()
    lefts = [int(k) for k in args.lefts.split(",")]
    if args.make:
        make(lefts, args.count)
        return
    configs = args.configs.split(",")
    for name in configs:
        if name not in CONFIGS:
            raise SystemExit(f"unknown configuration {name!r}; expected one of {', '.join(CONFIGS)}")
    for name in configs:  # compile (or load) the solver; not timed
        timed(load(5)[0], 0.0, CONFIGS[name])
    for left in lefts:
        states = load(left)[: args.count]
        runs: dict[str, list[tuple[float, int, int | None]]] = {name: [] for name in configs}
        for i, state in enumerate(states):
            line = []
            for name in configs:
                seconds, nodes, result = timed(state, args.cap, CONFIGS[name])
                runs[name].append((seconds, nodes, result))
                line.append(f"{name} {seconds:.2f}s {nodes:,} r={result}")
            print(f"  k={left} #{i}: " + " | ".join(line), flush=True)
        print(f"k={left} ({len(states)} positions, cap {args.cap:g} s)")
        print(f"  {'config':<10} {'median s':>9} {'max s':>9} {'median nodes':>14} {'max nodes':>14} {'capped':>6}")
        for name in configs:
            times = [r[0] for r in runs[name]]
            nodes = [r[1] for r in runs[name]]
            capped = sum(t == float("inf") for t in times)
            med, top = statistics.median(times), max(times)
            print(
                f"  {name:<10} {_show([med], args.cap):>9} {_show([top], args.cap):>9} "
                f"{statistics.median(nodes):>14,.0f} {max(nodes):>14,} {capped:>6}"
            )
        results = [tuple(r[2] for r in runs[name]) for name in configs]
        agree = all(
            a is None or b is None or a == b for i in range(len(states)) for a in (results[0][i],) for b in
            (r[i] for r in results)
        )  # fmt: skip
        print(f"  results agree across configurations (capped solves aside): {agree}", flush=True)


if __name__ == "__main__":
    main()
