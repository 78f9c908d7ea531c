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

from carnac_env.arena.ratings import PRIOR_DRAWS, bradley_terry, interval_method, is_likelihood


def summarise(agents: list[str], lines: Iterable[str], seed: int, interval: str = "bootstrap") -> dict[str, Any]:
    """Pairs, standings and ratings from game lines (see the module docstring); ``interval``
    is the kind of the ratings' 95% intervals (:data:`~carnac_env.arena.ratings.INTERVALS`)."""
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
        "ratings": bradley_terry(agents, pair_list, seed=seed, interval=interval),
        "rating_method": (
            "Bradley-Terry maximum likelihood (Newton iterations in numpy), draws as half wins, "
            f"{PRIOR_DRAWS:g} virtual draw per pair, Elo scale 400/ln10, mean 0; " + interval_method(interval)
        ),
    }


#: The widest the printed table gets with agent names of usual length: wider, the columns of
#: the win/draw/loss table are headed by each row's letter instead of the agent's name.
TABLE_COLUMNS = 100


def _letter(index: int) -> str:
    """A, B, ..., Z, AA, AB, ...: the label of the ``index``-th agent in a narrow table."""
    label = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        label = chr(ord("A") + rest) + label
    return label


def format_table(results: dict[str, Any]) -> str:
    """The win/draw/loss table (row agent's wins-draws-losses against each column agent)
    and the ratings, as text. Agent names are shown through
    :func:`~carnac_env.render.ansi.printable` (a spec can hold control or bidi characters).

    When the agents' names would make the table wider than :data:`TABLE_COLUMNS`, each row
    starts with a letter and the columns are headed by those letters. The explanation of the
    ratings is one line, followed by what an estimate at the edge of its interval means only
    when some agent's estimate is at an edge."""
    from carnac_env.render.ansi import printable

    agents = results["agents"]
    shown = {a: printable(a) for a in agents}
    width = max(10, *(len(shown[a]) for a in agents)) + 2
    order = sorted(agents, key=lambda a: -results["ratings"][a]["elo"])
    lines = _cross_table(results, shown, width)
    lines += ["", *_standings(results, shown, width, order), "", *READING]
    lines += _notes(results, order)
    return "\n".join(lines)


def _cross_table(results: dict[str, Any], shown: dict[str, str], width: int) -> list[str]:
    """The wins-draws-losses of each row agent against each column agent (by letters when the
    names would make it wider than :data:`TABLE_COLUMNS`)."""
    agents = results["agents"]
    cell: dict[tuple[str, str], str] = {}
    for p in results["pairs"]:
        cell[(p["a"], p["b"])] = f"{p['wins_a']}-{p['draws']}-{p['wins_b']}"
        cell[(p["b"], p["a"])] = f"{p['wins_b']}-{p['draws']}-{p['wins_a']}"
    lines = ["wins-draws-losses of the row agent against the column agent:"]
    if width * (len(agents) + 1) <= TABLE_COLUMNS:
        lines.append("".ljust(width) + "".join(shown[a].rjust(width) for a in agents))
        for a in agents:
            lines.append(shown[a].ljust(width) + "".join(cell.get((a, b), "-").rjust(width) for b in agents))
        return lines
    letters = {a: _letter(i) for i, a in enumerate(agents)}
    tag = max(len(t) for t in letters.values()) + 2
    column = max(9, *(len(c) for c in cell.values())) + 2
    name = width - 2
    lines.append("".ljust(tag) + "agent".ljust(name) + "".join(letters[a].rjust(column) for a in agents))
    for a in agents:
        cells = "".join(cell.get((a, b), "-").rjust(column) for b in agents)
        lines.append(letters[a].ljust(tag) + shown[a].ljust(name) + cells)
    return lines


def _standings(results: dict[str, Any], shown: dict[str, str], width: int, order: list[str]) -> list[str]:
    """Each agent's games, wins, draws, losses and rating with its interval, strongest first."""
    head = "agent".ljust(width) + "games".rjust(7) + "wins".rjust(7) + "draws".rjust(7) + "losses".rjust(8)
    lines = [head + "rating".rjust(9) + "   95% interval"]
    for a in order:
        s, r = results["standings"][a], results["ratings"][a]
        lines.append(
            shown[a].ljust(width) + f"{s['games']:>7}{s['wins']:>7}{s['draws']:>7}{s['losses']:>8}"
            f"{round(r['elo']):>9d}   [{round(r['ci_low'])}, {round(r['ci_high'])}]"
        )
    return lines


def _notes(results: dict[str, Any], order: list[str]) -> list[str]:
    """What an estimate at the edge of its interval means (with a row of this table as the
    example), and a warning for each pair that repeated its games."""
    from carnac_env.render.ansi import printable

    ratings = results["ratings"]
    lines: list[str] = []
    # a likelihood-ratio interval holds its estimate inside by construction; only the
    # bootstrap's percentiles stop at it, and that needs the words below
    at_edge = [
        ratings[a]
        for a in order
        if round(ratings[a]["elo"]) in (round(ratings[a]["ci_low"]), round(ratings[a]["ci_high"]))
    ]
    if at_edge and not is_likelihood(results):
        lines.extend(at_the_edge(at_edge[0]))
    for r in results.get("repeated", []):
        games = "game" if r["distinct"] == 1 else "games"
        lines.append(
            f"repeated games: {printable(r['a'])} vs {printable(r['b'])} played {r['distinct']} distinct {games} "
            f"in {r['games']}: some "
            "were the same game again, move for move (agents with few or no random choices replay their games), "
            f"so the pair's result rests on {r['distinct']} different {games} and its intervals are too narrow; "
            "--openings N (openings=N in Python) starts every game with N random plies, so that they differ."
        )
    return lines


#: How to read the ratings column, printed under every table (docs/agents.md, "The arena").
READING = (
    "rating: Bradley-Terry strength, Elo scale (400 points = 10:1 odds), mean 0 over this table's",
    "agents: compare numbers within one table, not across runs (docs/agents.md, The arena).",
)

#: Printed under :data:`READING` when some agent's estimate sits at an edge of its interval;
#: ``{example}`` is one such row of the table (:func:`at_the_edge`).
AT_THE_EDGE = (
    "An estimate at the edge of its 95% interval (e.g. {example}): the refits rarely went",
    "beyond it, as when an agent won or lost nearly every game; closer opponents tighten it.",
)


def at_the_edge(rating: dict[str, Any]) -> tuple[str, ...]:
    """:data:`AT_THE_EDGE` with its example taken from ``rating`` (a row of the table's ratings,
    ``elo``, ``ci_low`` and ``ci_high``), written as the table writes it: ``191 [0, 191]``."""
    example = f"{round(rating['elo'])} [{round(rating['ci_low'])}, {round(rating['ci_high'])}]"
    return tuple(line.format(example=example) for line in AT_THE_EDGE)
