"""``carnac replay``: step through a recorded game in the terminal, or write it as an
animation or a web page."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any, TextIO

from carnac_env.cli.terminal import SEAT_NAMES, read_line
from carnac_env.errors import CarnacError

__all__ = ["cmd_replay"]


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
            answer = read_line("[Enter: next move, q: quit] ", stdin)
            if answer is None or answer.lower() in ("q", "quit", "exit"):
                return 0
        mover = state.to_act
        state.apply(parse_action(record.board, text, mover))
        who = SEAT_NAMES[mover] + (f" ({names[mover]})" if names else "")
        print(f"\nmove {number}: {who} {text}")
        print(render_text(state, color=color, agent_names=names, width=width))
    return 0


def _write_replays(record: Any, args: argparse.Namespace) -> int:
    """``--gif``, ``--mp4`` and ``--html``: write each file asked for. Every output is checked
    (:func:`~carnac_env._files.check_output`) and the animation's size bounded
    (:func:`~carnac_env.render.animate.check_animation_size`) before anything is drawn; one of
    them may be ``-``, standard output (the "wrote" lines then go to standard error)."""
    from carnac_env._files import check_output, is_stdout

    outputs = {option: getattr(args, option) for option in ("html", "gif", "mp4") if getattr(args, option)}
    to_stdout = [f"--{option}" for option, path in outputs.items() if is_stdout(path)]
    if len(to_stdout) > 1:
        raise CarnacError(f"only one output can go to standard output (-); {' and '.join(to_stdout)} both ask")
    for path in outputs.values():
        check_output(path)
    words = sys.stderr if to_stdout else sys.stdout
    if args.gif or args.mp4:
        from carnac_env.render.animate import check_animation_size  # a missing extra raises CarnacError naming it

        check_animation_size(record)
    if args.html:
        from carnac_env.render.html import write_replay_html

        write_replay_html(record, args.html)
        print(f"wrote {args.html}", file=words)
    if args.gif or args.mp4:
        from carnac_env.render.animate import write_animation

        for suffix, target in ((".gif", args.gif), (".mp4", args.mp4)):
            if target:
                write_animation(record, target, fps=args.fps, suffix=suffix if is_stdout(target) else None)
                print(f"wrote {target}", file=words)
    return 0
