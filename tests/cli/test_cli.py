"""The ``carnac`` command: play driven by scripted input, replay, arena, and bad arguments."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _paths import ROOT

from carnac_env.core.boards import make_board
from carnac_env.core.notation import square_name
from carnac_env.core.record import GameRecord


def carnac(*args: str, stdin: str = "", timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "carnac_env.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**__import__("os").environ, "NO_COLOR": "1"},
    )


def scripted_moves(board: str) -> str:
    """Input that always makes progress: for every square a placement then 'decline'; the
    CLI rejects whichever does not fit the moment and asks again."""
    b = make_board(board)
    lines = []
    for _ in range(2):
        for square in range(b.squares):
            lines += [f"{square_name(b, square)} Wew", "decline"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seat", ["0", "1"])
def test_play_a_whole_game_from_scripted_input(tmp_path: Path, seat: str) -> None:
    save = tmp_path / "game.json"
    script = "moves\nnonsense\nz9 Rns\n" + scripted_moves("petit_menec")
    done = carnac(
        "play", "--board", "petit_menec", "--opponent", "greedy", "--seat", seat, "--save", str(save), stdin=script
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Place a megalith" in out or "Tilt the megalith just placed" in out  # the 'moves' help
    assert "Not a move: 'nonsense' is not a move" in out
    assert "z9" in out and "not on the 6 x 6 board" in out
    assert "Game over" in out
    assert f"record saved to {save}" in out
    record = GameRecord.load(save)
    assert record.result is not None
    assert record.replay().is_over
    assert record.meta["seats"] == {"you": int(seat)}


def test_play_stops_on_quit_and_saves_the_game_so_far(tmp_path: Path) -> None:
    save = tmp_path / "partial.json"
    done = carnac("play", "--board", "small", "--opponent", "random", "--save", str(save), stdin="c3 Rns\nquit\n")
    assert done.returncode == 0, done.stderr
    record = GameRecord.load(save)
    assert record.result is None
    assert record.moves[0] == "c3 Rns"
    assert "game stopped" in done.stdout


def test_replay_a_line_of_games_jsonl(tmp_path: Path) -> None:
    out = tmp_path / "arena"
    done = carnac(
        "arena",
        "--board",
        "petit_menec",
        "--agents",
        "random,greedy",
        "--games",
        "2",
        "--workers",
        "1",
        "--out",
        str(out),
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    assert "wins-draws-losses" in done.stdout and "rating" in done.stdout and "Elo scale" in done.stdout
    results = json.loads((out / "results.json").read_text())
    assert results["agents"] == ["random", "greedy"]
    record = GameRecord.load(out / "games.jsonl", line=2)
    shown = carnac("replay", str(out / "games.jsonl"), "--line", "2", "--all")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("\nmove ") == len(record.moves)
    assert f"move {len(record.moves)}: " in shown.stdout
    assert "Game over" in shown.stdout
    # interactive: Enter twice then q
    stepped = carnac("replay", str(out / "games.jsonl"), "--line", "1", stdin="\n\nq\n")
    assert stepped.returncode == 0
    assert "move 2:" in stepped.stdout and "move 3:" not in stepped.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["arena", "--agents", "random,bogus", "--out", "{tmp}/a"], "unknown agent 'bogus'"),
        (["arena", "--agents", "random", "--out", "{tmp}/a"], "at least two agents"),
        (["arena", "--games", "0"], "must be at least 1"),
        (["arena", "--board", "huge", "--out", "{tmp}/a"], "huge"),
        (["arena", "--interval", "wald", "--out", "{tmp}/a"], "invalid choice: 'wald'"),
        (["play", "--opponent", "mcts:sims=x"], "sims='x'"),
        (["play", "--seat", "2"], "invalid choice"),
        (["play", "--board", "nowhere"], "nowhere"),
        (["replay", "{tmp}/missing.json"], "no such file"),
        (["replay", "{tmp}/bad.json"], "game record must be JSON"),
        (["replay", "{tmp}/bad.json", "--line", "5"], "line 5 does not exist"),
        (["dance"], "invalid choice"),
    ],
)
def test_bad_arguments_exit_nonzero_with_a_clear_message(tmp_path: Path, args: list[str], words: str) -> None:
    (tmp_path / "bad.json").write_text("{not json\n")
    done = carnac(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert done.returncode == 2
    assert words in done.stderr
    assert "Traceback" not in done.stderr


def test_gui_without_pygame_says_what_to_install(tmp_path: Path) -> None:
    # Hide pygame (an entry of None in sys.modules makes its import fail), as on an install without the gui extra.
    code = (
        "import sys; sys.modules['pygame'] = None; from carnac_env.cli import main; "
        f"sys.exit(main(['play', '--gui', '--board', 'small', '--save', {str(tmp_path / 'x.json')!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "carnac-env[gui]" in done.stderr and "Traceback" not in done.stderr


def test_replay_writes_a_gif(tmp_path: Path) -> None:
    record = tmp_path / "g.json"
    GameRecord.from_actions(make_board("petit_menec"), [0, 36 * 4 + 4, 4 * 14]).save(record)
    done = carnac("replay", str(record), "--gif", str(tmp_path / "g.gif"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "g.gif").stat().st_size > 0


def test_agents_lists_every_registered_agent_with_its_options() -> None:
    from carnac_env.agents import agent_names, options_of
    from carnac_env.agents.registry import builtin
    from carnac_env.models import shipped_models

    done = carnac("agents")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for name in agent_names():
        description = builtin(name).description
        assert f"\n{name} " in out, name
        assert " ".join(description.split()[:4]) in " ".join(out.split()), description
        for key, known in options_of(builtin(name)).items():
            assert f"{key}={known.text(known.default)}" in out, (name, key)
    # What az plays: every shipped model, and which model plays each board (never one trained elsewhere).
    from carnac_env.core.boards import BOARDS, make_board
    from carnac_env.models import default_model, generations, specialists

    for model in shipped_models():
        assert f"  {model} " in out and f"{model}.npz" in out
    # the specialists and the generations are listed, by the name that plays them, apart from the defaults
    assert specialists() and generations()
    for model in specialists():
        assert f"  {model} " in out and f"specialists/{model}.npz" in out
    for model in generations():
        assert f"  {model} " in out and f"generations/{model}.npz" in out
    assert out.index("play by default") < out.index("one-board specialists") < out.index("frozen generations")
    said = " ".join(out.split())
    for board in BOARDS:
        assert f"{board}" in said and default_model(make_board(board)) in said
    assert "not trained there" not in out and "your.module.Class" in out


def test_arena_help_lists_the_agents_without_pointing_outside_the_package() -> None:
    from carnac_env.agents import agent_names, options_of
    from carnac_env.agents.registry import builtin

    out = carnac("arena", "--help").stdout
    assert "docs/agents.md" not in out and "carnac agents" in out
    for name in agent_names():
        assert f"\n{name} " in out
        known = options_of(builtin(name))
        assert all(f"{key}={option.text(option.default)}" in out for key, option in known.items())


def test_version_prints_the_package_version() -> None:
    from carnac_env._version import __version__

    done = carnac("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"carnac {__version__}"


def test_bare_carnac_prints_the_help_and_succeeds() -> None:
    done = carnac()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: carnac") and "--version" in done.stdout
    for command in ("agents", "arena", "evaluate", "play", "replay", "serve", "train"):
        assert f"    {command} " in done.stdout, command


def _subcommand_parsers() -> dict:
    import argparse

    from carnac_env.cli.parser import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {"": parser, **sub.choices}


def test_every_option_with_a_default_says_it_in_its_help() -> None:
    missing = []
    for name, parser in _subcommand_parsers().items():
        for action in parser._actions:
            if not action.option_strings or action.nargs == 0 or action.required:
                continue  # positionals, flags (--no-progress, --help), required options
            if action.default is not None and "(default" not in (action.help or ""):
                missing.append((name, action.option_strings[0], action.default))
    assert not missing, missing


@pytest.mark.parametrize("columns", ["80", "250"])
def test_every_help_fits_100_columns(monkeypatch: pytest.MonkeyPatch, columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    for name, parser in _subcommand_parsers().items():
        text = parser.format_help()
        widest = max(text.splitlines(), key=len)
        assert len(widest) <= 100, (name, widest)
        if columns == "80":
            assert len(widest) <= 80, (name, widest)


def _play_in_a_terminal(tmp_path: Path, *options: str, env: dict[str, str]) -> bytes:
    """What ``carnac play`` (greedy moves first, then the person quits) writes to a terminal."""
    import os
    import pty

    primary, secondary = pty.openpty()
    (tmp_path / "in.txt").write_text("quit\n")
    command = [sys.executable, "-m", "carnac_env.cli", "play", "--board", "petit_menec", "--opponent", "greedy"]
    with open(tmp_path / "in.txt") as stdin:
        process = subprocess.Popen(
            [*command, "--seat", "1", "--save", str(tmp_path / "g.json"), *options],
            stdin=stdin,
            stdout=secondary,
            stderr=secondary,
            env=env,
        )
    os.close(secondary)
    out = b""
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the terminal's other end closed: the command has ended
            break
        if not chunk:
            break
        out += chunk
    os.close(primary)
    assert process.wait(timeout=300) == 0, out
    return out


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_no_color_and_NO_COLOR_leave_no_escape_code_on_a_terminal(tmp_path: Path) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")} | {"TERM": "xterm"}
    assert b"\x1b[" in _play_in_a_terminal(tmp_path, env=env)  # a terminal: colours by default
    # numba's error highlighting (colorama) used to write ESC[0m at exit once greedy had compiled
    assert b"\x1b" not in _play_in_a_terminal(tmp_path, "--no-color", env=env)
    assert b"\x1b" not in _play_in_a_terminal(tmp_path, env=env | {"NO_COLOR": "1"})


def test_install_hints_are_quoted_for_shells() -> None:
    # zsh globs an unquoted carnac-env[train]: every hint the package prints quotes it
    import re

    import carnac_env

    unquoted = re.compile(r"pip install (?:-e )?(?!['\"])[^\s'\"]*\[")
    found = [
        f"{path.name}: {line.strip()}"
        for path in Path(carnac_env.__file__).parent.rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if unquoted.search(line)
    ]
    assert not found, found


@pytest.mark.parametrize(
    ("agents", "advice"),
    [
        ("greedy,greedy", "greedy has no options: a second copy is the same player; list it once"),
        ("random,mcts,mcts", "give one of them other options (mcts's: sims, seconds"),
        ("az:sims=8,az:sims=8", "(az's: sims, c,"),
    ],
)
def test_an_agent_listed_twice_gets_advice_that_fits_it(tmp_path: Path, agents: str, advice: str) -> None:
    done = carnac("arena", "--agents", agents, "--out", str(tmp_path / "a"))
    assert done.returncode == 2 and advice in done.stderr, done.stderr
    assert "seed" not in done.stderr
    assert not (tmp_path / "a").exists()


_TINY_ARENA = ["--board", "petit_menec", "--agents", "random,greedy", "--games", "1", "--workers", "1", "--no-progress"]


def test_arena_without_out_says_where_it_writes(tmp_path: Path) -> None:
    import os

    done = subprocess.run(
        [sys.executable, "-m", "carnac_env.cli", "arena", *_TINY_ARENA],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert "go to ./carnac-arena in the current folder" in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["carnac-arena"]
    assert "results: carnac-arena/results.json" in done.stdout.replace(os.sep, "/")
    # with --out, nothing to state: the folder is the one asked for (here: the finished arena, shown again)
    again = carnac("arena", *_TINY_ARENA, "--out", str(tmp_path / "carnac-arena"))
    assert again.returncode == 0 and "current folder" not in again.stderr, again.stderr


@pytest.mark.parametrize(
    "agents",
    ["random,bogus", "random,mcts:sims=x", "random,mcts:sims=-3", "random,greedy:depth=2"],
    ids=["unknown agent", "option not a number", "option out of range", "unknown option"],
)
def test_arena_refuses_a_bad_agent_spec_before_saying_where_it_writes(tmp_path, monkeypatch, capsys, agents) -> None:
    """A spec that does not build is refused before the default folder is announced: no word
    about a folder that is never written, and nothing written."""
    from carnac_env.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["arena", "--board", "petit_menec", "--agents", agents, "--games", "1", "--no-progress"]) != 0
    err = capsys.readouterr().err
    assert agents.split(",")[1].split(":")[0] in err and "current folder" not in err, err
    assert list(tmp_path.iterdir()) == []


def test_play_without_save_says_where_the_record_goes(tmp_path: Path) -> None:
    import os

    done = subprocess.run(
        [sys.executable, "-m", "carnac_env.cli", "play", "--board", "petit_menec", "--opponent", "random"],
        cwd=tmp_path,
        input="quit\n",
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    (record,) = tmp_path.iterdir()
    assert f"will be saved to {record.name} in the current folder" in done.stderr


def test_warm_up_says_it_is_compiling_when_it_takes_a_while_and_how_long() -> None:
    from carnac_env.agents.warmup import COMPILE_SECONDS, warm_up

    said: list[str] = []
    warm_up(["random", "greedy", "mcts:sims=500", "your.module.Class"], make_board("small"), say=said.append, after=0)
    assert said[0] == f"compiling the game engine (first run only, about {COMPILE_SECONDS} s)..."
    assert said[1].startswith("compiled in ") and len(said) == 2
    said.clear()
    warm_up(["greedy", "mcts"], make_board("small"), say=said.append, after=600)  # a loaded cache: no word
    assert said == []


def test_warm_up_plays_to_the_end_through_the_late_game_paths(monkeypatch) -> None:
    """What compiled mid-arena before (tree reuse: a reused root restricted, a reused tree
    compacted) is reached by the warm-up's games, which end; the budgets are cut for it."""
    import carnac_env.agents.warmup as warmup
    import carnac_env.search.search as search
    from carnac_env.agents.base import options_of
    from carnac_env.agents.mcts import MCTSAgent
    from carnac_env.core.game import GameState

    calls: dict[str, int] = {}
    for name in ("restrict_root_edges", "compact"):
        compiled = getattr(search, name)
        monkeypatch.setattr(
            search, name, lambda *a, _f=compiled, _n=name: calls.update({_n: calls.get(_n, 0) + 1}) or _f(*a)
        )
    ended: list[GameState] = []
    apply = GameState.apply
    monkeypatch.setattr(
        GameState, "apply", lambda self, a: apply(self, a) or (ended.append(self) if self.is_over else None)
    )
    warmup.warm_up(["random", "greedy", "mcts"], make_board("medium"), say=None)
    assert calls.get("restrict_root_edges", 0) > 0 and calls.get("compact", 0) > 0, calls
    assert len(ended) == 3  # each agent's game reached its end
    known = options_of(MCTSAgent)
    small = warmup._small(known, {"sims": "400", "solve": "5", "seconds": "2"})
    assert small == {"seconds": "0", "sims": "8", "playouts": "1", "solve": "2"}
    assert warmup._small(known, {"sims": "3"})["sims"] == "3"
    assert warmup._small(known, {})["solve"] == "0"  # off stays off


def test_the_arena_compiles_before_its_bar_and_says_so_on_stderr(tmp_path: Path, monkeypatch, capsys) -> None:
    import carnac_env.arena.run as run

    calls = []
    monkeypatch.setattr(run, "warm_up", lambda specs, board, say: calls.append((list(specs), say)))
    run.run_arena(["random", "greedy"], tmp_path / "a", board="petit_menec", games=1, progress=False)
    ((specs, say),) = calls
    assert set(specs) == {"random", "greedy"} and say is None  # no bar, no word
    run.run_arena(["random", "greedy"], tmp_path / "a", board="petit_menec", games=1, progress=False)
    assert len(calls) == 1  # nothing left to play: nothing to compile


@pytest.mark.parametrize(
    ("argv", "env_drop", "error", "not_said"),
    [
        (["arena", "--board", "nosuch"], (), "unknown board 'nosuch'", "carnac-arena"),
        (["arena", "--board", "7x99"], (), "cols=99; expected a whole number in 1..64", "carnac-arena"),
        (["play", "--gui"], ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"), "cannot open a window", "will be saved"),
    ],
)
def test_a_command_refuses_before_it_announces_what_it_would_write(tmp_path, argv, env_drop, error, not_said) -> None:
    """A bad board or a missing display is the first and only thing said: no output folder or
    record path is announced for a run that cannot start, and nothing is written."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in env_drop}
    done = subprocess.run(
        [sys.executable, "-m", "carnac_env.cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 2 and error in done.stderr, done.stderr
    assert not_said not in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_train_help_says_each_default_once() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "carnac_env.cli", "train", "--help"], capture_output=True, text=True, timeout=120
    )
    text = " ".join(done.stdout.split())
    assert "(default every built-in board of the run)" in text
    import re

    assert not re.search(r"\(default[^)]*\) \(default", text), "an option's help says its default twice"
