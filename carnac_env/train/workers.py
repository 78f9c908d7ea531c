"""Self-play shards in local worker processes or in Ray actors (no PyTorch here).

An iteration with ``selfplay_shards > 1`` hands each :class:`~carnac_env.train.selfplay.Shard`
(its kind, number of games, seed and search settings) to a *player*; the learner keeps the
network, the replay buffer and the optimiser. A shard's games depend only on the board, the
network's weights and the shard, so the samples are the same wherever the shards run:

* :class:`LocalPlayers` -- ``workers`` spawned processes on this machine. Each receives the
  board once, when it starts, and each shard's task carries the numpy network (a pickle of
  about 0.5 MB for the default architecture) and the shard.
* :class:`RayPlayers` -- one Ray actor per worker (``num_cpus=1``), on a local Ray or a
  cluster. Each actor receives the board once, when it is created; the network goes into
  Ray's object store once per iteration (``ray.put``) and every actor reads it from there.
  An actor whose process or node is lost is restarted and its shard played again, from the
  same seed, up to :data:`~carnac_env._ray.MAX_RETRIES` times.

:func:`shard_players` opens either (or nothing, for games in this process) from the command
line's ``--workers`` and ``--ray``; :func:`check_players` checks those first. Workers import
:mod:`carnac_env.train.selfplay` and the numpy network of :mod:`carnac_env.models`, never
PyTorch, so a cluster's nodes need only ``pip install 'carnac-env[ray]'``.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError
from carnac_env.models import PolicyValueNet
from carnac_env.train.selfplay import Samples, Shard, timed_shard

#: What a player returns for each shard: samples, statistics, CPU seconds spent on it.
ShardResult = tuple[Samples, dict[str, int], float]

#: Environment of local workers: one BLAS thread each (the matrices are small, and the
#: workers already share the cores between them). Ray's workers get one from ``num_cpus=1``.
_WORKER_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def check_players(workers: Any, ray: str | None) -> int | None:
    """Check ``--workers`` (None, or a whole number 1..256) and ``--ray`` (an address; Ray must
    import) before anything starts; returns the workers.

    Raises:
        CarnacError: naming the bad value, or the ``ray`` extra when Ray is missing.
    """
    from carnac_env._ray import check_address, import_ray
    from carnac_env.arena.schedule import check_workers

    if workers is not None:
        workers = check_workers(workers)
    if ray is not None:
        import_ray("self-play on Ray")
        check_address(ray)
    return workers


@contextmanager
def shard_players(workers: int | None = None, ray: str | None = None) -> Iterator[LocalPlayers | RayPlayers | None]:
    """The players for ``--workers`` and ``--ray``, stopped when the block ends.

    * ``ray`` given: :class:`RayPlayers` on the Ray session that
      :func:`carnac_env._ray.ray_session` opens (``"local"``: a Ray started for
      the block, with ``workers`` CPUs, or all of them; ``"auto"`` or ``"HOST:PORT"``: that
      cluster; an open session in this process is used as it is), with ``workers`` actors
      (default: the cluster's CPUs).
    * else ``workers`` > 1: :class:`LocalPlayers` with that many processes.
    * else None: shards are played in this process.

    Raises:
        CarnacError: as :func:`check_players`, or a Ray cluster that cannot be reached.
    """
    workers = check_players(workers, ray)
    if ray is not None:
        from carnac_env._ray import ray_session

        with ray_session(ray, workers) as session:
            players = RayPlayers(session, workers)
            try:
                yield players
            finally:
                players.close()
    elif workers is not None and workers > 1:
        players = LocalPlayers(workers)
        try:
            yield players
        finally:
            players.close()
    else:
        yield None


# ---------------------------------------------------------------- local processes
_board: Board | None = None


def _start_worker(board: Board) -> None:
    """A local worker's initializer: it keeps the board and leaves Ctrl-C to the learner."""
    global _board
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _board = board


def _play_task(task: tuple[PolicyValueNet | None, Shard]) -> ShardResult:
    assert _board is not None, "the worker was started without a board"
    return timed_shard(_board, task[1], task[0])


class LocalPlayers:
    """``workers`` spawned processes playing shards; started at the first :meth:`play`.

    A worker process that dies (killed, out of memory) breaks the pool; the iteration's shards
    are then played again on a new pool, from their seeds, up to ``MAX_RETRIES`` times.
    """

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._executor: Any = None
        self._board: Board | None = None

    def play(self, board: Board, net: PolicyValueNet | None, shards: list[Shard]) -> list[ShardResult]:
        """Play ``shards`` (``net`` for self-play, None for greedy games); results in shard order.

        Raises:
            CarnacError: the workers died more than ``MAX_RETRIES`` times in a row.
        """
        from concurrent.futures.process import BrokenProcessPool

        from carnac_env._ray import MAX_RETRIES

        tasks = [(net, shard) for shard in shards]
        failures = 0
        while True:
            if self._executor is None or self._board is not board:
                self.close()
                self._start(board)
            try:
                with _worker_environment():  # workers start on demand, copying the environment
                    futures = [self._executor.submit(_play_task, task) for task in tasks]
                return [future.result() for future in futures]
            except BrokenProcessPool as err:
                self.close()
                failures += 1
                if failures > MAX_RETRIES:
                    raise CarnacError(f"the self-play workers died {failures} times in a row ({err})") from None

    def _start(self, board: Board) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = multiprocessing.get_context("spawn")
        self._executor = ProcessPoolExecutor(self.workers, context, _start_worker, (board,))
        self._board = board

    def close(self) -> None:
        """Stop the workers (at once: a shard in progress is dropped)."""
        if self._executor is not None:
            # no public way to stop a running task before Python 3.14 (terminate_workers)
            for process in list((getattr(self._executor, "_processes", None) or {}).values()):
                process.terminate()
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None


@contextmanager
def _worker_environment() -> Iterator[None]:
    """:data:`_WORKER_ENV` in ``os.environ`` within the block (for processes started there)."""
    saved = {name: os.environ.get(name) for name in _WORKER_ENV}
    os.environ.update(_WORKER_ENV)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# ---------------------------------------------------------------- Ray actors
class ShardActor:
    """The body of a Ray actor: the board, kept; shards played on request."""

    def __init__(self, board: Board) -> None:
        self.board = board

    def play(self, net: PolicyValueNet | None, shard: Shard) -> ShardResult:
        return timed_shard(self.board, shard, net)


class RayPlayers:
    """Ray actors playing shards, on the connected Ray session ``ray`` (the module).

    ``workers`` actors (default, and at most: the cluster's CPUs), created at the first
    :meth:`play` and killed by :meth:`close`.
    """

    def __init__(self, ray: Any, workers: int | None = None) -> None:
        from carnac_env._ray import MAX_RETRIES

        self.ray = ray
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.workers = min(workers or cpus, cpus)
        self._remote = ray.remote(num_cpus=1, max_restarts=MAX_RETRIES, max_task_retries=MAX_RETRIES)(ShardActor)
        self.actors: list[Any] = []
        self._board: Board | None = None

    def play(self, board: Board, net: PolicyValueNet | None, shards: list[Shard]) -> list[ShardResult]:
        """Play ``shards`` on the actors (``net`` for self-play, None for greedy games); results
        in shard order, whichever actor played each."""
        from ray.util import ActorPool

        if self._board is not board:
            self.close()
            self._board = board
        while len(self.actors) < min(self.workers, len(shards)):
            # the board travels inline, in the actor's creation task, so a restarted actor
            # finds it again (an argument in the object store may be gone by then)
            self.actors.append(self._remote.remote(board))
        net_ref = self.ray.put(net)
        pool = ActorPool(self.actors[: len(shards)])
        return list(pool.map(lambda actor, shard: actor.play.remote(net_ref, shard), shards))

    def close(self) -> None:
        """Kill the actors (a shard in progress is dropped)."""
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []
        self._board = None
