"""The ``carnac`` command's argument parser: one function per subcommand, and the error style.

Every command line of the package is declared here (``carnac train``'s options in
:mod:`carnac_env.cli.train`, beside the table of their help): the ``python -m`` entries
(``carnac_env.train``, ``carnac_env.analysis``, ``carnac_env.evaluate.endgames``) forward to
:func:`carnac_env.cli.main`."""

from __future__ import annotations

import argparse
import os
import shutil
import textwrap
from typing import Any, NoReturn

from carnac_env.cli.options import add_ray_option

__all__ = ["DEFAULT_ARENA", "HELP_WIDTH", "CarnacArgumentParser", "build_parser", "help_width"]

#: The widest a help text is written (a terminal wider than this still gets lines this long).
HELP_WIDTH = 100

#: The embedded default arena (the README's main command, ``carnac arena``; the README gives
#: its measured time, benchmarks/readme_commands.py measures it).
#: How a --board names a custom board (the syntax: carnac_env.core.boards.parse_board).
CUSTOM_BOARD = "a custom size such as 7x9 or 7x9:megaliths=30,min_dolmen=4,last_tilt=0"
DEFAULT_ARENA = {"board": "medium", "agents": "random,greedy,mcts", "games": 4, "seed": 0, "out": "carnac-arena"}


def _whole(text: str) -> int:
    """An option's whole number, in ASCII digits only (``int()`` would read ``"٣"`` as 3)."""
    from carnac_env._checks import whole_text
    from carnac_env.errors import CarnacError

    try:
        return whole_text("value", text)
    except CarnacError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (in ASCII digits)") from None


def _real(text: str) -> float:
    """An option's finite real number, in ASCII digits only."""
    from carnac_env._checks import number_text
    from carnac_env.errors import CarnacError

    try:
        return number_text("value", text)
    except CarnacError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number (in ASCII digits)") from None


def _positive(text: str) -> int:
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def help_width() -> int:
    """The width help texts are written at: the terminal's, at most :data:`HELP_WIDTH` columns
    (80 when the output is not a terminal)."""
    return max(40, min(HELP_WIDTH, shutil.get_terminal_size((80, 24)).columns) - 2)


def _defaults_word(default: Any) -> str:
    """How a default reads in a help text: ``(default X)``."""
    return f"(default {default})"


class CarnacArgumentParser(argparse.ArgumentParser):
    """argparse's parser with the command's one error style: a bad option (an unknown one, a
    missing value, a value its type refuses) prints ``carnac: error: SUBCOMMAND: ...`` on one
    line and exits with status 2, as a :class:`CarnacError` raised by a subcommand does.
    Subcommand parsers (``carnac train``'s too) are made of this class. Its help is written at
    :func:`help_width` columns (never wider than :data:`HELP_WIDTH`, whatever the terminal)."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=help_width())

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("carnac").strip()
        where = f"{command}: " if command else ""
        self.exit(2, f"carnac: error: {where}{message}; see '{self.prog} --help'\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``carnac`` command (without a subcommand, :func:`main`
    prints its help)."""
    from carnac_env._version import __version__
    from carnac_env.core.boards import BOARDS

    boards = ", ".join(BOARDS)
    parser = CarnacArgumentParser(
        prog="carnac",
        description="Carnac: agents, analyse, arena, diagnose, endgames, evaluate, panel, play, replay, serve, "
        "solve and train. "
        "'carnac COMMAND --help' says more about each.",
    )
    parser.add_argument("--version", action="version", version=f"carnac {__version__}")
    # dest: not "command", which is an option of carnac panel (--command, the arena's command line)
    sub = parser.add_subparsers(dest="subcommand", metavar="COMMAND")
    for add in (
        _add_agents,
        _add_analyse,
        _add_arena,
        _add_diagnose,
        _add_endgames,
        _add_evaluate,
        _add_panel,
        _add_play,
        _add_replay,
        _add_serve,
        _add_solve,
        _add_train,
    ):
        add(sub, boards)
    return parser


def _add_agents(sub: Any, boards: str) -> None:
    """``carnac agents``: list the agents, their options and the shipped models."""
    sub.add_parser(
        "agents",
        help="list the agents, their options and the shipped az models",
        description="List every built-in agent with what it does and its options (an agent spec is "
        "NAME[:OPTION=VALUE...], e.g. mcts:sims=400 or az:model=runs/az/best.npz:sims=0), "
        "and the models the az agent plays.",
    )


def _add_analyse(sub: Any, boards: str) -> None:
    """``carnac analyse``: review a game with the learned agent (:mod:`carnac_env.cli.analyse`)."""
    analyse = sub.add_parser(
        "analyse",
        help="review a game with the learned agent: its expected score, its mistakes, the solver's verdicts",
        description="Review a game with the learned agent: Red's expected score at the start and the end, the "
        "moves where the mover's expected score dropped most with the agent's preferred move, and the moves that "
        "threw a solved result away. --html writes the game's web replay with the agent's view in it, --svg/--png "
        "the curve; one of them may be -, standard output (the review in words then goes to standard error). "
        "See docs/analysis.md.",
    )
    analyse.add_argument("game", help="a game record (.json) or an arena's games.jsonl (with --line)")
    analyse.add_argument("--line", type=int, default=None, help="the game's line in a .jsonl file (1: the first)")
    analyse.add_argument(
        "--model", default=None, help="a model file or shipped model name (default: az's for the board)"
    )
    analyse.add_argument("--sims", type=int, default=200, help="simulations of each searched position (default 200)")
    analyse.add_argument(
        "--search",
        default="mistakes",
        choices=("mistakes", "all", "none"),
        help="which positions to search (default mistakes)",
    )
    analyse.add_argument(
        "--solve", type=int, default=7, help="solve positions with at most N megaliths left (default 7; 0: none)"
    )
    analyse.add_argument("--mistakes", type=int, default=3, help="how many of the biggest drops to list (default 3)")
    analyse.add_argument(
        "--html", default=None, help="write the web replay with the agent's view to this .html file (-: stdout)"
    )
    analyse.add_argument("--svg", default=None, help="write the curve to this .svg file (-: standard output)")
    analyse.add_argument("--png", default=None, help="write the curve to this .png file (-: standard output)")


def _add_arena(sub: Any, boards: str) -> None:
    """``carnac arena``: a round robin between agents."""
    from carnac_env.agents import agent_table
    from carnac_env.arena.ratings import INTERVALS

    arena = sub.add_parser(
        "arena",
        help="round robin between agents, with ratings",
        description=textwrap.fill(
            "Round robin between agents: every pair plays --games games, seats alternating. "
            "Writes OUT/games.jsonl, OUT/results.json (and OUT/ratings.png with matplotlib). "
            "Run the same command again to resume an interrupted arena. "
            f"Without options: {DEFAULT_ARENA['agents']} on {DEFAULT_ARENA['board']}, "
            f"{DEFAULT_ARENA['games']} games per pair, written to ./{DEFAULT_ARENA['out']}.",
            help_width(),
        ),
        epilog="agents (carnac agents says more about each option):\n" + agent_table(options=False, width=help_width()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    arena.add_argument(
        "--board",
        default=DEFAULT_ARENA["board"],
        help=f"board: a name ({boards}) or {CUSTOM_BOARD} {_defaults_word(DEFAULT_ARENA['board'])}",
    )
    arena.add_argument(
        "--agents",
        default=DEFAULT_ARENA["agents"],
        help="comma-separated agent specs, e.g. random,greedy,mcts:sims=200 (the agents are listed below) "
        + _defaults_word(DEFAULT_ARENA["agents"]),
    )
    arena.add_argument(
        "--games",
        type=_positive,
        default=DEFAULT_ARENA["games"],
        help=f"games per pair {_defaults_word(DEFAULT_ARENA['games'])}",
    )
    arena.add_argument(
        "--seed", type=_whole, default=DEFAULT_ARENA["seed"], help=f"arena seed {_defaults_word(DEFAULT_ARENA['seed'])}"
    )
    arena.add_argument(
        "--openings",
        type=_whole,
        default=0,
        metavar="K",
        help="open every game with K uniformly random plies from a set seeded by --seed, each opening played "
        "once from each seat, so that deterministic agents play different games (default 0: none)",
    )
    arena.add_argument(
        "--workers",
        type=_positive,
        default=min(2, os.cpu_count() or 1),
        help="worker processes (default 2, or 1 on a one-core machine)",
    )
    arena.add_argument(
        "--out",
        default=None,
        help=f"output folder, created if needed {_defaults_word(DEFAULT_ARENA['out'] + ', in the current folder')}",
    )
    arena.add_argument(
        "--interval",
        choices=INTERVALS,
        default="bootstrap",
        help="the ratings' 95%% intervals: bootstrap (200 refits seeded by --seed) or likelihood (profile "
        "likelihood-ratio, as the evaluation panels have; it always holds the rating) (default: bootstrap)",
    )
    arena.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_ray_option(
        arena,
        "play the games as Ray tasks (needs the ray extra): alone, on a local Ray started for the run "
        "(--workers CPUs); 'auto', on the cluster of this machine; HOST:PORT, on the cluster there (docs/cluster.md) "
        "(default: no Ray, local processes)",
    )


def _add_diagnose(sub: Any, boards: str) -> None:
    """``carnac diagnose``: how well a model's value head predicts (:mod:`carnac_env.train.diagnose`)."""
    diagnose = sub.add_parser(
        "diagnose",
        help="how well a model's value head predicts the results of games",
        description="How well a model's value head predicts: play --games games (seeded random openings, then "
        "--player for both seats), ask the network for its value at every position and compare it with the game's "
        "result, beside the mean of --playouts random playouts from each position. Prints the errors and "
        "correlations as JSON (docs/training.md).",
    )
    diagnose.add_argument("model", help="a model file or a shipped model name")
    diagnose.add_argument("--board", default="small", help="the board of the games (default small)")
    diagnose.add_argument("--games", type=int, default=40, help="games played (default 40)")
    diagnose.add_argument("--sims", type=int, default=64, help="simulations of the az agent over MODEL (default 64)")
    diagnose.add_argument("--openings", type=int, default=4, help="random plies opening each game (default 4)")
    diagnose.add_argument(
        "--playouts", type=int, default=32, help="random playouts from each position, the reference (default 32)"
    )
    diagnose.add_argument("--seed", type=int, default=0, help="seed of the openings and the playouts (default 0)")
    diagnose.add_argument("--player", default="", help="agent spec that plays the games (default: az over MODEL)")


def _add_endgames(sub: Any, boards: str) -> None:
    """``carnac endgames``: make a board's endgame set (:mod:`carnac_env.evaluate.endgames`)."""
    endgames = sub.add_parser(
        "endgames",
        help="make an endgame set (carnac evaluate SPEC --endgames plays one)",
        description="Make an endgame set (see carnac_env/evaluate/endgames/). Agents are measured on the sets "
        "by carnac evaluate SPEC --endgames.",
    )
    endgames.add_argument("--make", required=True, metavar="BOARD", help=f"the board ({boards})")
    endgames.add_argument("--positions", type=int, default=None, help="positions to keep (default: MAKE_SETTINGS)")
    endgames.add_argument("--megaliths-left", type=int, default=None, help="the most megaliths left (default: ours)")
    endgames.add_argument("--node-limit", type=int, default=None, help="skip a position whose solve passes it")
    endgames.add_argument("--seed", type=int, default=0, help="seed of the games (default 0)")
    endgames.add_argument("--version", type=int, default=1, help="the set's version (default 1)")
    endgames.add_argument("--out", default=None, help="the file to write (default: the package's BOARD-vVERSION.json)")


def _add_evaluate(sub: Any, boards: str) -> None:
    """``carnac evaluate``: an agent against a reference panel."""
    evaluate = sub.add_parser(
        "evaluate",
        help="rate an agent against a fixed reference panel",
        description="Play an agent against a versioned reference panel (seats alternating, published default "
        "games and seed) and rate it on the panel's fixed scale (random = 0). Writes OUT/card.json, "
        "OUT/games.jsonl and OUT/arena.json; run the same command again to resume. See docs/evaluating.md.",
    )
    evaluate.add_argument("spec", help="the agent's spec, e.g. greedy, mcts:sims=400 or mypkg.mod.MyAgent")
    evaluate.add_argument(
        "--board",
        default=None,
        help=f"board: a name ({boards}) or {CUSTOM_BOARD} (default medium; with --endgames a comma-separated "
        "list of names, default every board)",
    )
    evaluate.add_argument(
        "--endgames",
        action="store_true",
        help="instead of games against a panel: the share of the shipped endgame positions where the agent's move "
        "throws away a win or a draw, against the solved values, per board (docs/evaluating.md)",
    )
    evaluate.add_argument(
        "--perfect",
        action="store_true",
        help="instead of games against a panel: the agent plays --games whole games against itself (default 20, "
        "on --board, default petit_menec) and every move it makes with at most --megaliths-left megaliths left is "
        "judged by the exact solver: the share that throws away a win or a draw (docs/evaluating.md)",
    )
    evaluate.add_argument(
        "--megaliths-left",
        type=_positive,
        default=None,
        metavar="K",
        help="with --perfect: judge the moves made with at most K megaliths left (default 8, or every megalith of a "
        "smaller board; the solver's time "
        "grows about 7-15x a megalith)",
    )
    evaluate.add_argument(
        "--panel", default=None, help="panel id (e.g. medium-v1) or panel .json file (default: the newest for --board)"
    )
    evaluate.add_argument(
        "--trust-panel-code",
        action="store_true",
        help="let the --panel file name members by import path (mypkg.mod.Agent): their modules are imported "
        "and run. Only for a panel file you trust; without it a panel may name built-in agents only "
        "(docs/security.md)",
    )
    evaluate.add_argument("--games", type=_positive, default=None, help="games per panel member (default: the panel's)")
    evaluate.add_argument(
        "--openings",
        type=_whole,
        default=None,
        metavar="K",
        help="open every game with K seeded random plies, each opening once from each seat "
        "(default: the panel's, 0 for the v1 panels and 4 for v2)",
    )
    evaluate.add_argument("--seed", type=_whole, default=None, help="evaluation seed (default: the panel's)")
    evaluate.add_argument(
        "--workers",
        type=_positive,
        default=None,  # cmd_evaluate's default_workers; --endgames refuses a --workers given
        help="worker processes (default 2, or 1 on a one-core machine)",
    )
    evaluate.add_argument(
        "--out", default=None, help="output folder, created if needed (default carnac-evaluate, in the current folder)"
    )
    evaluate.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_ray_option(
        evaluate,
        "play the games as Ray tasks, as arena (default: no Ray)",
    )


def _add_panel(sub: Any, boards: str) -> None:
    """``carnac panel``: write a new reference panel from a finished round robin."""
    panel = sub.add_parser(
        "panel",
        help="write a new reference panel from a finished round robin",
        description="Write a new panel file from a finished round robin (never over an existing one). "
        "See docs/evaluating.md.",
    )
    panel.add_argument("arena_dir", help="the output folder of the panel's round robin")
    panel.add_argument("--name", required=True, help="the panel's name, e.g. medium")
    panel.add_argument("--version", type=int, required=True, help="the panel's version, a new one")
    panel.add_argument("--command", required=True, help="the exact command that played the round robin")
    panel.add_argument(
        "--anchor", default="random", help="the member pinned at 0 on the panel's scale (default random)"
    )
    panel.add_argument("--games", type=int, default=20, help="an evaluation's default games per opponent (default 20)")
    panel.add_argument("--seed", type=int, default=1, help="an evaluation's default seed (default 1)")
    panel.add_argument("--note", default="", help="a note stored in the panel file (default none)")
    panel.add_argument("--out", default=None, help="the file (default: the package's panels folder)")


def _add_play(sub: Any, boards: str) -> None:
    """``carnac play``: a game against an agent in the terminal (or a window)."""
    play = sub.add_parser(
        "play",
        help="play against an agent in the terminal",
        description="Play against an agent. Enter moves in the notation ('c4 Rns', 'tilt N', 'decline'); "
        "'moves' (or 'help') lists the legal moves, 'quit' or Ctrl-C stops (the game so far is saved).",
    )
    play.add_argument(
        "--board",
        default="medium",
        help=f"board: a name ({boards}) or {CUSTOM_BOARD} (default medium)",
    )
    play.add_argument("--opponent", default="mcts", help="the opponent's agent spec (default mcts)")
    play.add_argument(
        "--seat", type=_whole, choices=(0, 1), default=0, help="0: you are Red and move first; 1: White (default 0)"
    )
    play.add_argument("--seed", type=_whole, default=0, help="the opponent's seed (default 0)")
    play.add_argument(
        "--save",
        default=None,
        help="where to save the game record (default carnac-game-TIME.json, in the current folder)",
    )
    play.add_argument("--gui", action="store_true", help="play in a window (needs the gui extra)")
    play.add_argument("--no-color", action="store_true", help="no ANSI colours")


def _add_replay(sub: Any, boards: str) -> None:
    """``carnac replay``: step through a recorded game, or write it as a file."""
    replay = sub.add_parser(
        "replay",
        help="step through a recorded game",
        description="Step through a game record (a .json file, or a line of a .jsonl file such as "
        "an arena's games.jsonl). Enter advances, 'q' stops.",
    )
    replay.add_argument("file", help="a game record (.json) or a file of records (.jsonl)")
    replay.add_argument(
        "--line", type=_positive, default=None, help="the record's line in a .jsonl file, from 1 (default 1)"
    )
    replay.add_argument("--all", action="store_true", help="print every step without waiting")
    replay.add_argument("--gif", default=None, metavar="PATH", help="write an animated GIF to PATH instead")
    replay.add_argument(
        "--mp4", default=None, metavar="PATH", help="write an MP4 video to PATH instead (needs the video extra)"
    )
    replay.add_argument(
        "--html",
        default=None,
        metavar="PATH",
        help="write to PATH one self-contained web page with the board, step/scrub controls and the move list",
    )
    replay.add_argument("--fps", type=_real, default=2.0, help="frames per second of --gif/--mp4 (default 2)")
    replay.add_argument("--no-color", action="store_true", help="no ANSI colours")


def _add_serve(sub: Any, boards: str) -> None:
    """``carnac serve``: the browser game."""
    from carnac_env.agents import agent_table
    from carnac_env.serve import DEFAULT_MEMORY_MB, DEFAULT_PORT, MEMORY_HELP

    serve = sub.add_parser(
        "serve",
        help="play against an agent in a web browser (needs the serve extra)",
        description=textwrap.fill(
            "A local web server with a page where you play against an agent on any board: click a "
            "square and an orientation to place (the tilts it would allow are previewed), click where a tilt "
            "lands or decline; the score, who leads and why are shown as you play; undo, and download the game "
            "record (for carnac replay). The agents think in worker threads, so the page stays responsive. "
            "Bound to 127.0.0.1 unless --host says otherwise. Ctrl-C stops it.",
            help_width(),
        ),
        epilog="agents:\n" + agent_table(options=False, width=help_width()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    serve.add_argument(
        "--port", type=_whole, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free port)"
    )
    serve.add_argument(
        "--agents",
        default="greedy,mcts,az,random",
        help="the opponents the page offers, comma-separated specs (default greedy,mcts,az,random); "
        "their options set the budget, e.g. mcts:sims=500 (a page cannot ask for others)",
    )
    serve.add_argument(
        "--boards",
        default=None,
        help=f"the boards the page offers, comma-separated: names or custom sizes ({CUSTOM_BOARD}) "
        f"(default all: {boards})",
    )
    serve.add_argument("--workers", type=_positive, default=2, help="threads the agents think in (default 2)")
    serve.add_argument(
        "--memory", type=_positive, default=DEFAULT_MEMORY_MB, help=MEMORY_HELP.format(default=DEFAULT_MEMORY_MB)
    )
    serve.add_argument("--open", action="store_true", help="open the page in the default web browser")


def _add_solve(sub: Any, boards: str) -> None:
    """``carnac solve BOARD``: solve a board's whole game (:mod:`carnac_env.solve.whole_game`)."""
    solve = sub.add_parser(
        "solve",
        help="solve a board's whole game from the first move, in pieces that resume",
        description="Solve BOARD's game from the start: the tree is cut PLIES moves in, the positions there are "
        "solved one by one by the exact solver (those that can still change the start's value, first along the "
        "first line), each in pieces followed by a checkpoint in OUT. Run the same command again to go on. Prints "
        "the start's value for the first player (1 a win, 0 a draw, -1 a loss) once it is proved (exit status 0), or "
        "how far it got when it stops before that (--hours; exit status 3). docs/solver.md "
        "tells the story of petit_menec's run.",
    )
    solve.add_argument("board", help=f"the board ({boards}, or {CUSTOM_BOARD})")
    solve.add_argument("--out", default=None, help="the run's folder (default carnac-solve-BOARD)")
    solve.add_argument("--plies", type=_whole, default=2, help="where the tree is cut, in moves (default 2)")
    solve.add_argument("--workers", type=_positive, default=2, help="positions solved at once (default 2)")
    solve.add_argument("--hours", type=_real, default=0.0, help="stop after about this long (default 0: when proved)")
    solve.add_argument("--chunk-seconds", type=_real, default=300.0, help="seconds between checkpoints (default 300)")
    solve.add_argument("--table-mb", type=_positive, default=1024, help="each worker's table in MiB (default 1024)")
    solve.add_argument(
        "--kernel-order",
        action="store_true",
        help="solve the first plies' positions in the kernel's move order, not the az network's (the order "
        "changes how soon the value is proved, never the value)",
    )
    add_ray_option(
        solve,
        "solve the leaves as Ray tasks (needs the ray extra): alone, on a local Ray started for the run "
        "(--workers CPUs); 'auto', on the cluster of this machine; HOST:PORT, on the cluster there (docs/cluster.md)",
    )


def _add_train(sub: Any, boards: str) -> None:
    """``carnac train``: the trainer's own options (:mod:`carnac_env.cli.train`)."""
    train = sub.add_parser(
        "train",
        help="AlphaZero-style training of the az agent (needs the train extra)",
        description="Self-play training of a policy-value network for the az agent on the batched "
        "engine: a greedy bootstrap, then PUCT self-play. Writes OUT/checkpoint.pt, OUT/model.npz, "
        "OUT/best.npz and the learning curve; run the same command again to resume. See docs/training.md.",
    )
    from carnac_env.cli.train import add_arguments as add_train_arguments

    add_train_arguments(train)
