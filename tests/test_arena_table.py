"""The arena's printed table: it fits 100 columns with long agent specs, and explains the
ratings in one line (plus what an estimate at its interval's edge means, only when one is)."""

from __future__ import annotations

import json

from carnac_env.arena.report import AT_THE_EDGE, READING, TABLE_COLUMNS, format_table, summarise


def _results(agents: list[str], outcomes: dict[tuple[int, int], list[int | None]]) -> dict:
    """Results from hand-made game lines: outcomes[(i, j)] lists each game's winner seat (0, 1 or
    None), agent i playing Red."""
    lines = []
    for (i, j), winners in outcomes.items():
        a, b = agents[i], agents[j]
        for k, winner in enumerate(winners):
            record = {
                "pair": [a, b],
                "agents": [a, b],
                "seats": {a: 0, b: 1},
                "moves": [k],
                "result": {"winner": winner},
            }
            lines.append(json.dumps(record))
    return summarise(agents, lines, seed=0)


def test_long_specs_get_lettered_columns_and_fit_100_columns() -> None:
    agents = ["az:model=runs/az-petit/best.npz", "az:model=runs/az-petit/best.npz:sims=0", "greedy", "random"]
    pairs = {(i, j): [0, 1, None] for i in range(4) for j in range(i + 1, 4)}
    table = format_table(_results(agents, pairs))
    lines = table.splitlines()
    assert max(map(len, lines)) <= TABLE_COLUMNS, table
    assert lines[1].split() == ["agent", "A", "B", "C", "D"]
    assert lines[2].split()[:2] == ["A", agents[0]] and lines[5].split()[:2] == ["D", "random"]
    assert lines[3].split()[2:] == ["1-1-1", "-", "1-1-1", "1-1-1"]


def test_short_specs_keep_their_names_as_column_heads() -> None:
    agents = ["random", "greedy", "mcts"]
    table = format_table(_results(agents, {(0, 1): [1, 1], (0, 2): [1, 1], (1, 2): [0, 1]}))
    lines = table.splitlines()
    assert lines[1].split() == agents and lines[2].split() == ["random", "-", "0-0-2", "0-0-2"]
    assert max(map(len, lines)) <= TABLE_COLUMNS


def test_the_ratings_are_explained_in_one_line_and_the_edge_only_when_it_shows() -> None:
    agents = ["random", "greedy"]
    close = format_table(_results(agents, {(0, 1): [0, 1, 1, 0, 1, 0, None, 1]}))
    assert "\n".join(READING) in close and AT_THE_EDGE[0] not in close
    one_sided = _results(agents, {(0, 1): [1] * 20})
    edge = one_sided["ratings"]["greedy"]
    assert round(edge["elo"]) in (round(edge["ci_low"]), round(edge["ci_high"]))
    assert "\n".join(READING + AT_THE_EDGE) in format_table(one_sided)
