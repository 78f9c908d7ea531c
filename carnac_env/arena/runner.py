"""Playing arena games: one game on the AEC env, and many in local worker processes.

A runner takes the games still to play and yields ``(key, line)`` as each one finishes, in
any order; the caller (:func:`carnac_env.arena.run_arena`) stores the lines. Games run in
this process (``workers=1``) or in a pool of spawned processes. Leaving the ``with`` block
early (an error, Ctrl-C or SIGTERM) terminates the workers at once, so only finished
games, already written, remain.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from carnac_env.agents import make
from carnac_env.arena.schedule import ArenaGame
from carnac_env.core.boards import Board, make_board
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError

Finished = tuple[tuple[str, str, int], str]


def play_game(
    board: Board | str, red: str | Any, white: str | Any, seed: int, opening: tuple[int, ...] = ()
) -> GameRecord:
    """Play one game on the AEC env between two agents (specs or agent objects).

    The agents are built (or re-seeded) with seeds derived from ``seed`` and their seat. The
    ``opening`` actions, if any, are played first (they are part of the game's record).

    Raises:
        CarnacError: an agent returned an illegal action (naming the agent and the move).
    """
    from carnac_env.aec import raw_env

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
    for action in opening:
        env.step(action)
    while not env.game.is_over:
        seat = env.game.to_act
        action = players[seat].act(env)
        try:
            env.step(action)
        except CarnacError as err:
            name = red if seat == 0 else white
            raise CarnacError(f"agent {name!r} chose an illegal move: {err}") from None
    return env.record()


def play_arena_game(board: Board, game: ArenaGame) -> Finished:
    """Play one game of the schedule; return its key and its line for ``games.jsonl``."""
    red, white = game.seats
    record = play_game(board, red, white, game.seed, game.opening)
    record.meta = game.meta()
    return game.key, record.to_json()


def _play_task(task: tuple[Board, ArenaGame]) -> Finished:
    """Worker entry point (a module-level function, so spawned processes can import it)."""
    return play_arena_game(*task)


def _ignore_sigint() -> None:
    """Workers leave Ctrl-C to the main process, which stops them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def local_games(board: Board, games: list[ArenaGame], workers: int) -> Iterator[Iterator[Finished]]:
    """The finished games, in this process or in ``workers`` spawned processes.

    Use as ``with local_games(...) as finished: for key, line in finished: ...``; the
    workers are terminated when the block is left, however it is left.
    """
    tasks = [(board, game) for game in games]
    if workers <= 1 or len(tasks) <= 1:
        yield map(_play_task, tasks)
        return
    import multiprocessing

    pool = multiprocessing.get_context("spawn").Pool(min(workers, len(tasks)), _ignore_sigint)
    try:
        yield pool.imap_unordered(_play_task, tasks)
        pool.close()
        pool.join()
    finally:
        pool.terminate()
        pool.join()


class ArenaTerminated(KeyboardInterrupt):
    """SIGTERM reached the arena; handled like Ctrl-C (workers stopped, finished games kept)."""


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`ArenaTerminated` (in the main thread only;
    elsewhere the block runs unchanged)."""

    def handler(signum: int, frame: Any) -> None:
        raise ArenaTerminated(f"signal {signum}")

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
