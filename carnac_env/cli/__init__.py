"""The ``carnac`` command: every command line of the package, one subcommand each.

    carnac                                        # the help: every subcommand (carnac --version: the version)
    carnac agents                                 # every agent, its options and the shipped az models
    carnac analyse GAME.json [--html game.html] [--svg PATH] [--png PATH]   # review a game with az's eyes
    carnac arena                                  # the default: random, greedy, mcts on medium
    carnac arena --board medium --agents random,greedy,mcts:sims=200 --games 20 --seed 0 --workers 2 --out DIR
    carnac arena ... --ray [ADDRESS]              # the games as Ray tasks (the ray extra)
    carnac diagnose MODEL [--board small]         # how well a model's value head predicts
    carnac endgames --make BOARD [--version N]    # make a board's endgame set
    carnac evaluate SPEC --board medium [--panel medium-v1] [--games N] [--seed S] [--workers W] [--out DIR]
    carnac evaluate SPEC --endgames [--board B]   # the agent's errors on the endgame sets
    carnac evaluate SPEC --perfect [--games N]    # its own games judged by the solver from K left
    carnac panel ARENA_DIR --name medium --version 2 --command "carnac arena ..."   # a new reference panel
    carnac play --board medium --opponent mcts [--seat 1] [--save game.json] [--gui]
    carnac replay FILE [--line N] [--all] [--gif PATH | --mp4 PATH | --html PATH]
    carnac serve [--port 8080] [--agents greedy,mcts,az,random] [--open]   # play in the browser (serve extra)
    carnac train --board small --out DIR          # AlphaZero-style training (the train extra)
    carnac train ... --workers N | --ray [ADDRESS]   # self-play games in N processes or on Ray actors

Without the console script installed, run ``python -m carnac_env.cli``; ``python -m
carnac_env.train``, ``python -m carnac_env.analysis`` and ``python -m carnac_env.evaluate.endgames``
are ``carnac train``, ``carnac analyse`` and ``carnac endgames``. Every user
mistake prints one line starting with ``carnac: error:`` and exits with status 2: a bad
option or value (:class:`CarnacArgumentParser`), and a :class:`~carnac_env.errors.CarnacError`
raised anywhere under a subcommand (caught once, in :func:`main`).

The modules: :mod:`~carnac_env.cli.parser` (the options of every subcommand),
:mod:`~carnac_env.cli.commands` (the subcommands that call a library function),
:mod:`~carnac_env.cli.train` (training: its options and the run), :mod:`~carnac_env.cli.analyse`
(a game's review), :mod:`~carnac_env.cli.play` (the terminal game), :mod:`~carnac_env.cli.replay`
(replays) and :mod:`~carnac_env.cli.terminal` (what the last two share); this one dispatches and
turns errors into the one-line message.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from carnac_env.cli.analyse import cmd_analyse
from carnac_env.cli.commands import (
    cmd_agents,
    cmd_arena,
    cmd_diagnose,
    cmd_endgames,
    cmd_evaluate,
    cmd_panel,
    cmd_serve,
    cmd_solve,
)
from carnac_env.cli.parser import build_parser
from carnac_env.cli.play import cmd_play
from carnac_env.cli.replay import cmd_replay
from carnac_env.cli.train import cmd_train
from carnac_env.errors import CarnacError

__all__ = ["build_parser", "cmd_play", "cmd_replay", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``carnac`` console script; returns the exit status."""
    # numba's error highlighting (colorama) writes ESC[0m to a terminal at exit once anything
    # compiled, even under --no-color or NO_COLOR; it must be off before numba is imported
    # (build_parser imports the agents). Our own colours are render.ansi's, --no-color's to stop.
    os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.subcommand is None:  # a bare ``carnac``: what it can do
        parser.print_help()
        return 0
    handlers = {
        "agents": cmd_agents,
        "analyse": cmd_analyse,
        "arena": cmd_arena,
        "diagnose": cmd_diagnose,
        "endgames": cmd_endgames,
        "evaluate": cmd_evaluate,
        "panel": cmd_panel,
        "play": cmd_play,
        "replay": cmd_replay,
        "serve": cmd_serve,
        "solve": cmd_solve,
        "train": cmd_train,
    }
    try:
        return handlers[args.subcommand](args)
    except CarnacError as err:
        print(f"carnac: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a file or folder named on the command line that cannot be used
        if isinstance(err, BrokenPipeError):
            return _quiet_broken_pipe()
        print(f"carnac: error: {_describe_os_error(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


def _quiet_broken_pipe() -> int:
    """Output piped into a pager or ``head`` that quit early: stop quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0


def _describe_os_error(err: OSError) -> str:
    """``cannot use PATH: REASON`` for an OSError (the reason alone when it names no file)."""
    reason = err.strerror or str(err)
    if err.filename is None:
        return reason
    return f"cannot use {err.filename}: {reason}"
