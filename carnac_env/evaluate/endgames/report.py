"""The endgame report: the error table, the results file, and ``carnac evaluate SPEC --endgames``
(:func:`run_endgames`), which prints the table of every board asked for and merges it into
``OUT/endgames.json``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from carnac_env import _checks
from carnac_env.core.boards import BOARDS
from carnac_env.errors import CarnacError
from carnac_env.evaluate.endgames.score import EndgameErrors, Share, endgame_errors
from carnac_env.evaluate.endgames.sets import load_endgames
from carnac_env.models import pinned_models

__all__ = ["RESULTS_NAME", "format_endgame_table", "merge_endgame_results", "read_endgame_results", "run_endgames"]


def _cell(share: Share) -> str:
    if not share.positions:
        return "-"
    low, high = share.interval
    return f"{share.errors}/{share.positions} {share.share:.0%} [{low:.0%}, {high:.0%}]"


def format_endgame_table(results: Iterable[EndgameErrors]) -> str:
    """The results as a text table: per board, the errors over all positions, over the won ones
    (played to a draw or a loss) and over the drawn ones (played to a loss), each with its share
    and Wilson 95% interval."""
    from carnac_env.render.ansi import printable

    results = list(results)
    head = ["agent", "board (set)", "errors: all", "won positions", "drawn positions"]
    rows = [
        [printable(r.agent), f"{r.board} ({r.set_id})", _cell(r.all), _cell(r.won), _cell(r.drawn)] for r in results
    ]
    widths = [max(len(row[k]) for row in [head, *rows]) for k in range(len(head))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [head, *rows]]
    seeds = sorted({r.seed for r in results})
    lines.append("")
    lines.append(
        "errors: moves that lose value against the solved values (a won position played to a draw or a loss, "
        f"a drawn one to a loss); share and Wilson 95% interval; seed {', '.join(map(str, seeds))}"
    )
    return "\n".join(lines)


#: The results file ``carnac evaluate --endgames --out DIR`` keeps in ``DIR``.
RESULTS_NAME = "endgames.json"
#: The largest results file read (a row is a few hundred bytes).
MAX_RESULTS_BYTES = 16 * 1024 * 1024


def _result_key(row: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two result rows the same measurement: the agent, the set, the seed and the
    model file it played (the same key gives the same moves)."""
    model = row.get("model")
    return (
        row["agent"],
        row["board"],
        row["set"],
        row["seed"],
        model.get("sha256") if isinstance(model, dict) else None,
    )


def read_endgame_results(path: str | Path) -> list[dict[str, Any]]:
    """The rows of an ``endgames.json`` results file (``[]`` when there is none), each checked
    to be a result row (:meth:`EndgameErrors.to_dict`: ``agent``, ``board``, ``set`` as text,
    ``seed`` a whole number, at most one row per measurement).

    Raises:
        CarnacError: the file is not a regular file, is larger than :data:`MAX_RESULTS_BYTES`,
            not UTF-8 JSON with finite numbers, or not a list of result rows; naming the file.
    """
    from carnac_env._files import reading

    path = Path(path)
    if not os.path.lexists(path):
        return []
    keep = "it is never replaced: move it away, or use another --out"
    with reading(path, "the endgame results file") as handle:  # a FIFO or a device: refused, never waited on
        data = handle.read(MAX_RESULTS_BYTES + 1)
    if len(data) > MAX_RESULTS_BYTES:
        raise CarnacError(f"endgame results {path}: larger than {MAX_RESULTS_BYTES} bytes; {keep}")
    try:
        rows = json.loads(data.decode("utf-8"), parse_constant=_checks.json_constant)
    except (ValueError, RecursionError) as err:  # not UTF-8, not JSON, NaN, too deep
        raise CarnacError(f"endgame results {path}: not JSON results ({str(err)[:200]}); {keep}") from None
    if not isinstance(rows, list):
        raise CarnacError(f"endgame results {path}: not a list of result rows; {keep}")
    seen = set()
    for number, row in enumerate(rows, 1):
        good = (
            isinstance(row, dict)
            and all(isinstance(row.get(k), str) for k in ("agent", "board", "set"))
            and _checks.is_whole(row.get("seed"))
            and not _checks.is_flag(row.get("seed"))
        )
        if not good:
            raise CarnacError(f"endgame results {path}: row {number} is not an endgame result row; {keep}")
        if _result_key(row) in seen:
            raise CarnacError(f"endgame results {path}: row {number} repeats an earlier row's measurement; {keep}")
        seen.add(_result_key(row))
    return rows


def merge_endgame_results(earlier: list[dict[str, Any]], new: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """The rows of a results file after a run: every earlier row kept, except that a new row of
    the same measurement (agent, set, seed, model file) takes its place; the other new rows
    after them. Returns the rows and what was done, in words (``"2 new, 1 replaced by the
    same measurement, 3 kept"``). Nothing earlier is ever dropped."""
    fresh = {_result_key(row): row for row in new}
    replaced = 0
    rows = []
    for row in earlier:
        key = _result_key(row)
        if key in fresh:
            rows.append(fresh.pop(key))
            replaced += 1
        else:
            rows.append(row)
    rows.extend(fresh.values())
    said = f"{len(fresh)} new, {replaced} replaced by the same measurement, {len(earlier) - replaced} kept from before"
    return rows, said


def run_endgames(
    agent: str,
    boards: str | list[str] | None = None,
    seed: int = 0,
    out: str | Path | None = None,
    progress: bool = True,
    echo: Callable[[str], None] = print,
) -> list[EndgameErrors]:
    """``carnac evaluate SPEC --endgames``: ``agent``'s error rate on each board's endgame set,
    printed as a table, and with ``out`` merged into ``out/endgames.json``.

    Args:
        agent: the agent's spec.
        boards: the boards, a list or comma-separated text (None: every built-in board). An
            empty selection (``""``, ``","``) and a board named twice are refused.
        seed: the evaluation seed.
        out: a folder for ``endgames.json`` (None: print only). It is locked for the run
            (:func:`~carnac_env._files.lock_folder`), and the file already there is read and
            checked before any position is played; its rows are kept, a row of the same
            measurement replaced (:func:`merge_endgame_results`), so a run never leaves the
            file with fewer results than it had.
        progress: say on stderr which board is being played.
        echo: where the table and the file's fate go.

    Raises:
        CarnacError: a bad spec, seed or board, an empty selection, a folder in use by another
            run (:class:`~carnac_env._files.FolderBusyError`), or an ``endgames.json`` there that
            is not a results file (refused, never replaced); all before any position is played.
    """
    from contextlib import nullcontext

    from carnac_env._files import lock_folder, write_json

    if not isinstance(agent, str) or not agent.strip():
        raise CarnacError(f"the agent must be a spec such as 'greedy', got {agent!r}")
    seed = _checks.whole("seed", seed, 0, _checks.MAX_SEED)
    names = _board_list(boards)
    sets = [load_endgames(name) for name in names]  # an unknown board: refused before anything is played
    lock = nullcontext() if out is None else lock_folder(out, "evaluate --endgames")
    with lock, pinned_models():
        path = None if out is None else Path(out) / RESULTS_NAME
        earlier = [] if path is None else read_endgame_results(path)
        results = []
        for chosen in sets:
            if progress:
                print(f"{chosen.board.name}: asking {agent.strip()} ...", file=sys.stderr, flush=True)
            results.append(endgame_errors(agent, seed=seed, endgames=chosen))
        echo(format_endgame_table(results))
        if path is not None:
            rows, said = merge_endgame_results(earlier, [r.to_dict() for r in results])
            write_json(path, rows)
            echo(f"results: {path} (merged with the results there: {said})")
    return results


def _board_list(boards: str | list[str] | None) -> list[str]:
    """The boards of a selection, checked: none given is every built-in board; an empty one, or
    one that names a board twice, is refused."""
    if boards is None:
        return list(BOARDS)
    given = boards.split(",") if isinstance(boards, str) else boards
    if not isinstance(given, list | tuple) or not all(isinstance(b, str) for b in given):
        raise CarnacError(f"--board {boards!r}: expected board names, comma-separated")
    names = [b.strip() for b in given if b.strip()]
    if not names:
        raise CarnacError(
            f"--board {boards!r} names no board; expected one or more of {', '.join(BOARDS)}, comma-separated "
            "(leave --board out for every board)"
        )
    twice = sorted({b for b in names if names.count(b) > 1})
    if twice:
        raise CarnacError(f"--board {boards!r} names {', '.join(twice)} more than once")
    return names
