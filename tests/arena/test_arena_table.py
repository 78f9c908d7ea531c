"""The arena's printed table: it fits 100 columns with long agent specs, and explains the
ratings in one line (plus what an estimate at its interval's edge means, only when one is)."""

from __future__ import annotations

import json

import pytest

from carnac_env.arena.report import AT_THE_EDGE, READING, TABLE_COLUMNS, at_the_edge, format_table, summarise


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
    assert "\n".join(READING) in close and "edge of its 95% interval" not in close
    one_sided = _results(agents, {(0, 1): [1] * 20})
    edge = one_sided["ratings"]["greedy"]
    assert round(edge["elo"]) in (round(edge["ci_low"]), round(edge["ci_high"]))
    assert "\n".join(READING + at_the_edge(edge)) in format_table(one_sided)


def test_the_edge_example_is_a_row_of_the_table_it_explains() -> None:
    """The example of an estimate at its interval's edge is the first such row of the very
    table printed (it used to be a fixed 284 [54, 284] whatever the table showed)."""
    for wins in (20, 6):
        results = _results(["random", "greedy"], {(0, 1): [1] * wins})
        table = format_table(results)
        top = max(results["ratings"].values(), key=lambda r: r["elo"])
        shown = f"{round(top['elo'])} [{round(top['ci_low'])}, {round(top['ci_high'])}]"
        assert f"{round(top['elo'])}   [{round(top['ci_low'])}, {round(top['ci_high'])}]" in table
        assert f"(e.g. {shown})" in table and "{example}" not in table, table
        assert AT_THE_EDGE[1] in table
    assert "284 [54, 284]" not in table


def test_the_repeated_games_warning_names_the_openings_option() -> None:
    agents = ["az:sims=0", "az:sims=0:c=1.0"]
    same = {"pair": agents, "agents": agents, "seats": {agents[0]: 0, agents[1]: 1}, "moves": [4, 8]}
    lines = [json.dumps({**same, "result": {"winner": 0}})] * 4
    table = format_table(summarise(agents, lines, seed=0))
    assert "played 1 distinct game in 4" in table and "--openings N" in table, table


def test_the_ratings_plot_fits_long_names_without_a_layout_warning(tmp_path) -> None:
    """Long agent specs used to leave tight_layout no room ("Tight layout not applied"): the
    plot now widens to hold the names (each cut to its ends past 48 characters)."""
    import warnings

    pytest.importorskip("matplotlib")
    from PIL import Image

    from carnac_env.arena.ratings import plot_ratings

    agents = ["az:model=runs/a-very-long-folder-name/of-a-run/best.npz:sims=400:c=1.25", "greedy", "a" * 120]
    results = _results(agents, {(i, j): [0, 1, None, 0] for i in range(3) for j in range(i + 1, 3)})
    results.update(board="medium", games_per_pair=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plot_ratings(results, tmp_path / "ratings.png")
    width, _ = Image.open(tmp_path / "ratings.png").size
    assert 600 <= width <= 1200
