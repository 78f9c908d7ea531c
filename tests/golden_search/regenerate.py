"""Write the golden search trees (``trees.json``): whole trees of fixed searches.

Each case is a position (a board, a number of seeded random plies), a search (evaluator,
selection, seed, lanes, budget) and, for some, a second search that reuses the first's tree.
The file keeps every node of the tree (player, winner, evaluator value, visits, edge count,
tried edges) and every visited edge (its node, its place among the node's edges, action,
visits, total value, prior, logit, child), in the tree's own order. ``tests/search/test_search.py``
runs the same cases and compares; it never writes the file.

    python tests/golden_search/regenerate.py          # rewrite trees.json
    python tests/golden_search/regenerate.py --check  # only report which cases differ

**A changed tree must be reviewed before it is committed.** The search's behaviour is meant to
stay the same bit for bit (self-play, the arena and trained models depend on it); rewrite the
file only for a change that is meant to change the search, and say so in the commit.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

GOLDEN = Path(__file__).resolve().parent / "trees.json"


def random_state(board: str, plies: int, seed: int):
    """The position after ``plies`` random legal moves (Python's ``random``, seeded)."""
    from carnac_env.core.game import GameState

    rng = random.Random(seed)
    state = GameState(board)
    for _ in range(plies):
        if state.is_over:
            break
        state.apply(rng.choice(state.legal_actions()))
    return state


class ConstantNet:
    """Uniform logits and the same value for every position (for the player to act)."""

    def __init__(self, value: float) -> None:
        self.value = value

    def forward(self, obs: np.ndarray, supply_scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        n, rows, cols, _ = obs.shape
        return np.zeros((n, rows * cols * 4 + 5), np.float32), np.full(n, self.value, np.float32)


class HashNet:
    """Logits and values that depend on the action and the position (integer arithmetic, so the
    same on every machine): varied priors without a trained network."""

    def forward(self, obs: np.ndarray, supply_scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        n, rows, cols, planes = obs.shape
        actions = rows * cols * 4 + 5
        weights = (np.arange(rows * cols * planes, dtype=np.int64) * 7919) % 31
        keys = obs.reshape(n, -1).astype(np.int64) @ weights
        grid = (np.arange(actions, dtype=np.int64)[None, :] * 2654435761 + keys[:, None] * 40503) % 1021
        logits = (grid.astype(np.float32) / np.float32(255.0)).astype(np.float32)
        values = ((keys % 41).astype(np.float32) / np.float32(20.0) - np.float32(1.0)).astype(np.float32)
        return logits, values


#: name -> (board, plies, seed, evaluator, selection, sims, lanes, trees-together, then (restrict, sims) or None)
CASES: dict[str, tuple] = {
    "uct-small-opening": ("small", 0, 0, "playouts", "uct", 400, 1, None),
    "uct-medium-early": ("medium", 4, 1000, "playouts", "uct", 400, 1, None),
    "uct-petit-respond": ("petit_menec", 9, 5, "playouts", "uct", 300, 1, None),
    "puct-small-uniform": ("small", 3, 2, "constant", "puct", 60, 1, None),
    "gumbel-small-uniform": ("small", 3, 2, "constant", "gumbel", 32, 1, None),
    "puct-medium-opening": ("medium", 0, 3, "constant", "puct", 80, 1, None),
    "gumbel-medium-opening": ("medium", 0, 3, "constant", "gumbel", 48, 1, None),
    "uct-small-reuse-restrict": ("small", 2, 11, "playouts2", "uct", 150, 1, ([0, 4, 8, 12, 16, 20], 120)),
    "puct-small-lanes-dirichlet": ("small", 5, 12, "hash", "puct", 48, 4, None),
    "gumbel-petit-lanes-noise": ("petit_menec", 4, 13, "hash", "gumbel-noise", 40, 4, None),
    "mixed-small": ("small", 6, 14, "mixed", "puct-fpu", 40, 1, None),
    "uct-petit-endgame": ("petit_menec", 22, 8, "playouts", "uct", 300, 1, None),
    "gumbel-petit-endgame": ("petit_menec", 23, 7, "hash", "gumbel-noise", 24, 2, None),
}


def _search(board: str, evaluator: str, selection: str, seed: int, lanes: int):
    from carnac_env.search import PUCT, UCT, Gumbel, Mixed, Network, Playouts, Search

    evaluators = {
        "playouts": lambda: Playouts(),
        "playouts2": lambda: Playouts(2),
        "constant": lambda: Network(ConstantNet(0.1)),
        "hash": lambda: Network(HashNet()),
        "mixed": lambda: Mixed(HashNet(), playouts=2, weight=0.3),
    }
    selections = {
        "uct": lambda: UCT(1.0),
        "puct": lambda: PUCT(1.5),
        "puct-fpu": lambda: PUCT(1.25, fpu=-0.2),
        "gumbel": lambda: Gumbel(16, noise=True),
        "gumbel-noise": lambda: Gumbel(8, noise=True),
    }
    dirichlet = (0.3, 0.25) if selection == "puct" and lanes > 1 else None
    return Search(board, evaluators[evaluator](), selections[selection](), seed=seed, lanes=lanes, dirichlet=dirichlet)


def whole_tree(search: Any, t: int = 0) -> dict[str, Any]:
    """Tree ``t`` of ``search``: every node and every visited edge, in the tree's own order."""
    a = search.arrays
    size = int(a.size[t])
    nodes = []
    edges = []
    for node in range(size):
        count = int(a.count[t, node])
        nodes.append(
            [
                int(a.player[t, node]),
                int(a.winner[t, node]),
                float(a.value[t, node]),
                int(a.visits[t, node]),
                count,
                int(a.tried[t, node]),
            ]
        )
        first = int(a.first[t, node])
        for k in range(max(count, 0)):
            e = first + k
            if a.n[t, e] > 0:
                edges.append(
                    [
                        node,
                        k,
                        int(a.action[t, e]),
                        int(a.n[t, e]),
                        float(a.w[t, e]),
                        float(a.prior[t, e]),
                        float(a.logit[t, e]),
                        int(a.child[t, e]),
                    ]
                )
    return {"root": int(a.root[t]), "nodes": nodes, "edges": edges}


def golden_trees() -> dict[str, dict[str, Any]]:
    """Every case's whole tree (what ``trees.json`` holds)."""
    out = {}
    for name, (board, plies, seed, evaluator, selection, sims, lanes, then) in CASES.items():
        state = random_state(board, plies, seed)
        search = _search(board, evaluator, selection, seed, lanes)
        search.set_games([state], reuse=then is not None)
        search.run(sims)
        if then is not None:
            wanted, more = then
            first = search.best_action(0, ties="value")
            state.apply(first)
            search.set_games([state], reuse=True)
            legal = state.legal_actions()
            search.restrict_root(0, [legal[i] for i in wanted if i < len(legal)])
            search.run(more)
        out[name] = whole_tree(search)
    return out


def dumps(trees: dict[str, dict[str, Any]]) -> str:
    """``trees`` as the file's text: one line per node and per edge, so a diff reads by node."""
    lines = ["{"]
    for i, (name, tree) in enumerate(sorted(trees.items())):
        lines.append(f' "{name}": {{')
        lines.append(f'  "root": {tree["root"]},')
        for key in ("nodes", "edges"):
            rows = tree[key]
            lines.append(f'  "{key}": [')
            lines.extend(f"   {json.dumps(row)}" + ("," if j < len(rows) - 1 else "") for j, row in enumerate(rows))
            lines.append("  ]" + ("," if key == "nodes" else ""))
        lines.append(" }" + ("," if i < len(trees) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report which cases differ")
    args = parser.parse_args()
    trees = golden_trees()
    if args.check:
        stored = json.loads(GOLDEN.read_text())
        differ = sorted(name for name in set(trees) | set(stored) if trees.get(name) != stored.get(name))
        print("differ: " + ", ".join(differ) if differ else "every case is the same")
        return 1 if differ else 0
    GOLDEN.write_text(dumps(trees))
    print(f"wrote {GOLDEN} ({len(trees)} cases)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's carnac_env
    raise SystemExit(main())
