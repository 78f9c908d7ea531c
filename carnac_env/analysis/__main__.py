"""``python -m carnac_env.analysis GAME.json``: review a game with the learned agent.

    python -m carnac_env.analysis game.json                          # the review in words
    python -m carnac_env.analysis games.jsonl --line 3 --html game.html --search all
    python -m carnac_env.analysis game.json --svg review.svg --png review.png --sims 400

Prints Red's expected score at the start and the end and the moves where the mover's expected
score dropped most, with the agent's preferred move, and where the exact solver reached
(``--solve``: at most that many megaliths left, default 7; 0: none) the moves that threw a
solved result away; ``--html`` writes the game's web replay
with the agent's view in it, ``--svg``/``--png`` the curve. One of them may be ``-``, standard
output (the review in words then goes to standard error). Each output is checked before the
review starts: a missing folder, or a path that is a device, a FIFO, a socket or a folder, is
refused by name (:mod:`carnac_env._files`).
"""

from __future__ import annotations

import argparse
import sys

from carnac_env.errors import CarnacError


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns its exit status (2 for a mistake in the input)."""
    parser = argparse.ArgumentParser(
        prog="python -m carnac_env.analysis", description=__doc__.split("\n\n")[0].split(": ", 1)[1]
    )
    parser.add_argument("game", help="a game record (.json) or an arena's games.jsonl (with --line)")
    parser.add_argument("--line", type=int, default=None, help="the game's line in a .jsonl file (1: the first)")
    parser.add_argument(
        "--model", default=None, help="a model file or shipped model name (default: az's for the board)"
    )
    parser.add_argument("--sims", type=int, default=200, help="simulations of each searched position (default 200)")
    parser.add_argument(
        "--search", default="mistakes", choices=("mistakes", "all", "none"), help="which positions to search"
    )
    parser.add_argument(
        "--solve", type=int, default=7, help="solve positions with at most N megaliths left (default 7; 0: none)"
    )
    parser.add_argument("--mistakes", type=int, default=3, help="how many of the biggest drops to list (default 3)")
    parser.add_argument(
        "--html", default=None, help="write the web replay with the agent's view to this .html file (-: stdout)"
    )
    parser.add_argument("--svg", default=None, help="write the curve to this .svg file (-: standard output)")
    parser.add_argument("--png", default=None, help="write the curve to this .png file (-: standard output)")
    args = parser.parse_args(argv)
    try:
        from io import BytesIO

        from carnac_env._files import check_output, is_stdout, write_bytes, write_text
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
    except CarnacError as err:
        print(f"carnac: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
