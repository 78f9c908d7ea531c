"""Playing arena games: one game on the AEC env, and many in local worker processes.

A runner takes the games still to play and yields ``(key, line)`` as each one finishes, in
any order; the caller (:func:`carnac_env.arena.run_arena`) stores the lines. Games run in
this process (``workers=1``) or in a pool of spawned processes. Leaving the ``with`` block
early (an error, Ctrl-C or SIGTERM) terminates the workers at once, so only finished
games, already written, remain; and a worker whose parent dies (``kill -9``) ends itself at
once (:func:`exit_with_parent`).

Progress is counted in megaliths: every game is worth ``board.megaliths``, one for each
placement, and a game that ends early (a full board) counts its unplaced megaliths when it
ends. ``local_games(..., on_progress=f)`` calls ``f(n)`` in the calling process with the
megaliths counted since the last call: after every placement with one worker; from a
counter the workers share, a few times a second, with several. A progress bar so moves
during a long game, not only when one ends.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from carnac_env.agents import make
from carnac_env.arena.schedule import ArenaGame
from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import PLACE
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError

Finished = tuple[tuple[str, str, int], str]


def play_game(
    board: Board | str,
    red: str | Any,
    white: str | Any,
    seed: int,
    on_progress: Callable[[int], None] | None = None,
    opening: tuple[int, ...] = (),
) -> GameRecord:
    """Play one game on the AEC env between two agents (specs or agent objects), each asked
    for its moves with the game (``act(state)``).

    The agents are built (or re-seeded) with seeds derived from ``seed`` and their seat. The
    ``opening`` actions, if any, are played first (they are part of the game's record).
    ``on_progress(1)`` (if given) is called after every placement, and at the end with the
    megaliths left unplaced when the game ended early, so the calls add up to
    ``board.megaliths`` per game.

    Raises:
        CarnacError: an agent returned an illegal action (naming the agent and the move).
    """
    from carnac_env.envs.aec import raw_env

    env = raw_env(board=board if isinstance(board, Board) else make_board(board))
    env.reset(seed=seed)
    players = []
    for seat, spec in enumerate((red, white)):
        agent_seed = (seed * 2 + seat) % (1 << 63)
        if isinstance(spec, str):
            players.append(make(spec, seed=agent_seed))
        else:
            if hasattr(spec, "reset"):
                spec.reset(agent_seed)
            players.append(spec)
    game = env.game
    for action in opening:
        placing = on_progress is not None and game.phase == PLACE
        env.step(action)
        if placing:
            on_progress(1)
    while not game.is_over:
        seat = game.to_act
        action = players[seat].act(game)
        placing = on_progress is not None and game.phase == PLACE
        try:
            env.step(action)
        except CarnacError as err:
            name = red if seat == 0 else white
            raise CarnacError(f"agent {name!r} chose an illegal move: {err}") from None
        if placing:
            on_progress(1)
    if on_progress is not None and game.placed < game.board.megaliths:
        on_progress(game.board.megaliths - game.placed)
    return env.record()


def play_arena_game(board: Board, game: ArenaGame, on_progress: Callable[[int], None] | None = None) -> Finished:
    """Play one game of the schedule; return its key and its line for ``games.jsonl``."""
    red, white = game.seats
    record = play_game(board, red, white, game.seed, on_progress, game.opening)
    record.meta = game.meta()
    return game.key, record.to_json()


#: In a worker process: the counter of megaliths placed that all workers share (set by
#: :func:`_start_worker`), or None.
_COUNTER: Any = None


def _count(n: int) -> None:
    with _COUNTER.get_lock():
        _COUNTER.value += n


def _play_task(task: tuple[Board, ArenaGame]) -> Finished:
    """Worker entry point (a module-level function, so spawned processes can import it)."""
    return play_arena_game(*task, on_progress=_count if _COUNTER is not None else None)


#: In a worker process: the model files it plays, pinned for its life (see :func:`_start_worker`).
_PINNED: Any = None


def _start_worker(counter: Any = None, models: dict[str, bytes] | None = None) -> None:
    """Workers leave Ctrl-C to the main process, which stops them; ``counter`` is the shared
    count of megaliths placed; ``models`` the bytes of the model files the parent loaded
    (:func:`~carnac_env.models.pinned_files`), which the worker plays instead of reading those
    files again, so that every game plays the bytes the arena's record names. Each worker also
    ends itself as soon as its parent is gone (:func:`exit_with_parent`), so a ``kill -9`` of
    the arena does not leave games playing on."""
    global _COUNTER, _PINNED
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _COUNTER = counter
    if models:
        from carnac_env.models import pinned_models

        _PINNED = pinned_models(models)
        _PINNED.__enter__()  # for the worker's life
    exit_with_parent()


def play_pinned_game(board: Board, game: ArenaGame, models: dict[str, bytes]) -> Finished:
    """:func:`play_arena_game` playing the model files' bytes ``models`` (a Ray task's entry:
    the caller's :func:`~carnac_env.models.pinned_files`) instead of reading those files."""
    from carnac_env.models import pinned_models

    with pinned_models(models):
        return play_arena_game(board, game)


def exit_with_parent() -> None:
    """In a process started by :mod:`multiprocessing`: end this process (``os._exit``) as soon
    as its parent process ends, however it ends (a ``kill -9`` included).

    A daemon thread waits on the parent's sentinel (the end of a pipe that the kernel closes
    when the parent dies), so the worker notices at once, not when it asks for its next task;
    the search kernels release Python's lock, so the thread runs even mid-search. Nothing is
    done outside a multiprocessing child.
    """
    import multiprocessing
    import os
    import threading
    from multiprocessing.connection import wait

    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="carnac-parent-watch", daemon=True).start()


#: Seconds between two looks at the workers' shared counter while no game finishes.
POLL_SECONDS = 0.25


@contextmanager
def local_games(
    board: Board, games: list[ArenaGame], workers: int, on_progress: Callable[[int], None] | None = None
) -> Iterator[Iterator[Finished]]:
    """The finished games, in this process or in ``workers`` spawned processes.

    Use as ``with local_games(...) as finished: for key, line in finished: ...``; the
    workers are terminated when the block is left, however it is left. Within
    :func:`~carnac_env.models.pinned_models` the workers play the bytes of the model files
    loaded here, never the files as they are on disk when they start. ``on_progress``
    is told of the megaliths placed, in this process, as the module docstring says.
    """
    tasks = [(board, game) for game in games]
    if workers <= 1 or len(tasks) <= 1:
        yield (play_arena_game(board, game, on_progress) for game in games)
        return
    import multiprocessing

    from carnac_env.models import pinned_files

    context = multiprocessing.get_context("spawn")
    counter = context.Value("q", 0) if on_progress is not None else None
    pool = context.Pool(min(workers, len(tasks)), _start_worker, (counter, pinned_files()))
    try:
        results = pool.imap_unordered(_play_task, tasks)
        yield results if counter is None else _polled(results, len(tasks), counter, on_progress)
        pool.close()
        pool.join()
    finally:
        pool.terminate()
        pool.join()


def _polled(results: Any, count: int, counter: Any, on_progress: Callable[[int], None]) -> Iterator[Finished]:
    """The pool's results, reading the shared counter while waiting for each one."""
    import multiprocessing

    seen = 0

    def report() -> None:
        nonlocal seen
        now = counter.value
        on_progress(now - seen)  # also when nothing moved: a bar's clock keeps ticking
        seen = now

    for _ in range(count):
        while True:
            try:
                finished = results.next(timeout=POLL_SECONDS)
            except multiprocessing.TimeoutError:
                report()
                continue
            break
        report()
        yield finished


class ArenaTerminated(KeyboardInterrupt):
    """SIGTERM reached the arena; handled like Ctrl-C (workers stopped, finished games kept)."""


#: Set by :func:`sigterm_as_interrupt`'s handler: the SIGTERM that :func:`check_terminated` acts on
#: when the handler's exception was lost.
_TERMINATED = threading.Event()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`ArenaTerminated` (in the main thread only;
    elsewhere the block runs unchanged).

    Python drops an exception raised while it runs a finalizer or a weakref callback (it prints
    "Exception ignored in ..." and goes on), and a signal can land there; so the handler also
    records the signal, and loops call :func:`check_terminated` between their steps to stop all
    the same. Within the block such a dropped :class:`ArenaTerminated` is not printed (the
    record stands for it); other unraisable exceptions still are."""

    def handler(signum: int, frame: Any) -> None:
        _TERMINATED.set()
        raise ArenaTerminated(f"signal {signum}")

    handler.sigterm_as_interrupt = True  # type: ignore[attr-defined]
    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    # only the outermost block starts and ends the record: a block nested in another (an arena
    # run inside a caller's block) must not forget a signal the outer one still has to act on
    outermost = not getattr(previous, "sigterm_as_interrupt", False)
    if outermost:
        _TERMINATED.clear()
        hook = sys.unraisablehook

        def quiet(unraisable: Any) -> None:  # the record carries a dropped ArenaTerminated: no traceback
            if not isinstance(unraisable.exc_value, ArenaTerminated):
                hook(unraisable)

        sys.unraisablehook = quiet
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if outermost:
            sys.unraisablehook = hook
            _TERMINATED.clear()


def check_terminated() -> None:
    """Raise :class:`ArenaTerminated` if SIGTERM reached :func:`sigterm_as_interrupt`'s block and
    its exception was lost (see there); nothing otherwise. Call it between steps of a loop."""
    if _TERMINATED.is_set():
        raise ArenaTerminated(f"signal {signal.SIGTERM.value}")
