"""``carnac play`` in the terminal: the person's moves typed in notation, the agent's answers,
and the game's record saved at the end (also after 'quit', the end of input or Ctrl-C)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, TextIO

from carnac_env.cli.terminal import SEAT_NAMES, read_line
from carnac_env.errors import CarnacError

__all__ = ["cmd_play"]


def _check_writable(path: str) -> None:
    """Refuse a record path that cannot be written, before any game is played (a device, a
    FIFO or a socket there too: :func:`~carnac_env._files.check_output`)."""
    from carnac_env._files import check_output, is_stdout

    if is_stdout(path):
        raise CarnacError("--save -: the game itself is shown on standard output; name a file such as game.json")
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise CarnacError(f"--save {path}: that is a folder; expected a file name such as game.json")
    if not folder.is_dir():
        raise CarnacError(f"--save {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise CarnacError(f"--save {path}: cannot write there (permission denied)")
    try:
        check_output(path)
    except CarnacError as err:
        raise CarnacError(f"--save {path}: {err}") from None


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
    if args.gui:  # no gui extra or no display: the window's own error, before anything is announced
        from carnac_env.play.gui import check_window

        check_window()
    save = args.save or time.strftime("carnac-game-%Y%m%d-%H%M%S.json")
    _check_writable(save)
    if not args.save:  # the one file play writes unasked: say where, before the game
        print(f"the game's record will be saved to {save} in the current folder (--save PATH)", file=sys.stderr)
    if args.gui:
        from carnac_env.play.gui import play_gui  # a missing gui extra raises CarnacError naming it

        record = play_gui(board, args.opponent, args.seat, None, args.seed)
        if record is not None:
            _save_record(record, save)
        if record is not None and record.result is not None:
            print(_result_line(record.result, _names(args)))
        print(f"record saved to {save}")
        return 0

    from carnac_env.agents.warmup import warm_up
    from carnac_env.envs.aec import raw_env
    from carnac_env.render.ansi import render_text, supports_color

    warm_up([args.opponent], board)  # its first move compiled now, with a word when that takes a while

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
            action = int(opponent.act(game))
            _step(env, action, f"{SEAT_NAMES[1 - you]} ({args.opponent})")
            continue
        line = read_line(f"{SEAT_NAMES[you]} (you) > ", stdin)
        if line is None or line.lower() in ("quit", "exit", "q"):
            return "stopped"
        show = False
        if not line:
            continue
        if line.lower() in ("moves", "help", "?", "h"):
            print(_legal_moves_text(env, width))
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


def _legal_moves_text(env: Any, width: int = 80) -> str:
    """The legal moves of the player to act, in notation, grouped for reading, wrapped at
    ``width`` columns."""
    from carnac_env.core.game import RESPOND

    game = env.game
    texts = [env.action_to_text(a) for a in game.legal_actions()]
    if game.phase == RESPOND:
        head = "Tilt the megalith just placed, or decline:"
        return head + "\n" + _indented("  ".join(texts), width)
    squares: dict[str, list[str]] = {}
    for text in texts:
        square, _, rest = text.partition(" ")
        squares.setdefault(square, []).append(rest)
    head = (
        "Place a megalith: a square, the colour on top (R/W) and the axis whose tilts show that colour "
        "(ns/ew), e.g. 'c4 Rns'. Every empty square takes Rns, Rew, Wns or Wew. Empty squares:"
    )
    return textwrap.fill(head, max(20, width), break_long_words=False) + "\n" + _indented(" ".join(squares), width)


def _indented(text: str, width: int) -> str:
    """``text`` wrapped at ``width`` columns, every line indented by two spaces."""
    return textwrap.fill(text, max(20, width), initial_indent="  ", subsequent_indent="  ", break_long_words=False)


def _result_line(result: Any, names: tuple[str, str]) -> str:
    winner = result.winner
    if winner is None:
        return "A draw."
    return f"{SEAT_NAMES[winner]} ({names[winner]}) wins."
