"""The ``carnac`` subcommands that hand over to a library function: ``agents``, ``arena``,
``diagnose``, ``endgames``, ``evaluate``, ``panel`` and ``serve``."""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["cmd_agents", "cmd_arena", "cmd_diagnose", "cmd_endgames", "cmd_evaluate", "cmd_panel", "cmd_serve"]


# --------------------------------------------------------------------------- agents
def cmd_agents(args: argparse.Namespace) -> int:
    """Print every built-in agent with its options, then the models the az agent plays."""
    from carnac_env.agents import agent_table

    width = max(60, min(100, shutil.get_terminal_size((100, 24)).columns - 1))
    print("An agent spec is NAME[:OPTION=VALUE...], e.g. mcts:sims=400 or az:model=runs/az/best.npz:sims=0.\n")
    print(agent_table(width=width))
    print()
    print(_az_models_text(width))
    return 0


def _az_models_text(width: int) -> str:
    """The models shipped for the az agent: each one's file, size and training games (the
    default ones, the one-board specialists played by name, the frozen generations), and which
    model plays each board by default."""
    from carnac_env.core.boards import BOARDS
    from carnac_env.models import MODELS_DIR, default_model, generations, shipped_models, specialists

    lines = ["Models shipped for az (az:model=NAME, or a .npz file from carnac train):"]
    groups = (
        ("play by default", shipped_models()),
        ("one-board specialists, by name only (no stronger than general on their boards)", specialists()),
        ("frozen generations of general (the reference panels name them)", generations()),
    )
    for title, models in groups:
        if models:
            lines.append(f" {title}:")
            lines.extend(f"  {name:12} {_model_facts(path, MODELS_DIR)}" for name, path in models.items())
    by_model: dict[str, list[str]] = {}
    for name, board in BOARDS.items():
        by_model.setdefault(default_model(board) or "no model (pass az:model=PATH)", []).append(name)
    said = "; ".join(f"{', '.join(boards)}: {model}" for model, boards in by_model.items())
    lines.extend(textwrap.wrap(f"By default az plays {said}; custom boards: {default_model_custom()}.", width))
    cards = "The model cards (how each was trained, what it reaches): the .json beside each file in carnac_env/models"
    lines.extend(textwrap.wrap(f"{cards}; docs/training.md.", width))
    return "\n".join(lines)


def _model_facts(path: Path, root: Path) -> str:
    """A shipped model's file (relative to ``root``) with its card's size and training games."""
    import json

    from carnac_env._checks import json_constant

    try:
        card = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"), parse_constant=json_constant)
    except (OSError, ValueError):
        card = {}
    shape = card.get("architecture") or {}
    facts = []
    if shape:
        facts.append(f"{shape.get('blocks', '?')} residual blocks of {shape.get('channels', '?')} channels")
    if card.get("games"):
        # a network trained on from another one (--init) counts only its own run's games
        since = " since --init from an earlier network" if "--init" in str(card.get("command")) else ""
        facts.append(f"trained on {card['games']} games{since}")
    return path.relative_to(root).as_posix() + (f": {', '.join(facts)}" if facts else "")


def default_model_custom() -> str:
    """What az plays on a custom board by default."""
    from carnac_env.core.boards import make_board
    from carnac_env.models import default_model

    return default_model(make_board("custom", rows=6, cols=9)) or "no model (pass az:model=PATH)"


# --------------------------------------------------------------------------- arena
def cmd_arena(args: argparse.Namespace) -> int:
    """Run (or resume) an arena and print its table."""
    from carnac_env.arena import run_arena, split_agents
    from carnac_env.cli.parser import DEFAULT_ARENA

    agents = split_agents(args.agents)
    out = args.out if args.out is not None else DEFAULT_ARENA["out"]
    return _resumable(
        lambda: run_arena(
            agents,
            out,
            board=args.board,
            games=args.games,
            seed=args.seed,
            workers=args.workers,
            progress=not args.no_progress,
            ray=args.ray,
            openings=args.openings,
            interval=args.interval,
            # the default folder is said once the settings and every agent spec have checked
            announce=lambda: _stated_out(args.out, DEFAULT_ARENA["out"], "the games and results"),
        )
    )


def _stated_out(out: str | None, default: str, what: str) -> str:
    """The output folder; without ``--out``, the default folder in the current one, said on
    stderr before anything is written (the one place such a command writes unasked)."""
    if out is not None:
        return out
    print(f"{what} go to ./{default} in the current folder (--out DIR puts them elsewhere)", file=sys.stderr)
    return default


def _resumable(play: Callable[[], object]) -> int:
    """Run an arena-like command; Ctrl-C (130) or SIGTERM (143) keeps the finished games."""
    try:
        play()
    except KeyboardInterrupt as stop:
        from carnac_env.arena import ArenaTerminated

        print("\ninterrupted; run the same command again to resume (finished games are kept)", file=sys.stderr)
        return 143 if isinstance(stop, ArenaTerminated) else 130
    return 0


# --------------------------------------------------------------------------- evaluate
def cmd_evaluate(args: argparse.Namespace) -> int:
    """Evaluate an agent against a reference panel and print its card (with ``--endgames``:
    its error rate on the endgame sets)."""
    from carnac_env.errors import CarnacError
    from carnac_env.evaluate import evaluate

    if args.perfect:
        return _perfect(args)
    if args.megaliths_left is not None:
        raise CarnacError("--megaliths-left is an option of --perfect; add --perfect or leave it out")
    if args.endgames:
        return _endgames(args)
    return _resumable(
        lambda: evaluate(
            args.spec,
            board=args.board or "medium",
            panel=args.panel,
            games=args.games,
            seed=args.seed,
            workers=default_workers() if args.workers is None else args.workers,
            out=_stated_out(args.out, "carnac-evaluate", "the card, games and results"),
            progress=not args.no_progress,
            ray=args.ray,
            trust_panel_code=args.trust_panel_code,
            openings=args.openings,
        )
    )


#: The options of ``carnac evaluate`` that only games against a panel use: ``--endgames``
#: refuses them rather than ignore them.
PANEL_ONLY_OPTIONS = ("panel", "games", "openings", "workers", "ray", "trust_panel_code")


def default_workers() -> int:
    """``carnac evaluate``'s worker processes when ``--workers`` is not given: 2, or 1 on a
    one-core machine."""
    import os

    return min(2, os.cpu_count() or 1)


#: What ``carnac evaluate --perfect`` refuses rather than ignore: the panel's options and ``--endgames``.
PERFECT_REFUSES = ("endgames", "panel", "openings", "workers", "ray", "trust_panel_code")


def _perfect(args: argparse.Namespace) -> int:
    """``carnac evaluate SPEC --perfect``: the agent's errors against perfect play over whole games
    (:func:`~carnac_env.evaluate.perfect.perfect_play_errors`), printed, and with ``--out``
    written to ``OUT/perfect.json``; the options it would ignore are refused."""
    from carnac_env._files import lock_folder, write_json
    from carnac_env.core.boards import parse_board
    from carnac_env.errors import CarnacError
    from carnac_env.evaluate.perfect import PERFECT_BOARD, perfect_play_errors

    given = [f"--{name.replace('_', '-')}" for name in PERFECT_REFUSES if getattr(args, name) not in (None, False)]
    if given:
        raise CarnacError(
            f"--perfect plays the agent against itself and judges its moves by the solver, so it would ignore "
            f"{', '.join(given)}; leave them out (--perfect takes --board, --games, --seed, --megaliths-left, --out "
            "and --no-progress)"
        )
    board = parse_board(args.board or PERFECT_BOARD)  # a name or a custom size
    games = 20 if args.games is None else args.games
    left = args.megaliths_left
    if left is not None and left > board.megaliths:
        raise CarnacError(f"--megaliths-left {left}: board {board.name!r} has {board.megaliths} megaliths")

    def progress(done: int, total: int) -> None:
        if not args.no_progress:
            print(
                f"\r{args.spec}: game {done} of {total}", end="\n" if done == total else "", file=sys.stderr, flush=True
            )

    def measure() -> Any:
        return perfect_play_errors(
            args.spec, board, games=games, seed=args.seed or 0, megaliths_left=left, progress=progress
        )

    if args.out is None:
        result = measure()
    else:
        from carnac_env.agents import make

        make(args.spec)  # a bad spec is refused before the folder is made
        with lock_folder(args.out, "evaluate --perfect"):
            result = measure()
            write_json(Path(args.out) / "perfect.json", result.to_dict())
    all_, won, drawn = result.all, result.won, result.drawn
    print(
        f"{result.agent} on {result.board}, {result.games} games against itself, moves with at most "
        f"{result.megaliths_left} megaliths left judged by the solver (seed {result.seed}):"
    )
    for label, share in (("won or drawn positions", all_), ("won positions", won), ("drawn positions", drawn)):
        low, high = share.interval
        print(
            f"  {label}: {share.errors} of {share.positions} moves threw the value away "
            f"({share.share:.1%}, 95% interval {low:.1%}-{high:.1%})"
        )
    print(f"  won positions played to a loss: {result.won_to_loss}")
    print(
        f"  {len(result.moves)} moves judged, {result.unjudged} left unjudged (a solve past "
        f"{result.node_limit:,} nodes); {result.seconds} CPU s"
    )
    if args.out is not None:
        print(f"result: {Path(args.out) / 'perfect.json'}")
    return 0


def _endgames(args: argparse.Namespace) -> int:
    """``carnac evaluate SPEC --endgames``: the error table on every board asked for
    (:func:`~carnac_env.evaluate.endgames.report.run_endgames`), refusing the options it would ignore."""
    from carnac_env.errors import CarnacError
    from carnac_env.evaluate.endgames.report import run_endgames

    given = [f"--{name.replace('_', '-')}" for name in PANEL_ONLY_OPTIONS if getattr(args, name) not in (None, False)]
    if given:
        raise CarnacError(
            f"--endgames plays no games against a panel, so it would ignore {', '.join(given)}; "
            "leave them out (--endgames takes --board, --seed, --out and --no-progress)"
        )
    run_endgames(
        args.spec,
        boards=args.board,
        seed=0 if args.seed is None else args.seed,
        out=args.out,
        progress=not args.no_progress,
    )
    return 0


# --------------------------------------------------------------------------- endgames
def cmd_endgames(args: argparse.Namespace) -> int:
    """``carnac endgames --make BOARD``: make a board's endgame set and write it (settings not
    given are the board's :data:`~carnac_env.evaluate.endgames.make.MAKE_SETTINGS`)."""
    import shlex

    from carnac_env._files import write_text
    from carnac_env.evaluate.endgames.make import MAKE_SETTINGS, NODE_LIMIT, make_endgame_set
    from carnac_env.evaluate.endgames.sets import ENDGAME_DIR, set_text

    defaults = {"positions": 100, "megaliths_left": 4, "node_limit": NODE_LIMIT, **MAKE_SETTINGS.get(args.make, {})}
    positions = defaults["positions"] if args.positions is None else args.positions
    left = defaults["megaliths_left"] if args.megaliths_left is None else args.megaliths_left
    limit = defaults["node_limit"] if args.node_limit is None else args.node_limit
    command = (  # as the shipped sets record it (the same command as carnac endgames)
        f"python -m carnac_env.evaluate.endgames --make {shlex.quote(args.make)} --positions {positions} "
        f"--megaliths-left {left} --node-limit {limit} --seed {args.seed} --version {args.version}"
    )
    data = make_endgame_set(args.make, positions, left, args.seed, args.version, limit, command=command)
    out = Path(args.out) if args.out else ENDGAME_DIR / f"{args.make}-v{args.version}.json"
    write_text(out, set_text(data))
    print(f"wrote {out} ({len(data['positions'])} positions, {data['made']['seconds']} s)")
    return 0


# --------------------------------------------------------------------------- solve
def _az_priors(board: Any) -> Callable[[list[Any]], list[dict[int, float]]]:
    """The az network's priors over each position's legal actions (no search), for
    :meth:`carnac_env.solve.whole_game.Split.order`."""
    from carnac_env.analysis import Analyst

    analyst = Analyst(board, sims=0, solve=0)
    return lambda states: [weights for _, weights in analyst.raw(states)]


def cmd_solve(args: argparse.Namespace) -> int:
    """``carnac solve BOARD``: solve the whole game, or go on with the run in ``--out``; exit
    status 0 once the start's value is proved, 3 when the run stopped before (``--hours``)."""
    from carnac_env.core.boards import parse_board
    from carnac_env.solve.whole_game import solve_game

    board = parse_board(args.board)
    out = args.out or f"carnac-solve-{board.name}"
    answer = solve_game(
        board,
        out,
        args.plies,
        workers=args.workers,
        hours=args.hours,
        chunk_seconds=args.chunk_seconds,
        table_mb=args.table_mb,
        ray=args.ray,
        priors=None if args.kernel_order else _az_priors(board),
    )
    if answer.value is None:
        print(f"not proved yet: go on with the same command ({answer.solved} of {answer.leaves} leaves solved)")
        return 3
    words = {1: "a win", 0: "a draw", -1: "a loss"}[answer.value]
    print(f"{board.name}: the first player's value is {answer.value} ({words}); line: {answer.line}")
    return 0


# --------------------------------------------------------------------------- panel
def cmd_panel(args: argparse.Namespace) -> int:
    """``carnac panel ARENA_DIR --name NAME --version N --command ...``: build the panel from the
    finished arena and write it (to the package's panels folder, or ``--out``), holding the locks
    of the arena's folder (no run may change it while it is read) and of the file's folder (two
    runs never race to write one version); the file is checked to be absent within those locks.

    Raises:
        CarnacError: the file exists (or is a link): a panel version is never rewritten; a folder
            is in use by another run, or the arena folder holds no finished arena.
    """
    import os
    from contextlib import nullcontext

    from carnac_env._files import lock_folder, write_json
    from carnac_env.errors import CarnacError
    from carnac_env.evaluate.panel import PANEL_DIR, build_panel, parse_panel

    out = Path(args.out) if args.out else PANEL_DIR / f"{args.name}-v{args.version}.json"
    arena = Path(args.arena_dir)
    if not arena.is_dir():
        raise CarnacError(f"{arena} is not a folder; expected the output folder of the panel's round robin")
    same = arena.resolve() == out.parent.resolve()
    with (
        lock_folder(arena, "panel", create=False),
        lock_folder(out.parent, "panel") if not same else nullcontext(),
    ):
        if os.path.lexists(out):
            raise CarnacError(f"{out} exists; a panel version is never rewritten: give a new --version")
        data = build_panel(arena, args.name, args.version, args.command, args.anchor, args.games, args.seed, args.note)
        parse_panel(data, out)
        write_json(out, data)
    print(f"wrote {out}")
    return 0


# --------------------------------------------------------------------------- diagnose
def cmd_diagnose(args: argparse.Namespace) -> int:
    """``carnac diagnose MODEL``: how well a model's value head predicts
    (:func:`carnac_env.train.diagnose.diagnose`), printed as JSON."""
    import json

    from carnac_env.train.diagnose import diagnose

    stats = diagnose(
        args.model, args.board, args.games, args.sims, args.openings, args.playouts, args.seed, args.player
    )
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in stats.items()}, indent=1))
    return 0


# --------------------------------------------------------------------------- serve
def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the play page until Ctrl-C."""
    from carnac_env.arena import split_agents
    from carnac_env.core.boards import split_boards
    from carnac_env.serve import serve

    boards = split_boards(args.boards) if args.boards else None
    try:
        serve(args.host, args.port, split_agents(args.agents), boards, args.workers, args.open, memory=args.memory)
    except KeyboardInterrupt:
        print("\ncarnac serve: stopped")
    return 0
