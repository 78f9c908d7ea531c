"""The arena's results: pairs, standings and ratings from game lines, and the printed table.

``results["repeated"]`` lists the pairs whose games were not all different (same seats, same
moves): two agents without random choices, such as ``az`` against another ``az``, play the
same game again from every seed, so such a pair's count of games overstates the evidence.
The printed table says so under the ratings.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from carnac_env.arena.ratings import BOOTSTRAP, PRIOR_DRAWS, bradley_terry


def summarise(agents: list[str], lines: Iterable[str], seed: int) -> dict[str, Any]:
    """Pairs, standings and ratings from game lines (see the module docstring)."""
    pairs = {
        (a, b): {"a": a, "b": b, "wins_a": 0, "wins_b": 0, "draws": 0}
        for i, a in enumerate(agents)
        for b in agents[i + 1 :]
    }
    standings = {name: {"games": 0, "wins": 0, "draws": 0, "losses": 0} for name in agents}
    played: dict[tuple[str, str], list[str]] = {key: [] for key in pairs}
    for line in lines:
        record = json.loads(line)
        a, b = record["pair"]
        played[(a, b)].append(json.dumps([record["seats"], record["moves"]]))
        winner = record["result"]["winner"]
        entry = pairs[(a, b)]
        if winner is None:
            entry["draws"] += 1
            standings[a]["draws"] += 1
            standings[b]["draws"] += 1
        else:
            name = record["agents"][winner]
            other = b if name == a else a
            entry["wins_a" if name == a else "wins_b"] += 1
            standings[name]["wins"] += 1
            standings[other]["losses"] += 1
        standings[a]["games"] += 1
        standings[b]["games"] += 1
    pair_list = list(pairs.values())
    return {
        "agents": list(agents),
        "pairs": pair_list,
        "repeated": [
            {"a": a, "b": b, "games": len(games), "distinct": len(set(games))}
            for (a, b), games in played.items()
            if len(set(games)) < len(games)
        ],
        "standings": standings,
        "ratings": bradley_terry(agents, pair_list, seed=seed),
        "rating_method": (
            "Bradley-Terry maximum likelihood (Newton iterations in numpy), draws as half wins, "
            f"{PRIOR_DRAWS:g} virtual draw per pair, Elo scale 400/ln10, mean 0; "
            f"95% interval from {BOOTSTRAP} refits on a seeded parametric bootstrap (each pair's games "
            "drawn again from the fitted model, draws at the observed rate)"
        ),
    }


def format_table(results: dict[str, Any]) -> str:
    """The win/draw/loss table (row agent's wins-draws-losses against each column agent)
    and the ratings, as text. Agent names are shown through
    :func:`~carnac_env.render.ansi.printable` (a spec can hold control or bidi characters)."""
    from carnac_env.render.ansi import printable

    agents = results["agents"]
    shown = {a: printable(a) for a in agents}
    cell: dict[tuple[str, str], str] = {}
    for p in results["pairs"]:
        cell[(p["a"], p["b"])] = f"{p['wins_a']}-{p['draws']}-{p['wins_b']}"
        cell[(p["b"], p["a"])] = f"{p['wins_b']}-{p['draws']}-{p['wins_a']}"
    width = max(10, *(len(shown[a]) for a in agents)) + 2
    lines = ["wins-draws-losses of the row agent against the column agent:"]
    lines.append("".ljust(width) + "".join(shown[a].rjust(width) for a in agents))
    for a in agents:
        lines.append(shown[a].ljust(width) + "".join(cell.get((a, b), "-").rjust(width) for b in agents))
    lines.append("")
    lines.append(
        "agent".ljust(width)
        + "games".rjust(7)
        + "wins".rjust(7)
        + "draws".rjust(7)
        + "losses".rjust(8)
        + "rating".rjust(9)
        + "   95% interval"
    )
    order = sorted(agents, key=lambda a: -results["ratings"][a]["elo"])
    for a in order:
        s, r = results["standings"][a], results["ratings"][a]
        lines.append(
            shown[a].ljust(width) + f"{s['games']:>7}{s['wins']:>7}{s['draws']:>7}{s['losses']:>8}"
            f"{round(r['elo']):>9d}   [{round(r['ci_low'])}, {round(r['ci_high'])}]"
        )
    lines.append("")
    lines.extend(READING)
    for r in results.get("repeated", []):
        lines.append(
            f"repeated games: {printable(r['a'])} vs {printable(r['b'])} played {r['distinct']} distinct games "
            f"in {r['games']}: some "
            "were the same game again, move for move (agents with few or no random choices replay their games), "
            f"so the pair's result rests on {r['distinct']} different games and its intervals are too narrow."
        )
    return "\n".join(lines)


#: How to read the ratings column, printed under every table.
READING = (
    "rating: Bradley-Terry strength on the Elo scale (400 points = 10:1 odds), mean 0 over the",
    "agents of this table only: compare numbers within one table, not across runs. The 95% interval",
    "comes from refits on games simulated from the fitted ratings; an estimate at the edge of its",
    "interval (e.g. 284 [54, 284]) means the refits rarely went beyond it, as happens when an agent",
    "won (or lost) nearly every game: more games against closer opponents tighten it.",
)
