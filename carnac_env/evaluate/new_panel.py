"""Write a new panel file from a finished round robin: ``python -m carnac_env.evaluate.new_panel``.

    python -m carnac_env.evaluate.new_panel ARENA_DIR --name medium --version 2 --command "carnac arena ..."

The file goes to the package's panels folder (or ``--out``) and is never written over an
existing one: a panel version, once published, keeps its numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import nullcontext
from pathlib import Path

from carnac_env._files import lock_folder, write_json
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
        write_panel(args, out)
    except CarnacError as err:
        print(f"carnac: error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


def write_panel(args: argparse.Namespace, out: Path) -> None:
    """Build the panel from the finished arena and write it to ``out``, holding the locks of the
    arena's folder (no run may change it while it is read) and of ``out``'s folder (two runs
    never race to write one version); ``out`` is checked to be absent within those locks.

    Raises:
        CarnacError: ``out`` exists (or is a link), a folder is in use by another run, or the
            arena folder holds no finished arena.
    """
    arena = Path(args.arena_dir)
    if not arena.is_dir():
        raise CarnacError(f"{arena} is not a folder; expected the output folder of the panel's round robin")
    same = arena.resolve() == out.parent.resolve()
    with (
        lock_folder(arena, "new_panel", create=False),
        lock_folder(out.parent, "new_panel") if not same else nullcontext(),
    ):
        if os.path.lexists(out):
            raise CarnacError(f"{out} exists; a panel version is never rewritten: give a new --version")
        data = build_panel(arena, args.name, args.version, args.command, args.anchor, args.games, args.seed, args.note)
        parse_panel(data, out)
        write_json(out, data)


if __name__ == "__main__":
    sys.exit(main())
