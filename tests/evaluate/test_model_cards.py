"""scripts/make_model_card.py: a card's arena entries come from the arena's own files, with the
score and its Wilson 95% interval, and the general model's entries name their board."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _scripts import load_script


def _arena(folder: Path, board: str, agents: list[str], wins_a: int, draws: int, wins_b: int) -> Path:
    folder.mkdir(parents=True)
    settings = {
        "board": board,
        "agents": agents,
        "games_per_pair": wins_a + draws + wins_b,
        "openings": 4,
        "seed": 2026,
    }
    (folder / "arena.json").write_text(json.dumps(settings))
    pair = {"a": agents[0], "b": agents[1], "wins_a": wins_a, "draws": draws, "wins_b": wins_b}
    (folder / "results.json").write_text(json.dumps({"pairs": [pair]}))
    return folder


def test_an_entry_has_the_result_its_score_and_interval_and_the_command(tmp_path):
    card = load_script("scripts/make_model_card.py")
    folder = _arena(tmp_path / "a", "large", ["az:model=/runs/best.npz", "mcts"], 30, 2, 8)
    name, entry = card.arena_entry(folder, "/runs/best.npz", by_board=True)
    assert name == "large: az:model=general vs mcts"
    assert entry["result"] == "30-2-8" and entry["games"] == 40
    assert entry["score"] == pytest.approx(31 / 40, abs=1e-3)
    low, high = entry["interval_95"]
    assert low < 31 / 40 < high and 0.6 < low < 0.65 and 0.85 < high < 0.9  # Wilson, n = 40
    command = "carnac arena --board large --agents az:model=general,mcts --games 40 --openings 4 --seed 2026"
    assert entry["command"] == command


def test_the_specialist_is_named_and_a_specialist_card_keeps_plain_names(tmp_path):
    card = load_script("scripts/make_model_card.py")
    folder = _arena(tmp_path / "s", "small", ["az:model=cand.npz", "az:model=small"], 18, 0, 22)
    name, entry = card.arena_entry(folder, "cand.npz", by_board=True)
    assert name == "small: az:model=general vs the specialist" and entry["score"] == 0.45
    folder = _arena(tmp_path / "g", "small", ["az:model=cand.npz:sims=0", "greedy"], 39, 0, 1)
    name, _ = card.arena_entry(folder, "cand.npz")
    assert name == "az:sims=0 vs greedy"


def test_the_report_table_reads_each_pair_and_shows_a_dash_for_one_not_played(tmp_path):
    report = load_script("scripts/general_report.py")
    _arena(tmp_path / "large-az-mcts", "large", ["az:model=general", "mcts"], 38, 0, 2)
    rows = {line.split(" | ")[0].strip("| "): line for line in report.table(tmp_path).splitlines()[2:]}
    assert rows["large"] == "| large | 38-0-2 (95, 83-99%) | - | - | - |"
    assert rows["small"] == "| small | - | - | - | - |"
    assert report.main([str(tmp_path / "missing")]) == 2
    # a selection folder (scripts/general_select.sh) adds the column of the candidate against general
    _arena(tmp_path / "small-az-general", "small", ["az:model=cand.npz", "az:model=general"], 13, 0, 7)
    rows = {line.split(" | ")[0].strip("| "): line for line in report.table(tmp_path).splitlines()[2:]}
    assert rows["small"] == "| small | - | - | - | - | 13-0-7 (65, 43-82%) |"


def test_the_report_names_the_model_files_and_flags_one_that_changed_between_arenas(tmp_path, capsys):
    report = load_script("scripts/general_report.py")
    for board, digest in (("small", "sha256:aa"), ("large", "sha256:aa"), ("medium", "sha256:bb")):
        folder = _arena(tmp_path / f"{board}-az-greedy", board, ["az:model=cand.npz", "greedy"], 20, 0, 0)
        results = json.loads((folder / "results.json").read_text())
        results["models"] = {"az:model=cand.npz": {"model": "cand.npz", "sha256": digest}}
        (folder / "results.json").write_text(json.dumps(results))
    assert report.models(tmp_path) == [
        "- `az:model=cand.npz`: sha256:aa (2 arenas) **another file than in other arenas**",
        "- `az:model=cand.npz`: sha256:bb (1 arena) **another file than in other arenas**",
    ]
    assert report.main([str(tmp_path)]) == 0
    assert "Model files played:" in capsys.readouterr().out
    assert report.models(tmp_path / "small-az-greedy") == []  # an arena folder itself holds no arenas


def test_the_cpu_table_sums_each_boards_self_play_and_leaves_the_rest_to_the_learner(tmp_path):
    cpu = load_script("scripts/general_cpu.py")
    (tmp_path / "config.json").write_text(
        json.dumps({"board": "general", "mix": "small:1,large:3", "games_per_board": 16})
    )
    header = "iteration,games,selfplay_cpu@small,selfplay_cpu@large,cpu_seconds\n"
    # 2 iterations of 4 groups: the schedule gives large 3 groups in 4, small 1
    (tmp_path / "curve.csv").write_text(header + "1,64,360,3600,5400\n2,128,,7200,14400\n")
    rows = {line.split(" | ")[0].strip("| *"): line for line in cpu.table(tmp_path / "curve.csv").splitlines()[2:]}
    assert rows["small"] == "| small | 32 | 0.10 | 2% |"
    assert rows["large"] == "| large | 96 | 3.00 | 75% |"
    assert (
        rows["the learner (gradient steps, evaluations)"]
        == "| the learner (gradient steps, evaluations) | | 0.90 | 22% |"
    )
    assert rows["all"] == "| **all** | 128 | **4.00** | 100% |"
    # the command line takes the run's folder too, and says what is missing instead of a traceback
    assert cpu.main([str(tmp_path)]) == 0
    with pytest.raises(SystemExit) as stop:
        cpu.main([str(tmp_path / "nowhere")])
    assert stop.value.code == 2
