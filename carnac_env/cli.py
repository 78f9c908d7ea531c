"""The ``carnac`` command: ``arena``, ``evaluate``, ``play``, ``replay`` and ``train``.

    carnac agents                                 # every agent, its options and the shipped az models
    carnac arena                                  # the default: random, greedy, mcts on medium
    carnac arena --board medium --agents random,greedy,mcts:sims=200 --games 20 --seed 0 --workers 2 --out DIR
    carnac arena ... --ray [ADDRESS]              # the games as Ray tasks (the ray extra)
    carnac evaluate SPEC --board medium [--panel medium-v1] [--games N] [--seed S] [--workers W] [--out DIR]
    carnac play --board medium --opponent mcts [--seat 1] [--save game.json] [--gui]
    carnac replay FILE [--line N] [--all] [--gif PATH | --mp4 PATH | --html PATH]
    carnac serve [--port 8080] [--agents greedy,mcts,az,random] [--open]   # play in the browser (serve extra)
    carnac train --board small --out DIR          # AlphaZero-style training (the train extra)
    carnac train ... --workers N | --ray [ADDRESS]   # self-play games in N processes or on Ray actors

Without the console script installed, run ``python -m carnac_env.cli``. Every user
mistake prints one line starting with ``carnac: error:`` and exits with status 2: a bad
option or value (:class:`CarnacArgumentParser`), and a :class:`~carnac_env.errors.CarnacError`
raised anywhere under a subcommand (caught once, in :func:`main`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from carnac_env.errors import CarnacError

#: The embedded default arena (the README's main command, ``carnac arena``; the README gives
#: its measured time, benchmarks/readme_commands.py measures it).
DEFAULT_ARENA = {"board": "medium", "agents": "random,greedy,mcts", "games": 4, "seed": 0, "out": "carnac-arena"}

SEAT_NAMES = ("Red", "White")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


class CarnacArgumentParser(argparse.ArgumentParser):
    """argparse's parser with the command's one error style: a bad option (an unknown one, a
    missing value, a value its type refuses) prints ``carnac: error: SUBCOMMAND: ...`` on one
    line and exits with status 2, as a :class:`CarnacError` raised by a subcommand does.
    Subcommand parsers (``carnac train``'s too) are made of this class."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("carnac").strip()
        where = f"{command}: " if command else ""
        self.exit(2, f"carnac: error: {where}{message}; see '{self.prog} --help'\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``carnac`` command."""
    from carnac_env.core.boards import BOARDS

    boards = ", ".join(BOARDS)
    from carnac_env.agents import agent_table

    parser = CarnacArgumentParser(
        prog="carnac", description="Carnac: agents, arena, evaluate, play, replay, serve and train."
    )
    sub = parser.add_subparsers(dest="command", metavar="{agents,arena,evaluate,play,replay,serve,train}")
    sub.required = True

    sub.add_parser(
        "agents",
        help="list the agents, their options and the shipped az models",
        description="List every built-in agent with what it does and its options (an agent spec is "
        "NAME[:OPTION=VALUE...], e.g. mcts:sims=400 or az:model=runs/az/best.npz:sims=0), "
        "and the models the az agent plays.",
    )

    arena = sub.add_parser(
        "arena",
        help="round robin between agents, with ratings",
        description=textwrap.fill(
            "Round robin between agents: every pair plays --games games, seats alternating. "
            "Writes OUT/games.jsonl, OUT/results.json (and OUT/ratings.png with matplotlib). "
            "Run the same command again to resume an interrupted arena. "
            f"Without options: {DEFAULT_ARENA['agents']} on {DEFAULT_ARENA['board']}, "
            f"{DEFAULT_ARENA['games']} games per pair.",
            98,
        ),
        epilog="agents (carnac agents says more about each option):\n" + agent_table(options=False, width=98),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    arena.add_argument("--board", default=DEFAULT_ARENA["board"], help=f"board name ({boards})")
    arena.add_argument(
        "--agents",
        default=DEFAULT_ARENA["agents"],
        help="comma-separated agent specs, e.g. random,greedy,mcts:sims=200 (the agents are listed below)",
    )
    arena.add_argument("--games", type=_positive, default=DEFAULT_ARENA["games"], help="games per pair")
    arena.add_argument("--seed", type=int, default=DEFAULT_ARENA["seed"], help="arena seed")
    arena.add_argument(
        "--openings",
        type=int,
        default=0,
        metavar="K",
        help="open every game with K uniformly random plies from a set seeded by --seed, each opening played "
        "once from each seat, so that deterministic agents play different games (default 0: none)",
    )
    arena.add_argument(
        "--workers", type=_positive, default=min(2, os.cpu_count() or 1), help="worker processes (default 2)"
    )
    arena.add_argument("--out", default=DEFAULT_ARENA["out"], help="output folder")
    arena.add_argument("--no-progress", action="store_true", help="no progress bar")
    arena.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="play the games as Ray tasks (needs the ray extra): alone, on a local Ray started for the run "
        "(--workers CPUs); 'auto', on the cluster of this machine; HOST:PORT, on the cluster there (docs/cluster.md)",
    )

    evaluate = sub.add_parser(
        "evaluate",
        help="rate an agent against a fixed reference panel",
        description="Play an agent against a versioned reference panel (seats alternating, published default "
        "games and seed) and rate it on the panel's fixed scale (random = 0). Writes OUT/card.json, "
        "OUT/games.jsonl and OUT/arena.json; run the same command again to resume. See docs/evaluating.md.",
    )
    evaluate.add_argument("spec", help="the agent's spec, e.g. greedy, mcts:sims=400 or mypkg.mod.MyAgent")
    evaluate.add_argument("--board", default="medium", help=f"board name ({boards}); default medium")
    evaluate.add_argument(
        "--panel", default=None, help="panel id (e.g. medium-v1) or panel .json file; default: the newest for --board"
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
        type=int,
        default=0,
        metavar="K",
        help="open every game with K seeded random plies, each opening once from each seat (default 0)",
    )
    evaluate.add_argument("--seed", type=int, default=None, help="evaluation seed (default: the panel's)")
    evaluate.add_argument(
        "--workers", type=_positive, default=min(2, os.cpu_count() or 1), help="worker processes (default 2)"
    )
    evaluate.add_argument("--out", default="carnac-evaluate", help="output folder (default carnac-evaluate)")
    evaluate.add_argument("--no-progress", action="store_true", help="no progress bar")
    evaluate.add_argument(
        "--ray", nargs="?", const="local", default=None, metavar="ADDRESS", help="play the games as Ray tasks, as arena"
    )

    play = sub.add_parser(
        "play",
        help="play against an agent in the terminal",
        description="Play against an agent. Enter moves in the notation ('c4 Rns', 'tilt N', 'decline'); "
        "'moves' (or 'help') lists the legal moves, 'quit' or Ctrl-C stops (the game so far is saved).",
    )
    play.add_argument("--board", default="medium", help=f"board name ({boards}; default medium)")
    play.add_argument("--opponent", default="mcts", help="the opponent's agent spec (default mcts)")
    play.add_argument("--seat", type=int, choices=(0, 1), default=0, help="0: you are Red and move first; 1: White")
    play.add_argument("--seed", type=int, default=0, help="the opponent's seed")
    play.add_argument("--save", default=None, help="where to save the game record (default carnac-game-TIME.json)")
    play.add_argument("--gui", action="store_true", help="play in a window (needs the gui extra)")
    play.add_argument("--no-color", action="store_true", help="no ANSI colours")

    replay = sub.add_parser(
        "replay",
        help="step through a recorded game",
        description="Step through a game record (a .json file, or a line of a .jsonl file such as "
        "an arena's games.jsonl). Enter advances, 'q' stops.",
    )
    replay.add_argument("file", help="a game record (.json) or a file of records (.jsonl)")
    replay.add_argument("--line", type=_positive, default=None, help="the record's line in a .jsonl file (from 1)")
    replay.add_argument("--all", action="store_true", help="print every step without waiting")
    replay.add_argument("--gif", default=None, help="write an animated GIF instead")
    replay.add_argument("--mp4", default=None, help="write an MP4 video instead (needs the video extra)")
    replay.add_argument(
        "--html",
        default=None,
        help="write one self-contained web page with the board, step/scrub controls and the move list",
    )
    replay.add_argument("--fps", type=float, default=2.0, help="frames per second of --gif/--mp4")
    replay.add_argument("--no-color", action="store_true", help="no ANSI colours")

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
            98,
        ),
        epilog="agents:\n" + agent_table(options=False, width=98),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    serve.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free port)"
    )
    serve.add_argument(
        "--agents",
        default="greedy,mcts,az,random",
        help="the opponents the page offers, comma-separated specs (default greedy,mcts,az,random); "
        "their options set the budget, e.g. mcts:sims=500 (a page cannot ask for others)",
    )
    serve.add_argument(
        "--boards", default=None, help=f"the boards the page offers, comma-separated (default all: {boards})"
    )
    serve.add_argument("--workers", type=_positive, default=2, help="threads the agents think in (default 2)")
    serve.add_argument(
        "--memory", type=_positive, default=DEFAULT_MEMORY_MB, help=MEMORY_HELP.format(default=DEFAULT_MEMORY_MB)
    )
    serve.add_argument("--open", action="store_true", help="open the page in the default web browser")

    train = sub.add_parser(
        "train",
        help="AlphaZero-style training of the az agent (needs the train extra)",
        description="Self-play training of a policy-value network for the az agent on the batched "
        "engine: a greedy bootstrap, then PUCT self-play. Writes OUT/checkpoint.pt, OUT/model.npz, "
        "OUT/best.npz and the learning curve; run the same command again to resume. See docs/training.md.",
    )
    from carnac_env.train.cli import add_arguments as add_train_arguments

    add_train_arguments(train)
    return parser


def cmd_train(args: argparse.Namespace) -> int:
    """``carnac train``: the trainer's own command line (carnac_env.train.cli)."""
    from carnac_env.train.cli import main as train_main

    return train_main(args)


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
    """The models shipped for the az agent: each one's board, size and training games, and which
    model plays each board (its own, or the fallback)."""
    import json

    from carnac_env.core.boards import BOARDS
    from carnac_env.models import FALLBACK_MODELS, shipped_models

    shipped = shipped_models()
    lines = ["Models shipped for az (az:model=NAME, or a .npz file from carnac train):"]
    for name, path in shipped.items():
        try:
            card = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            card = {}
        shape = card.get("architecture") or {}
        facts = []
        if shape:
            facts.append(f"{shape.get('blocks', '?')} residual blocks of {shape.get('channels', '?')} channels")
        if card.get("games"):
            facts.append(f"trained on {card['games']} games")
        lines.append(f"  {name:12} {path.name}" + (f": {', '.join(facts)}" if facts else ""))
    fallback = next((name for name in FALLBACK_MODELS if name in shipped), None)
    others = [board for board in BOARDS if board not in shipped]
    if others:
        plays = f"the {fallback} model (not trained there)" if fallback else "no model: pass az:model=PATH"
        lines.extend(textwrap.wrap(f"By default az plays each board's own model; {', '.join(others)}: {plays}.", width))
    lines.append("The model cards (how each was trained, what it reaches): carnac_env/models/*.json, docs/training.md.")
    return "\n".join(lines)


# --------------------------------------------------------------------------- arena
def cmd_arena(args: argparse.Namespace) -> int:
    """Run (or resume) an arena and print its table."""
    from carnac_env.arena import run_arena, split_agents

    agents = split_agents(args.agents)
    return _resumable(
        lambda: run_arena(
            agents,
            args.out,
            board=args.board,
            games=args.games,
            seed=args.seed,
            workers=args.workers,
            progress=not args.no_progress,
            ray=args.ray,
            openings=args.openings,
        )
    )


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
    """Evaluate an agent against a reference panel and print its card."""
    from carnac_env.evaluate import evaluate

    return _resumable(
        lambda: evaluate(
            args.spec,
            board=args.board,
            panel=args.panel,
            games=args.games,
            seed=args.seed,
            workers=args.workers,
            out=args.out,
            progress=not args.no_progress,
            ray=args.ray,
            trust_panel_code=args.trust_panel_code,
            openings=args.openings,
        )
    )


# --------------------------------------------------------------------------- play
def _read(prompt: str, stdin: TextIO) -> str | None:
    print(prompt, end="", flush=True)
    line = stdin.readline()
    if not line:
        print()
        return None
    return line.strip()


def _check_writable(path: str) -> None:
    """Refuse a record path that cannot be written, before any game is played."""
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise CarnacError(f"--save {path}: that is a folder; expected a file name such as game.json")
    if not folder.is_dir():
        raise CarnacError(f"--save {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise CarnacError(f"--save {path}: cannot write there (permission denied)")


def _save_record(record: Any, save: str) -> None:
    """Save the game's record (atomically); when that fails (a full disk), print the record
    so the game is not lost, then raise the error naming the file."""
    try:
        record.save(save)
    except CarnacError:
        print("the record could not be saved; here it is, to keep:", file=sys.stderr)
        print(record.to_json(), flush=True)
        raise


def cmd_play(args: argparse.Namespace, stdin: TextIO | None = None) -> int:
    """Play a game in the terminal against ``--opponent``; save its record at the end (also
    after 'quit', end of input or Ctrl-C)."""
    from carnac_env.agents import make
    from carnac_env.core.boards import make_board

    stdin = stdin or sys.stdin
    board = make_board(args.board)
    opponent = make(args.opponent, seed=args.seed)
    save = args.save or time.strftime("carnac-game-%Y%m%d-%H%M%S.json")
    _check_writable(save)
    if args.gui:
        from carnac_env.play.gui import play_gui  # a missing gui extra raises CarnacError naming it

        record = play_gui(board, args.opponent, args.seat, None, args.seed)
        if record is not None:
            _save_record(record, save)
        if record is not None and record.result is not None:
            print(_result_line(record.result, _names(args)))
        print(f"record saved to {save}")
        return 0

    from carnac_env.aec import raw_env
    from carnac_env.render.ansi import render_text, supports_color

    color = not args.no_color and supports_color()
    names = _names(args)
    env = raw_env(board=board)
    env.reset(seed=args.seed)
    width = min(100, shutil.get_terminal_size((80, 24)).columns - 1)
    print(f"You play {SEAT_NAMES[args.seat]} against {args.opponent} on the {board.name} board. Type 'moves' for help.")
    stopped = ""
    try:
        stopped = _play_loop(env, opponent, args, stdin, color, names, width)
    except KeyboardInterrupt:
        stopped = "interrupted"
    print()
    print(render_text(env.game, color=color, agent_names=names, width=width))
    record = env.record(agents=list(names), seats={"you": args.seat}, seed=args.seed)
    _save_record(record, save)
    if stopped:
        print(f"game {stopped} after {len(record.moves)} moves; record of the game so far saved to {save}")
        return 130 if stopped == "interrupted" else 0
    print(f"record saved to {save}")
    return 0


def _play_loop(
    env: Any, opponent: Any, args: argparse.Namespace, stdin: TextIO, color: bool, names: tuple[str, str], width: int
) -> str:
    """Alternate the person's and the opponent's moves until the end; returns ``"stopped"``
    when the person quits (or input ends), ``""`` when the game is over."""
    from carnac_env.render.ansi import refusal, render_text

    game = env.game
    you = args.seat
    show = True
    while not game.is_over:
        if show:
            print()
            print(render_text(game, color=color, agent_names=names, width=width))
        show = True
        if game.to_act != you:
            action = int(opponent.act(env))
            _step(env, action, f"{SEAT_NAMES[1 - you]} ({args.opponent})")
            continue
        line = _read(f"{SEAT_NAMES[you]} (you) > ", stdin)
        if line is None or line.lower() in ("quit", "exit", "q"):
            return "stopped"
        show = False
        if not line:
            continue
        if line.lower() in ("moves", "help", "?", "h"):
            print(_legal_moves_text(env))
            continue
        try:
            action = env.parse_action(line)
        except ValueError as err:  # CarnacError, or a number Python will not read (e.g. '²', 5000 digits)
            _say(f"Not a move: {_shorten_echo(str(err), line)}. Type 'moves' to list the legal moves.", width)
            continue
        reason = refusal(game, action)
        if reason is not None:
            _say(f"{reason}. Type 'moves' to list the legal moves.", width)
            continue
        show = True
        _step(env, action, f"{SEAT_NAMES[you]} (you)")
    return ""


def _step(env: Any, action: int, who: str) -> None:
    """Play ``action`` and say so, adding a note when a placement cannot be tilted."""
    from carnac_env.render.ansi import cannot_tilt_note

    before = env.game.copy()
    text = env.action_to_text(action)
    env.step(action)
    print(f"{who} plays {text}")
    note = cannot_tilt_note(before, action, env.game)
    if note:
        print(note)


def _say(text: str, width: int) -> None:
    """Print ``text`` wrapped at word boundaries to ``width`` columns."""
    print(textwrap.fill(text, width=max(20, width), subsequent_indent="  ", break_long_words=False))


def _shorten_echo(message: str, line: str, keep: int = 24) -> str:
    """``message`` with a long echo of the typed ``line`` cut to its first characters, so
    that the explanation after it is printed whole (a 5000-digit line is not repeated)."""
    if len(line) > keep:
        message = message.replace(line, line[: keep - 3] + "...")
    return message if len(message) <= 400 else message[:397] + "..."


def _names(args: argparse.Namespace) -> tuple[str, str]:
    return ("you", args.opponent) if args.seat == 0 else (args.opponent, "you")


def _legal_moves_text(env: Any) -> str:
    """The legal moves of the player to act, in notation, grouped for reading."""
    from carnac_env.core.game import RESPOND

    game = env.game
    texts = [env.action_to_text(a) for a in game.legal_actions()]
    if game.phase == RESPOND:
        head = "Tilt the megalith just placed, or decline:"
        return head + "\n  " + "  ".join(texts)
    squares: dict[str, list[str]] = {}
    for text in texts:
        square, _, rest = text.partition(" ")
        squares.setdefault(square, []).append(rest)
    head = (
        "Place a megalith: a square, the colour on top (R/W) and the axis whose tilts show that colour "
        "(ns/ew), e.g. 'c4 Rns'. Every empty square takes Rns, Rew, Wns or Wew. Empty squares:"
    )
    return head + "\n  " + " ".join(squares)


def _result_line(result: Any, names: tuple[str, str]) -> str:
    winner = result.winner
    if winner is None:
        return "A draw."
    return f"{SEAT_NAMES[winner]} ({names[winner]}) wins."


# --------------------------------------------------------------------------- replay
def cmd_replay(args: argparse.Namespace, stdin: TextIO | None = None) -> int:
    """Step through a recorded game, or write it as an animation or a web page."""
    from carnac_env.core.game import GameState
    from carnac_env.core.notation import parse_action
    from carnac_env.core.record import GameRecord
    from carnac_env.render.ansi import printable, render_text, supports_color

    stdin = stdin or sys.stdin
    path = Path(args.file)
    if not path.exists():
        raise CarnacError(f"no such file: {path}")
    line = args.line
    if line is None and path.suffix == ".jsonl":
        line = 1
    record = GameRecord.load(path, line=line)
    record.replay()  # checks every move and the stored result
    if args.gif or args.mp4 or args.html:
        return _write_replays(record, args)
    color = not args.no_color and supports_color()
    agents = record.meta.get("agents")
    # Names come from the file: escape control characters so they cannot drive the terminal.
    names = (
        (printable(str(agents[0])), printable(str(agents[1])))
        if isinstance(agents, list) and len(agents) == 2
        else None
    )
    width = min(100, shutil.get_terminal_size((80, 24)).columns - 1)
    state = GameState(record.board)
    where = f" (record {line})" if line else ""
    print(f"{printable(str(path))}{where}: {len(record.moves)} moves on the {record.board.name} board")
    print(render_text(state, color=color, agent_names=names, width=width))
    for number, text in enumerate(record.moves, start=1):
        if not args.all:
            answer = _read("[Enter: next move, q: quit] ", stdin)
            if answer is None or answer.lower() in ("q", "quit", "exit"):
                return 0
        mover = state.to_act
        state.apply(parse_action(record.board, text, mover))
        who = SEAT_NAMES[mover] + (f" ({names[mover]})" if names else "")
        print(f"\nmove {number}: {who} {text}")
        print(render_text(state, color=color, agent_names=names, width=width))
    return 0


def _write_replays(record: Any, args: argparse.Namespace) -> int:
    """``--gif``, ``--mp4`` and ``--html``: write each file asked for."""
    if args.html:
        from carnac_env.render.html import write_replay_html

        write_replay_html(record, args.html)
        print(f"wrote {args.html}")
    if args.gif or args.mp4:
        from carnac_env.render.animate import write_animation  # a missing extra raises CarnacError naming it

        for target in (args.gif, args.mp4):
            if target:
                write_animation(record, target, fps=args.fps)
                print(f"wrote {target}")
    return 0


# --------------------------------------------------------------------------- serve
def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the play page until Ctrl-C."""
    from carnac_env.arena import split_agents
    from carnac_env.serve import serve

    boards = [b.strip() for b in args.boards.split(",") if b.strip()] if args.boards else None
    try:
        serve(args.host, args.port, split_agents(args.agents), boards, args.workers, args.open, memory=args.memory)
    except KeyboardInterrupt:
        print("\ncarnac serve: stopped")
    return 0


# --------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``carnac`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handlers = {
        "agents": cmd_agents,
        "arena": cmd_arena,
        "evaluate": cmd_evaluate,
        "play": cmd_play,
        "replay": cmd_replay,
        "serve": cmd_serve,
        "train": cmd_train,
    }
    try:
        return handlers[args.command](args)
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


if __name__ == "__main__":
    sys.exit(main())
