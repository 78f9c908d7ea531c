"""Outputs that cannot destroy, records that cannot lie (issue 49, items 2, 4 and 6).

* ``carnac evaluate --endgames`` takes the folder's lock, refuses an empty board selection and
  the options it would ignore, and never replaces ``endgames.json`` with less: it merges, and
  says so, or refuses a file that is not results;
* a model file is read once per run: rewritten during an arena (as a trainer rewrites
  ``runs/x/model.npz``), it is ignored, the games play the bytes the record names (in this
  process and in the workers), and a resume with the other file is refused;
* numbers at the API edges: integers range-checked before compiled code, only ASCII digits,
  NaN and Infinity refused by every reader, naming the file.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from carnac_env._files import lock_folder
from carnac_env.cli import main
from carnac_env.errors import CarnacError

# --------------------------------------------------------------------------- evaluate --endgames

EARLIER = [{"agent": "random", "board": "small", "set": "small-v1", "seed": 0, "won_to_loss": 3}]


def _earlier(folder: Path) -> bytes:
    folder.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(EARLIER, indent=2) + "\n").encode()
    (folder / "endgames.json").write_bytes(data)
    return data


@pytest.mark.parametrize("boards", [",", " , ,", ""])
def test_an_empty_board_selection_is_refused_and_keeps_earlier_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], boards: str
) -> None:
    data = _earlier(tmp_path / "eg")
    args = ["evaluate", "greedy", "--endgames", "--board", boards, "--out", str(tmp_path / "eg"), "--no-progress"]
    assert main(args) == 2
    assert "names no board" in capsys.readouterr().err
    assert (tmp_path / "eg" / "endgames.json").read_bytes() == data


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--panel", "petit_menec-v1"], "--panel"),
        (["--games", "3"], "--games"),
        (["--openings", "2"], "--openings"),
        (["--workers", "2"], "--workers"),
        (["--trust-panel-code"], "--trust-panel-code"),
    ],
)
def test_endgames_refuses_the_options_it_would_ignore(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], named: str
) -> None:
    data = _earlier(tmp_path / "eg")
    args = ["evaluate", "greedy", "--endgames", "--board", "petit_menec", "--out", str(tmp_path / "eg"), *extra]
    assert main([*args, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert named in err and "would ignore" in err
    assert (tmp_path / "eg" / "endgames.json").read_bytes() == data


def test_a_locked_folder_is_refused_by_endgames_and_by_evaluate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from carnac_env.evaluate import evaluate

    data = _earlier(tmp_path / "eg")
    with lock_folder(tmp_path / "eg", "another run"):
        args = ["evaluate", "greedy", "--endgames", "--board", "petit_menec", "--out", str(tmp_path / "eg")]
        assert main([*args, "--no-progress"]) == 2
        assert "in use by another run" in capsys.readouterr().err
        with pytest.raises(CarnacError, match="in use by another run"):
            evaluate("greedy", board="petit_menec", games=2, out=tmp_path / "eg", progress=False, echo=lambda _: None)
    assert (tmp_path / "eg" / "endgames.json").read_bytes() == data
    assert sorted(p.name for p in (tmp_path / "eg").iterdir()) == ["endgames.json"]


def test_endgames_merges_into_earlier_results_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _earlier(tmp_path / "eg")
    args = ["evaluate", "greedy", "--endgames", "--board", "petit_menec", "--out", str(tmp_path / "eg")]
    assert main([*args, "--no-progress"]) == 0
    assert "1 new, 0 replaced by the same measurement, 1 kept from before" in capsys.readouterr().out
    rows = json.loads((tmp_path / "eg" / "endgames.json").read_text())
    assert rows[0] == EARLIER[0] and [r["agent"] for r in rows] == ["random", "greedy"]
    first = (tmp_path / "eg" / "endgames.json").read_bytes()
    assert main([*args, "--no-progress"]) == 0  # the same measurement again: replaced, nothing lost
    assert "0 new, 1 replaced by the same measurement, 1 kept from before" in capsys.readouterr().out
    assert (tmp_path / "eg" / "endgames.json").read_bytes() == first


@pytest.mark.parametrize(
    "text",
    ['{"not": "a list"}', "[1, 2]", '[{"agent": "x", "board": "small", "set": "s", "seed": NaN}]', "not json"],
)
def test_an_endgames_file_that_is_not_results_is_refused_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    (tmp_path / "eg").mkdir()
    (tmp_path / "eg" / "endgames.json").write_text(text)
    args = ["evaluate", "greedy", "--endgames", "--board", "petit_menec", "--out", str(tmp_path / "eg")]
    assert main([*args, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "eg" / "endgames.json") in err and "never replaced" in err
    assert (tmp_path / "eg" / "endgames.json").read_text() == text


# --------------------------------------------------------------------------- the model record


def _sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_model_rewritten_while_pinned_is_ignored_and_the_digest_names_the_bytes_loaded(tmp_path: Path) -> None:
    from carnac_env.models import cached, model_digest, model_path, pinned_files, pinned_models

    net_file = tmp_path / "net.npz"
    shutil.copyfile(model_path("general"), net_file)
    first = _sha(net_file)
    with pinned_models():
        played = cached(net_file)
        assert played.sha256 == model_digest(net_file) == first
        shutil.copyfile(model_path("general-g1"), net_file)  # a trainer writes its next model
        assert cached(net_file) is played and model_digest(net_file) == first  # ignored: read once
        assert pinned_files() == {str(net_file.resolve()): model_path("general").read_bytes()}
    # outside a run a rewritten file is read again, and its digest is that of the bytes read
    assert model_digest(net_file) == _sha(net_file) != first
    assert cached(net_file).sha256 == _sha(net_file)


def test_pinned_bytes_that_are_not_a_model_are_refused(tmp_path: Path) -> None:
    from carnac_env.models import pinned_models

    with pytest.raises(CarnacError, match=r"not a readable \.npz model"), pinned_models({str(tmp_path / "x"): b"PK"}):
        pass


ARENA = {"board": "petit_menec", "games": 2, "progress": False, "echo": lambda _: None}


def _arena_with_rewrite(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, workers: int) -> None:
    """An arena (greedy against az on ``tmp_path/net.npz``) whose model file is rewritten
    with another network during the run: after the first game (one worker), or after the
    record is made and before the workers start (two workers)."""
    import carnac_env.arena.run as run_module
    import carnac_env.arena.runner as runner_module
    from carnac_env.arena import run_arena
    from carnac_env.models import model_path

    net_file = tmp_path / "net.npz"
    agents = ["greedy", f"az:sims=0:model={net_file}"]
    shutil.copyfile(model_path("general"), net_file)
    reference = run_arena(agents, tmp_path / "reference", **ARENA)  # the file never changes here
    reference_games = (tmp_path / "reference" / "games.jsonl").read_bytes()

    def rewrite() -> None:
        shutil.copyfile(model_path("general-g1"), net_file)

    if workers == 1:
        play = runner_module.play_arena_game

        def play_then_rewrite(*args, **kwargs):
            finished = play(*args, **kwargs)
            rewrite()
            return finished

        monkeypatch.setattr(runner_module, "play_arena_game", play_then_rewrite)
    else:
        warm_up = run_module.warm_up

        def warm_up_then_rewrite(*args, **kwargs):
            warm_up(*args, **kwargs)
            rewrite()

        monkeypatch.setattr(run_module, "warm_up", warm_up_then_rewrite)
    results = run_arena(agents, tmp_path / "a", workers=workers, **ARENA)
    monkeypatch.undo()
    # the record names the first file's bytes, and every game played them
    assert results["models"] == reference["models"]
    assert results["models"][agents[1]]["sha256"] == _sha(model_path("general"))
    assert (tmp_path / "a" / "games.jsonl").read_bytes() == reference_games
    assert json.loads((tmp_path / "a" / "arena.json").read_text())["models"] == reference["models"]
    # a resume with the file as it is now (another network) is refused, the folder unchanged
    with pytest.raises(CarnacError, match=r"other settings \(models: "):
        run_arena(agents, tmp_path / "a", **ARENA)
    assert (tmp_path / "a" / "games.jsonl").read_bytes() == reference_games


def test_a_model_rewritten_between_arena_games_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _arena_with_rewrite(monkeypatch, tmp_path, workers=1)


@pytest.mark.slow  # two spawned workers
def test_arena_workers_play_the_bytes_the_record_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _arena_with_rewrite(monkeypatch, tmp_path, workers=2)


def test_az_records_the_network_it_holds(tmp_path: Path) -> None:
    from carnac_env.agents import make, model_record
    from carnac_env.core.boards import make_board
    from carnac_env.models import model_path

    net_file = tmp_path / "net.npz"
    shutil.copyfile(model_path("general"), net_file)
    agent = make(f"az:sims=0:model={net_file}")
    shutil.copyfile(model_path("general-g1"), net_file)
    record = model_record(agent, make_board("petit_menec"))
    assert record == {"model": str(net_file), "sha256": _sha(model_path("general"))}


# --------------------------------------------------------------------------- numbers at the edges


@pytest.mark.parametrize("value", [2**63, 10**400, -1])
def test_solve_range_checks_its_integers_before_compiled_code(value: int) -> None:
    from carnac_env.core.game import GameState
    from carnac_env.solve import solve

    state = GameState("custom", rows=4, cols=4, megaliths=5)
    with pytest.raises(CarnacError, match=r"node_limit=.*expected a whole number in 0\.\.9223372036854775807"):
        solve(state, max_megaliths_left=5, node_limit=value, table_mb=1)
    with pytest.raises(CarnacError, match="max_megaliths_left="):
        solve(state, max_megaliths_left=value if value > 0 else -(10**400))
    with pytest.raises(CarnacError, match="table_mb="):
        solve(state, max_megaliths_left=5, table_mb=value)


@pytest.mark.parametrize("value", [2**63, 10**400])
def test_the_search_budget_check_refuses_huge_counts(value: int) -> None:
    from carnac_env.core.game import GameState
    from carnac_env.search import UCT, Search
    from carnac_env.search.evaluators import Playouts

    search = Search("petit_menec", Playouts(), UCT())
    search.set_games([GameState("petit_menec")])
    with pytest.raises(CarnacError, match="sims="):
        search.check_budget(value)
    with pytest.raises(CarnacError, match="sims="):
        search.tree_bytes(value)


@pytest.mark.parametrize(
    "spec", ["mcts:sims=\u0663", "mcts:sims=\uff13", "az:sims=\u0661\u0660", "mcts:seconds=\u0663.5", "greedy:x=1"]
)
def test_spec_numbers_are_read_from_ascii_digits_only(spec: str) -> None:
    from carnac_env.agents import make

    with pytest.raises(CarnacError) as err:
        make(spec)
    assert spec.split("=")[1] in str(err.value)  # the message names the value


def test_user_agent_options_in_other_digits_stay_text() -> None:
    from carnac_env.agents.specs import _convert

    assert _convert("\u0663") == "\u0663" and _convert("3") == 3 and _convert("0.5") == 0.5


@pytest.mark.parametrize("seed", [2**63, 10**400, -1, 1.5, True, "3"])
def test_agent_seeds_are_checked(seed: object) -> None:
    from carnac_env.agents import make

    with pytest.raises(CarnacError, match="agent seed="):
        make("greedy", seed=seed)  # type: ignore[arg-type]


@pytest.mark.parametrize("schedule", ["\u0663:0.1", "3:0.\u0661", "3:1e400"])
def test_the_lr_schedule_reads_ascii_digits_only(schedule: str) -> None:
    from carnac_env.train.config import learning_rates

    with pytest.raises(CarnacError, match="lr_schedule step"):
        learning_rates(schedule)


def test_cli_numbers_are_read_from_ascii_digits_only(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["arena", "--seed", "\u0663", "--out", str(tmp_path / "a"), "--no-progress"])
    assert stop.value.code == 2 and "ASCII digits" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()


def _arena_line() -> str:
    from carnac_env.arena.runner import play_arena_game
    from carnac_env.arena.schedule import schedule
    from carnac_env.core.boards import make_board

    game = schedule(["random", "greedy"], 1, 0, board=make_board("petit_menec"))[0]
    return play_arena_game(make_board("petit_menec"), game)[1]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_record_with_nan_or_infinity_is_refused_naming_the_file(tmp_path: Path, constant: str) -> None:
    from carnac_env.arena.schedule import schedule
    from carnac_env.arena.store import load_games
    from carnac_env.core.boards import make_board
    from carnac_env.core.record import GameRecord
    from carnac_env.errors import RecordError

    line = _arena_line()
    assert GameRecord.from_json(line)  # the line as written reads back
    hostile = line[:-1] + f', "elapsed": {constant}}}'
    record = tmp_path / "game.json"
    record.write_text(hostile)
    with pytest.raises(RecordError, match=f"{record}.*{constant}"):
        GameRecord.load(record)
    games = tmp_path / "games.jsonl"
    games.write_text(hostile + "\n" + line + "\n")
    expected = {g.key: g for g in schedule(["random", "greedy"], 1, 0, board=make_board("petit_menec"))}
    with pytest.raises(CarnacError, match=f"{games} line 1"):
        load_games(games, expected, make_board("petit_menec"))


def test_arena_settings_with_nan_are_refused_naming_the_file(tmp_path: Path) -> None:
    from carnac_env.arena.store import ArenaStore

    (tmp_path / "arena.json").write_text('{"agents": ["random", "greedy"], "seed": NaN}')
    with pytest.raises(CarnacError, match=f"{tmp_path / 'arena.json'} is not an arena's settings"):
        ArenaStore(tmp_path).check_settings({"agents": ["random", "greedy"], "seed": 0})


@pytest.mark.parametrize("constant", ["NaN", "Infinity"])
def test_a_panel_with_nan_is_refused_naming_the_file(tmp_path: Path, constant: str) -> None:
    from carnac_env.evaluate.panel import PANEL_DIR, load_panel

    shipped = sorted(PANEL_DIR.glob("petit_menec-v*.json"))[0]
    data = json.loads(shipped.read_text())
    data["measured"]["note"] = "__HERE__"
    path = tmp_path / "panel.json"
    path.write_text(json.dumps(data).replace('"__HERE__"', constant))
    with pytest.raises(CarnacError, match=f"{path} is not a panel file.*{constant}"):
        load_panel(path)


def test_an_endgame_set_with_nan_is_refused_naming_the_file(tmp_path: Path) -> None:
    from carnac_env.evaluate.endgames.sets import ENDGAME_DIR, load_endgames

    text = (ENDGAME_DIR / "petit_menec-v1.json").read_text()
    path = tmp_path / "set.json"
    path.write_text(text.replace('"version": 1', '"version": 1, "extra": NaN', 1))
    assert '"extra": NaN' in path.read_text()
    with pytest.raises(CarnacError, match=f"endgame set {path}: not a JSON file.*NaN"):
        load_endgames(path)
