"""Write a new panel file from a finished round robin: ``python -m carnac_env.evaluate.new_panel``.

    python -m carnac_env.evaluate.new_panel ARENA_DIR --name medium --version 2 --command "carnac arena ..."

The file goes to the package's panels folder (or ``--out``) and is never written over an
existing one: a panel version, once published, keeps its numbers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from carnac_env._files import write_json
from carnac_env.errors import CarnacError
from carnac_env.evaluate.panel import PANEL_DIR, build_panel, parse_panel


def main(argv: list[str] | None = None) -> int:
    """Write a new panel file from a finished round robin (never over an existing one)."""
    parser = argparse.ArgumentParser(prog="python -m carnac_env.evaluate.new_panel", description=main.__doc__)
    parser.add_argument("arena_dir", help="the output folder of the panel's round robin")
    parser.add_argument("--name", required=True)
    parser.add_argument("--version", type=int, required=True)
    parser.add_argument("--command", required=True, help="the exact command that played the round robin")
    parser.add_argument("--anchor", default="random")
    parser.add_argument("--games", type=int, default=20, help="an evaluation's default games per opponent")
    parser.add_argument("--seed", type=int, default=1, help="an evaluation's default seed")
    parser.add_argument("--note", default="")
    parser.add_argument("--out", default=None, help="the file (default: the package's panels folder)")
    args = parser.parse_args(argv)
    out = Path(args.out) if args.out else PANEL_DIR / f"{args.name}-v{args.version}.json"
    try:
        if out.exists():
            raise CarnacError(f"{out} exists; a panel version is never rewritten: give a new --version")
        data = build_panel(
            args.arena_dir, args.name, args.version, args.command, args.anchor, args.games, args.seed, args.note
        )
        parse_panel(data, out)
    except CarnacError as err:
        print(f"carnac: error: {err}", file=sys.stderr)
        return 2
    try:
        write_json(out, data)
    except CarnacError as err:
        print(f"carnac: error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
