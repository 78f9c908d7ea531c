"""``carnac analyse GAME.json``: review a game with the learned agent.

    carnac analyse game.json                          # the review in words
    carnac analyse games.jsonl --line 3 --html game.html --search all
    carnac analyse game.json --svg review.svg --png review.png --sims 400

Prints Red's expected score at the start and the end and the moves where the mover's expected
score dropped most, with the agent's preferred move, and where the exact solver reached
(``--solve``: at most that many megaliths left, default 7; 0: none) the moves that threw a
solved result away; ``--html`` writes the game's web replay
with the agent's view in it, ``--svg``/``--png`` the curve. One of them may be ``-``, standard
output (the review in words then goes to standard error). Each output is checked before the
review starts: a missing folder, or a path that is a device, a FIFO, a socket or a folder, is
refused by name (:mod:`carnac_env._files`). ``python -m carnac_env.analysis`` is the same command.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from carnac_env.errors import CarnacError

__all__ = ["cmd_analyse"]


def cmd_analyse(args: argparse.Namespace) -> int:
    """Review the game and write what ``args`` ask for; returns the exit status (a mistake in
    the input, a :class:`CarnacError`, is said by :func:`carnac_env.cli.main`: status 2)."""
    from carnac_env._files import check_output, is_stdout
    from carnac_env.analysis import review
    from carnac_env.core.record import GameRecord

    outputs = {f"--{name}": getattr(args, name) for name in ("html", "svg", "png") if getattr(args, name)}
    to_stdout = [option for option, path in outputs.items() if is_stdout(path)]
    if len(to_stdout) > 1:
        raise CarnacError(f"only one output can go to standard output (-); {' and '.join(to_stdout)} both ask")
    for path in outputs.values():
        check_output(path)  # before the review's minutes of search
    words = sys.stderr if to_stdout else sys.stdout  # standard output is the file's alone
    record = GameRecord.load(args.game, line=args.line)
    done = review(record, args.model, sims=args.sims, mistakes=args.mistakes, search=args.search, solve=args.solve)
    for line in done.lines():
        print(line, file=words)
    _write_outputs(args, record, done, words)
    return 0


def _write_outputs(args: argparse.Namespace, record: Any, done: Any, words: TextIO) -> None:
    """Write the ``--html`` replay, the ``--svg`` and the ``--png`` curve asked for, each said
    on ``words``."""
    from io import BytesIO

    from carnac_env._files import write_bytes, write_text

    if args.html:
        from carnac_env.render.html import write_replay_html

        write_replay_html(record, args.html, analysis=done)
        print(f"wrote {args.html}", file=words)
    if args.svg:
        write_text(args.svg, done.svg() + "\n")
        print(f"wrote {args.svg}", file=words)
    if args.png:
        buffer = BytesIO()
        done.png().save(buffer, format="PNG")
        write_bytes(args.png, buffer.getvalue())
        print(f"wrote {args.png}", file=words)
