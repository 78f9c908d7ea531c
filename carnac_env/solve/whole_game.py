"""A whole game solved from its first move: the tree cut a few plies in, each leaf solved apart.

The start of a game is too deep for one search to finish in one sitting, so
:func:`solve_game` cuts the game tree ``plies`` moves in (a placement and its answer are two
plies), merges positions that are images of each other under the board's symmetries, and
solves each position at the cut (a *leaf*) as a :class:`~carnac_env.solve.resumable.LongSolve`:
in pieces of ``chunk_seconds``, each piece followed by a checkpoint. The short tree above the
cut is a minimax over what is known: a leaf is a win, a draw, a loss, or still anything from a
loss to a win, and each node's value is known as an interval. Only a leaf that can still
change the root's interval is solved, first along the first such line (a win found for the
player to move at a node ends that node). So the run stops as soon as the start's value is
proved, typically long before every leaf is solved.

``workers`` leaves are solved at once, on threads (the compiled search releases the GIL, and
each thread keeps its own transposition table of ``table_mb`` MiB).

**Its folder** holds everything a resume needs, all of it small: ``game.json`` (the board,
the cut, the levers, each leaf's action path from the start, its value once solved, its nodes
and CPU seconds) and ``leaf-N.npz``, the checkpoint of each leaf begun and not finished. Run
the same command again, on this machine or another, and it goes on from there (a leaf in
progress resumes from its last checkpoint, with an empty table). The files are untrusted
input: ``game.json``'s leaves must be the cut this board and ``plies`` make, its values -1, 0
or 1; the checkpoints are checked as :meth:`~carnac_env.solve.resumable.LongSolve.load` does.

docs/solver.md tells the story of the run on petit_menec, with its numbers.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from carnac_env import _checks
from carnac_env._files import reading, write_bytes, write_json
from carnac_env._ray import MAX_RETRIES, import_ray, ray_session
from carnac_env.core.boards import Board, board_spec, make_board
from carnac_env.core.game import OVER, GameState
from carnac_env.core.symmetry import symmetries, symmetry
from carnac_env.errors import CarnacError
from carnac_env.solve.resumable import LongSolve, position_key

__all__ = ["FORMAT", "GameSolve", "Split", "solve_game"]

#: The ``format`` of a run's ``game.json``.
FORMAT = "carnac-whole-game-1"
#: The levers a whole-game run uses unless told otherwise: those that searched the fewest nodes
#: on the fixed set's 9-left positions, the deepest measured (docs/solver.md).
RUN_LEVERS: dict[str, Any] = {
    "null_window": True,
    "symmetry": True,
    "two_tier": True,
    "etc": True,
    "last_megalith": True,
    "order": 3,
}


#: What one piece of a leaf's search reports: the leaf, whether it is solved, the nodes and CPU
#: seconds the piece took, and where the search stands (:meth:`LongSolve.progress`).
_Piece = tuple[int, bool, int, float, list[tuple[int, int]]]


@dataclass
class _Node:
    state: GameState
    children: list[int] = field(default_factory=list)  # node numbers, in the kernel's move order
    actions: list[int] = field(default_factory=list)  # the move to each child
    walk: list[int] = field(default_factory=list)  # the children in the order to solve them
    leaf: int = -1  # its number among the leaves, or -1 above the cut
    value: int | None = None  # a finished game's result for its player to act


class Split:
    """The game tree of ``board`` from the start, ``plies`` moves deep, with images under the
    board's symmetries merged (the first one reached stands for all). Its leaves are the
    positions at the cut (or a game that ended before it), numbered in the order a depth-first
    walk in the kernel's move order first reaches them."""

    def __init__(self, board: Board, plies: int) -> None:
        self.board = board
        self.plies = plies
        self.nodes: list[_Node] = []
        self.leaves: list[int] = []  # node numbers
        self.paths: list[list[int]] = []  # each leaf's actions from the start
        self._transforms = [symmetry(board, name) for name in symmetries(board)]
        self._known: dict[str, int] = {}
        self._add(GameState(board), 0, [])

    def _canonical(self, state: GameState) -> str:
        return min(position_key(t.state(state)) for t in self._transforms)

    def _add(self, state: GameState, depth: int, path: list[int]) -> int:
        key = self._canonical(state)
        if key in self._known:
            return self._known[key]
        number = len(self.nodes)
        node = _Node(state)
        self.nodes.append(node)
        self._known[key] = number
        if state.phase == OVER:
            node.value = state.result().reward(state.to_act)
        elif depth == self.plies:
            node.leaf = len(self.leaves)
            self.leaves.append(number)
            self.paths.append(list(path))
        else:
            for action in state.legal_actions():
                child = state.copy()
                child.apply(action)
                node.actions.append(action)
                node.children.append(self._add(child, depth + 1, [*path, action]))
            node.walk = list(node.children)
        return number

    def order(self, priors: Callable[[list[GameState]], list[dict[int, float]]]) -> None:
        """Solve the children of each position above the cut in the order of ``priors`` (for
        a list of positions, each one's ``{legal action: weight}``; the highest weight first,
        ties in the kernel's order), instead of the kernel's order. Only the order in which
        leaves are solved changes (the leaves, their numbers and every value stay)."""
        inner = [n for n, node in enumerate(self.nodes) if node.children]
        for number, weights in zip(inner, priors([self.nodes[n].state for n in inner])):
            node = self.nodes[number]
            ranked = sorted(range(len(node.actions)), key=lambda j: -weights.get(node.actions[j], 0.0))
            walk: list[int] = []
            for j in ranked:
                if node.children[j] not in walk:
                    walk.append(node.children[j])
            node.walk = walk

    def leaf_state(self, leaf: int) -> GameState:
        """The position of leaf number ``leaf``."""
        return self.nodes[self.leaves[leaf]].state

    def interval(self, values: list[int | None], node: int = 0) -> tuple[int, int]:
        """What is known of ``node``'s value for its player to act, given the leaves'
        ``values`` (None: not solved): ``(low, high)``, equal once it is known."""
        memo: dict[int, tuple[int, int]] = {}
        return self._interval(values, node, memo)

    def _interval(self, values: list[int | None], number: int, memo: dict[int, tuple[int, int]]) -> tuple[int, int]:
        if number in memo:
            return memo[number]
        node = self.nodes[number]
        if node.value is not None:
            found = (node.value, node.value)
        elif node.leaf >= 0:
            value = values[node.leaf]
            found = (-1, 1) if value is None else (value, value)
        else:
            low = high = -2
            for child in node.children:
                child_low, child_high = self._oriented(values, number, child, memo)
                low, high = max(low, child_low), max(high, child_high)
            found = (low, high)
        memo[number] = found
        return found

    def _oriented(
        self, values: list[int | None], parent: int, child: int, memo: dict[int, tuple[int, int]]
    ) -> tuple[int, int]:
        """``child``'s interval for ``parent``'s player to act."""
        low, high = self._interval(values, child, memo)
        if self.nodes[child].state.to_act != self.nodes[parent].state.to_act:
            return -high, -low
        return low, high

    def needed(self, values: list[int | None], count: int) -> list[int]:
        """Up to ``count`` unsolved leaves whose values can still change the start's interval,
        the first lines first (a child that cannot raise its parent's known low is skipped)."""
        memo: dict[int, tuple[int, int]] = {}
        found: list[int] = []
        seen: set[int] = set()

        def walk(number: int) -> None:
            low, high = self._interval(values, number, memo)
            if low == high or number in seen or len(found) >= count:
                return
            seen.add(number)
            node = self.nodes[number]
            if node.leaf >= 0:
                found.append(node.leaf)
                return
            for child in node.walk:
                if self._oriented(values, number, child, memo)[1] > low:
                    walk(child)

        walk(0)
        return found

    def line(self, values: list[int | None], best_moves: dict[int, int] | None = None) -> list[int]:
        """The moves from the start along which the start's (known) value holds: at each
        position the first move whose position gets it, to the cut, then the leaf's move from
        ``best_moves`` (leaf number -> its solve's best move) when there is one. The moves are
        played on the real positions: where a position stands in the tree as an image of
        itself (merged by symmetry), the leaf's move is mapped through that symmetry."""
        state = GameState(self.board)
        moves: list[int] = []
        memo: dict[int, tuple[int, int]] = {}
        number = 0
        while self.nodes[number].leaf < 0 and self.nodes[number].value is None:
            target = self._interval(values, number, memo)[0]
            for action in state.legal_actions():
                child_state = state.copy()
                child_state.apply(action)
                child = self._known[self._canonical(child_state)]
                if self._oriented(values, number, child, memo) == (target, target):
                    moves.append(action)
                    state, number = child_state, child
                    break
            else:  # pragma: no cover - a known value always has a move that gets it
                raise CarnacError("no move gets the known value")
        best = (best_moves or {}).get(self.nodes[number].leaf)
        if best is not None:
            moves.append(self._mapped(self.nodes[number].state, state, best))
        return moves

    def _mapped(self, stored: GameState, actual: GameState, action: int) -> int:
        """``action`` of ``stored`` as the move that does the same in ``actual``, an image of it."""
        key = position_key(actual)
        for transform in self._transforms:
            if position_key(transform.state(stored)) == key:
                return transform.action(action)
        raise CarnacError("the position is not an image of the tree's")  # pragma: no cover - by construction


@dataclass
class GameSolve:
    """Where a whole-game run stands (:func:`solve_game`'s answer; ``game.json`` holds it).

    Attributes:
        value: the start's value for the first player (+1 a win, 0 a draw, -1 a loss), or
            None while unproved.
        interval: what is known of it, ``(low, high)``.
        line: with a value, the moves from the start to the leaf that proves it, then that
            leaf's best move (a principal variation's first moves); empty otherwise.
        leaves: leaves at the cut; solved: how many are solved.
        nodes, cpu_seconds: over every leaf's search so far (every process that resumed it).
        finished: whether the run stopped because the value is proved (not on a time limit).
    """

    value: int | None
    interval: tuple[int, int]
    line: list[int]
    leaves: int
    solved: int
    nodes: int
    cpu_seconds: float
    finished: bool


def _record(split: Split, levers: dict[str, Any], table_mb: int) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "board": board_spec(split.board),
        "plies": split.plies,
        "levers": levers,
        "table_mb": table_mb,
        "leaves": [{"actions": path, "value": None, "nodes": 0, "cpu_seconds": 0.0} for path in split.paths],
        "best_moves": {},
    }


def _load_record(path: Path, split: Split, levers: dict[str, Any]) -> dict[str, Any]:
    """``game.json`` of an earlier run, checked against this run's cut and levers."""
    name = f"the run file {path}"
    with reading(path, "the run file") as handle:
        try:
            record = json.loads(handle.read().decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as error:
            raise CarnacError(f"{name} is not JSON: {error}") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise CarnacError(f"{name} is not a {FORMAT} file")
    for key, want in (("board", board_spec(split.board)), ("plies", split.plies), ("levers", levers)):
        if record.get(key) != want:
            raise CarnacError(f"{name} has {key}={record.get(key)!r}, but this run has {want!r}: use another folder")
    leaves = record.get("leaves")
    if not isinstance(leaves, list) or len(leaves) != len(split.paths):
        raise CarnacError(f"{name} does not list the {len(split.paths)} leaves of this cut")
    for number, (leaf, path) in enumerate(zip(leaves, split.paths)):
        if not isinstance(leaf, dict) or leaf.get("actions") != path:
            raise CarnacError(f"{name}: leaf {number} is not the position this cut reaches")
        value, nodes, seconds = leaf.get("value"), leaf.get("nodes"), leaf.get("cpu_seconds")
        if value not in (None, -1, 0, 1) or isinstance(value, bool):
            raise CarnacError(f"{name}: leaf {number} has value {value!r}, expected -1, 0, 1 or null")
        if not _checks.is_whole(nodes) or nodes < 0 or not isinstance(seconds, (int, float)) or seconds < 0:
            raise CarnacError(f"{name}: leaf {number}'s nodes or cpu_seconds are not counts")
    best_moves = record.setdefault("best_moves", {})
    if not isinstance(best_moves, dict):
        raise CarnacError(f"{name}: best_moves is not an object")
    for key, move in best_moves.items():
        number = int(key) if isinstance(key, str) and key.isdigit() else -1
        if not 0 <= number < len(leaves) or leaves[number]["value"] is None:
            raise CarnacError(f"{name}: best_moves names {key!r}, not a solved leaf")
        if not _checks.is_whole(move) or move not in split.leaf_state(number).legal_actions():
            raise CarnacError(f"{name}: leaf {number}'s best move {move!r} is not legal there")
    return record


def _answer(split: Split, record: dict[str, Any], finished: bool) -> GameSolve:
    values = [leaf["value"] for leaf in record["leaves"]]
    low, high = split.interval(values)
    line: list[int] = []
    if low == high:
        line = split.line(values, {int(k): v for k, v in record.get("best_moves", {}).items()})
    return GameSolve(
        value=low if low == high else None,
        interval=(low, high),
        line=line,
        leaves=len(values),
        solved=sum(v is not None for v in values),
        nodes=sum(leaf["nodes"] for leaf in record["leaves"]),
        cpu_seconds=round(sum(leaf["cpu_seconds"] for leaf in record["leaves"]), 1),
        finished=finished,
    )


def ray_piece(
    board: str,
    actions: list[int],
    checkpoint: bytes | None,
    levers: dict[str, Any],
    table_mb: int,
    chunk_seconds: float,
    chunk_nodes: int,
) -> tuple[bool, int, int, int, bytes, float, list[tuple[int, int]]]:
    """One piece of a leaf's search where it runs (a Ray task): the leaf is the position
    ``actions`` reach from the start of ``board`` (a board spec), resumed from ``checkpoint``
    (checked as :meth:`LongSolve.from_bytes` does) or begun. Returns ``(done, result,
    best_action, nodes, checkpoint, cpu_seconds, progress)``; result and best move only when
    done, progress as :meth:`LongSolve.progress`."""
    from carnac_env.core.boards import parse_board

    start = time.thread_time()
    state = GameState(parse_board(board))
    for action in actions:
        state.apply(action)
    if checkpoint is None:
        search = LongSolve(state, table_mb, **levers)
    else:
        search = LongSolve.from_bytes(checkpoint, state, table_mb, "a leaf's checkpoint")
    before = search.nodes
    done = search.run(chunk_seconds, chunk_nodes)
    result, best = (search.result, search.best_action) if done else (0, -1)
    spent = time.thread_time() - start
    return done, result, best, search.nodes - before, search.to_bytes(), spent, search.progress()


def solve_game(
    board: str | Board,
    folder: str | os.PathLike[str],
    plies: int = 2,
    *,
    workers: int = 2,
    hours: float = 0.0,
    chunk_seconds: float = 300.0,
    chunk_nodes: int = 0,
    pieces: int = 0,
    table_mb: int = 1024,
    ray: str | None = None,
    priors: Callable[[list[GameState]], list[dict[int, float]]] | None = None,
    progress: Callable[[str], None] | None = print,
    **levers: Any,
) -> GameSolve:
    """Solve ``board``'s game from the start, or go on with the run kept in ``folder``.

    Args:
        board: a board name or :class:`~carnac_env.core.boards.Board`.
        folder: the run's folder (made if missing): ``game.json`` and the leaves' checkpoints.
        plies: where the tree is cut (2: after the first megalith's placement and answer).
        workers: leaves solved at once, one thread each.
        hours: stop after about this long (0: only when the value is proved); the pieces
            running then finish and are saved first.
        chunk_seconds: how long a leaf searches between two checkpoints.
        chunk_nodes: or how many nodes (0: no node limit; for tests).
        pieces: stop after this many pieces in all (0: no limit).
        table_mb: each thread's transposition table, in MiB.
        ray: solve the leaves as Ray tasks on the cluster at this address (``"local"``: a
            Ray started for the run; the ``ray`` extra), ``workers`` at a time: a piece runs
            on any node, from the checkpoint the driver keeps, so the run scales past one
            machine. None: on this machine's threads.
        priors: the order in which to solve the children of each position above the cut
            (:meth:`Split.order`; ``carnac solve`` passes the az network's priors): None, the
            kernel's order. It changes how soon the start's value is proved, never the value.
        progress: called with a line after each piece (None: quiet).
        **levers: the search's levers (:data:`RUN_LEVERS` by default; see
            :func:`~carnac_env.solve.solve`). A run's folder keeps its levers.

    Returns:
        A :class:`GameSolve`.

    Raises:
        CarnacError: a bad argument, or a run file or checkpoint that is not this run's.
    """
    board = make_board(board)
    plies = _checks.whole("plies", plies, 0, 2 * board.megaliths)
    workers = _checks.whole("workers", workers, 1, 1024)
    hours = _checks.number("hours", hours, 0.0, 24.0 * 366)
    chunk_seconds = _checks.number("chunk_seconds", chunk_seconds, 0.0, 86_400.0)
    chunk_nodes = _checks.whole("chunk_nodes", chunk_nodes, 0, 2**62)
    pieces = _checks.whole("pieces", pieces, 0, 2**62)
    levers = {**RUN_LEVERS, **levers}
    LongSolve(GameState(board), table_mb, **levers)  # checks the levers and table_mb, before any work
    say = progress or (lambda line: None)
    split = Split(board, plies)
    if priors is not None:
        split.order(priors)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    record_path = folder / "game.json"
    if record_path.exists():
        record = _load_record(record_path, split, levers)
    else:
        record = _record(split, levers, table_mb)
        write_json(record_path, record)
    values = [leaf["value"] for leaf in record["leaves"]]
    say(f"{board.name}: {len(split.nodes) - len(values)} positions above the cut at ply {plies}, {len(values)} leaves, "
        f"{sum(v is not None for v in values)} solved; start's value in {split.interval(values)}")  # fmt: skip
    deadline = time.monotonic() + hours * 3600 if hours else float("inf")
    lock = threading.Lock()
    searches: dict[int, LongSolve] = {}  # the searches under way in this process, between pieces
    finals: dict[int, tuple[int, int]] = {}  # a leaf's result and best move, once solved

    def local_piece(leaf: int) -> _Piece:
        """One piece of leaf ``leaf``'s search on this thread, then its checkpoint."""
        start = time.thread_time()
        with lock:
            search = searches.get(leaf)
        if search is None:
            checkpoint = folder / f"leaf-{leaf}.npz"
            state = split.leaf_state(leaf)
            search = LongSolve.load(checkpoint, state, table_mb) if checkpoint.exists() else LongSolve(
                state, table_mb, **levers)  # fmt: skip
        before = search.nodes
        done = search.run(chunk_seconds, chunk_nodes)
        if not done:
            search.save(folder / f"leaf-{leaf}.npz")
        with lock:
            if done:
                searches.pop(leaf, None)
                finals[leaf] = (search.result, search.best_action)
            else:
                searches[leaf] = search
        return leaf, done, search.nodes - before, time.thread_time() - start, search.progress()

    if ray is not None:
        import_ray("solving on Ray")  # names the extra when it is missing
        with ray_session(ray, num_cpus=workers) as ray_module:
            remote = ray_module.remote(num_cpus=1, max_retries=MAX_RETRIES)(ray_piece)
            spec = board_spec(board)

            def remote_piece(leaf: int) -> _Piece:
                """One piece of leaf ``leaf``'s search as a Ray task; its checkpoint kept here."""
                checkpoint = folder / f"leaf-{leaf}.npz"
                data = None
                if checkpoint.exists():
                    with reading(checkpoint, "the checkpoint") as handle:
                        data = handle.read()
                task = remote.remote(spec, split.paths[leaf], data, levers, table_mb, chunk_seconds, chunk_nodes)
                done, result, best, nodes, saved, seconds, where = ray_module.get(task)
                with lock:
                    finals[leaf] = (result, best)
                if not done:
                    write_bytes(checkpoint, saved)
                return leaf, done, nodes, seconds, where

            return _drive(split, record, record_path, folder, remote_piece, finals, workers, pieces, deadline, say)
    return _drive(split, record, record_path, folder, local_piece, finals, workers, pieces, deadline, say)


def _drive(
    split: Split, record: dict[str, Any], record_path: Path, folder: Path,
    piece: Callable[[int], _Piece], finals: dict[int, tuple[int, int]], workers: int, pieces: int,
    deadline: float, say: Callable[[str], None],
) -> GameSolve:  # fmt: skip
    """Run ``piece`` on the needed leaves, ``workers`` at a time, until the start's value is
    proved, ``pieces`` pieces have run or the ``deadline`` (``time.monotonic``) has passed;
    each finished piece is written to ``record_path``."""
    leaves = record["leaves"]
    values: list[int | None] = [leaf["value"] for leaf in leaves]
    running: dict[Future, int] = {}
    finished = False
    started = 0
    with ThreadPoolExecutor(workers, thread_name_prefix="carnac-solve") as pool:
        while True:
            low, high = split.interval(values)
            finished = low == high
            if not finished and time.monotonic() < deadline:
                busy = set(running.values())
                for leaf in split.needed(values, workers + len(busy)):
                    if leaf not in busy and len(running) < workers and (not pieces or started < pieces):
                        running[pool.submit(piece, leaf)] = leaf
                        started += 1
            if not running:
                break
            done_now, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in done_now:
                del running[future]
                leaf, done, nodes, seconds, where = future.result()
                entry = leaves[leaf]
                entry["nodes"] += nodes
                entry["cpu_seconds"] = round(entry["cpu_seconds"] + seconds, 3)
                if done:
                    result, best = finals.pop(leaf)
                    entry["value"] = values[leaf] = result
                    record["best_moves"][str(leaf)] = best
                    (folder / f"leaf-{leaf}.npz").unlink(missing_ok=True)
                write_json(record_path, record)
                total = sum(e["cpu_seconds"] for e in leaves)
                along = ", ".join(f"move {begun} of {count}" for begun, count in where)
                say(f"leaf {leaf}: {'solved, ' + str(values[leaf]) if done else 'piece at ' + along} "
                    f"({entry['nodes']:,} nodes, {entry['cpu_seconds'] / 3600:.2f} CPU h); "
                    f"{sum(v is not None for v in values)}/{len(leaves)} solved, start in {split.interval(values)}, "
                    f"{total / 3600:.2f} CPU h in all")  # fmt: skip
    answer = _answer(split, record, finished)
    say(f"start's value: {answer.value if finished else 'not proved yet'} (interval {answer.interval})")
    return answer
