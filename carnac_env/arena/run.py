"""``run_arena``: check the settings, check the folder, play what is missing, write the results."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from carnac_env._files import lock_folder, write_text
from carnac_env._ray import check_address, import_ray, ray_session
from carnac_env._version import __version__
from carnac_env.agents import make, model_record
from carnac_env.agents.warmup import warm_up
from carnac_env.arena.ratings import check_interval
from carnac_env.arena.ray_runner import ray_games
from carnac_env.arena.report import format_table, summarise
from carnac_env.arena.runner import Finished, check_terminated, local_games, sigterm_as_interrupt
from carnac_env.arena.schedule import ArenaGame, ArenaSettings, check_workers, schedule
from carnac_env.arena.store import ArenaStore, Key
from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError
from carnac_env.models import pinned_models


def run_arena(
    agents: list[str],
    out: str | Path,
    board: str | Board = "medium",
    games: int = 4,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    echo: Callable[[str], None] = print,
    ray: str | None = None,
    openings: int = 0,
    interval: str = "bootstrap",
    announce: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Play (or resume) a round robin and write ``out``'s files; see :mod:`carnac_env.arena`.

    Args:
        agents: agent specs (at least two, all different); their texts are the names.
            A spec naming an import path imports and runs that code (docs/errors.md).
        out: the output folder (created if needed).
        board: board name or :class:`Board`.
        games: games per pair (seats alternate), 1 to ``MAX_GAMES_PER_PAIR``.
        seed: the arena seed, 0 to ``MAX_SEED``.
        workers: processes playing games in parallel (1: in this process), up to ``MAX_WORKERS``.
        progress: show a tqdm progress bar on stderr.
        echo: where the final table goes.
        ray: play the games as Ray tasks (the ``ray`` extra): ``"local"`` starts a Ray for
            the run (with ``workers`` CPUs when ``workers > 1``, else all of them), ``"auto"``
            joins the cluster this machine belongs to, ``"HOST:PORT"`` (or ``ray://...``)
            the cluster there. An open Ray session in this process is used as it is. The
            files are the same as without Ray. See docs/cluster.md.
        openings: each game opens with this many uniformly random plies (0: none, the
            default), drawn from a set seeded by ``seed``: game ``k`` of every pair plays
            opening ``k // 2``, so each opening is played once from each seat
            (:mod:`carnac_env.arena.openings`). Deterministic agents then play different games.
        interval: the ratings' 95% intervals: ``"bootstrap"`` (the default; 200 refits on a
            parametric bootstrap seeded by ``seed``) or ``"likelihood"`` (profile
            likelihood-ratio, as the evaluation panels have: it always holds the rating).
            It shapes ``results.json`` only, not the games, so a finished arena run again
            with the other kind rewrites its results and plays nothing.
        announce: called once every setting and every agent spec has checked, before the
            folder is touched (``carnac arena`` says there where the files go, so a bad spec
            is refused without a word about a folder it never writes).

    Returns:
        The contents of ``results.json``.

    Raises:
        CarnacError: bad settings, an agent spec that does not build, an output folder that
            cannot be written, holds a different arena or is in use by another run
            (:class:`~carnac_env._files.FolderBusyError`: the folder is locked for the whole
            run), a stored game that does not check, or an agent's model file that differs
            from the one the folder's record names (the records name each model file by the
            sha256 of its bytes; every model file is read once per run, in this process, and
            the workers play those very bytes, so a file rewritten during the run changes
            nothing that plays). All of these are raised before any
            game is played, and leave the folder as it was (a torn last line of
            ``games.jsonl`` aside, which is cut). A finished arena run again writes nothing
            (its files already hold the results), so it can be shown from a read-only folder.
        KeyboardInterrupt: Ctrl-C or SIGTERM (:class:`~carnac_env.arena.runner.ArenaTerminated`);
            the workers are stopped and the finished games stay in ``games.jsonl``.
    """
    settings = ArenaSettings.check(agents, board, games, seed, openings)
    check_interval(interval)
    workers, bar_class = check_runner(workers, ray, progress)
    with pinned_models():  # each model file read once: the games play the bytes the record names
        return _run(settings, out, workers, ray, bar_class, echo, interval, announce)


def _run(
    settings: ArenaSettings,
    out: str | Path,
    workers: int,
    ray: str | None,
    bar_class: Any,
    echo: Callable[[str], None],
    interval: str,
    announce: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """:func:`run_arena` after its checks, within :func:`~carnac_env.models.pinned_models`."""
    models = {}
    for spec in settings.agents:
        record = model_record(make(spec), settings.board)  # fails early on a bad spec
        if record:
            models[spec] = record
    stored = settings.to_dict(__version__)
    if models:  # absent without model files, so the arenas made before it resume unchanged
        stored["models"] = models
    if announce is not None:
        announce()
    store = ArenaStore(out)
    planned = schedule(settings.agents, settings.games, settings.seed, settings.openings, settings.board)
    with lock_folder(store.out, "arena"):
        lines = play_schedule(store, stored, settings.board, planned, workers, ray, bar_class, echo=echo)
        return _finish(store, settings, lines, echo, interval, models)


def play_schedule(
    store: ArenaStore,
    stored: dict[str, Any],
    board: Board,
    planned: list[ArenaGame],
    workers: int,
    ray: str | None,
    bar_class: Any = None,
    desc: str = "arena",
    echo: Callable[[str], None] | None = None,
) -> list[str]:
    """Play the games of ``planned`` that ``store`` lacks and return every game's line, in
    ``planned``'s order; the shared middle of :func:`run_arena` and of
    :func:`carnac_env.evaluate.evaluate`.

    The caller holds the folder's lock (:func:`~carnac_env._files.lock_folder`).
    ``stored`` (the settings for ``arena.json``) is checked against the folder first, the
    stored games are checked and kept, and each new game is appended as it finishes.
    ``bar_class`` (tqdm, or None for no bar) shows the progress under ``desc``, counted in
    megaliths placed (``board.megaliths`` per game) so that it moves during a game (on Ray,
    when a game ends), with the games finished in its label; ``echo`` (if given) is told
    when there is nothing left to play.

    Raises:
        CarnacError: as :func:`run_arena`, before any game is played.
        KeyboardInterrupt: Ctrl-C or SIGTERM; the finished games stay in ``games.jsonl``.
    """
    store.check_settings(stored)
    done = store.load_games({g.key: g for g in planned}, board)
    todo = [g for g in planned if g.key not in done]
    if not todo and echo is not None:
        echo(f"all {len(planned)} games already played in {store.games_path}; nothing new to play")
    if todo and ray is None:  # compile here, once, with a word on stderr when it takes a while
        warm_up((spec for g in todo for spec in (g.a, g.b)), board, say=None if bar_class is None else _say)
    bar = None
    if bar_class is not None:
        bar = GameBar(bar_class, desc, len(planned), len(done), board.megaliths)
    try:
        with sigterm_as_interrupt(), _finished_games(board, todo, workers, ray, bar) as finished:
            store.write_settings(stored)
            done.update(_store_games(store, finished, bar, len(todo)))
    finally:
        if bar is not None:
            bar.close()
    return [done[g.key] for g in planned]


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class GameBar:
    """The arena's progress bar: megaliths placed out of all the games' megaliths, and the
    games finished in its label (``arena 3/12 games:  37%|###  | 330/896 megaliths``)."""

    def __init__(self, bar_class: Any, desc: str, games: int, done: int, megaliths: int) -> None:
        self.desc, self.games, self.done, self.megaliths = desc, games, done, megaliths
        self.bar = bar_class(
            total=games * megaliths,
            initial=done * megaliths,
            desc=self._label(),
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} megaliths [{elapsed}<{remaining}]",
            file=sys.stderr,
        )
        self.live = False  # whether placements are reported as they happen (else per game)
        self._drawn = time.monotonic()

    def _label(self) -> str:
        return f"{self.desc} {self.done}/{self.games} games"

    def placed(self, n: int) -> None:
        """``n`` more megaliths placed; with none, the bar is redrawn once a second so that
        its clock moves while a game is being thought about (or its search compiled)."""
        now = time.monotonic()
        if n:
            self.bar.update(n)
        elif now - self._drawn >= 1.0:
            self.bar.refresh()
        else:
            return
        self._drawn = now

    def game_over(self) -> None:
        """One more game finished."""
        self.done += 1
        if not self.live:
            self.bar.update(self.megaliths)
        self.bar.set_description_str(self._label())

    def close(self) -> None:
        self.bar.close()


@contextmanager
def _finished_games(
    board: Board, todo: list[ArenaGame], workers: int, ray: str | None, bar: GameBar | None = None
) -> Iterator[Iterator[Finished]]:
    """The runner for ``todo``: nothing to start when nothing is left, else local processes or Ray
    (which report to ``bar`` per game only)."""
    if not todo:
        yield iter(())
    elif ray is None:
        if bar is not None:
            bar.live = True
        with local_games(board, todo, workers, bar.placed if bar is not None else None) as finished:
            yield finished
    else:
        with ray_session(ray, workers if workers > 1 else None) as session:
            finished = ray_games(session, board, todo)
            try:
                yield finished
            finally:
                finished.close()


def _store_games(store: ArenaStore, finished: Iterator[Finished], bar: GameBar | None, todo: int) -> dict[Key, str]:
    """Append each game to ``games.jsonl`` as it finishes (the file is not opened when
    nothing is left to play)."""
    done: dict[Key, str] = {}
    if not todo:
        return done
    hold = _test_hold()
    with store.appending() as out:
        for key, line in finished:
            out.line(line)
            done[key] = line
            check_terminated()  # a SIGTERM whose exception was lost stops here, this game kept
            if bar is not None:
                bar.game_over()
            if hold is not None and len(done) == hold[0]:
                _hold(hold[1])
    return done


#: Test-only: ``N:PATH`` makes a run stop after storing its N-th new game, write PATH and
#: wait there until it is killed or sent SIGTERM, so the tests of a kill or a SIGTERM
#: mid-arena do not race the arena's end.
TEST_HOLD_VARIABLE = "CARNAC_TEST_HOLD_AFTER"


def _test_hold() -> tuple[int, str] | None:
    value = os.environ.get(TEST_HOLD_VARIABLE, "")
    count, _, path = value.partition(":")
    return (int(count), path) if count.isascii() and count.isdigit() and path else None


def _hold(path: str) -> None:
    """Say (by writing ``path``) that the run is held, then wait to be stopped."""
    write_text(path, str(os.getpid()))  # through _files like every write: never a device or a link
    while True:
        time.sleep(1)


def check_runner(workers: Any, ray: str | None, progress: bool) -> tuple[int, Any]:
    """Check how the games will be played, before anything is written: the worker count, the
    Ray address (and that Ray imports), and the progress bar. Returns the workers and the bar's
    class (None without a bar)."""
    workers = check_workers(workers)
    if ray is not None:
        import_ray()
        check_address(ray)
    return workers, (progress_bar_class() if progress else None)


def progress_bar_class() -> Any:
    """tqdm's class for the progress bar; CarnacError naming tqdm when it is missing."""
    try:
        from tqdm import tqdm
    except ImportError:
        raise CarnacError(
            "the arena's progress bar needs tqdm (pip install tqdm), or run without it (--no-progress)"
        ) from None
    return tqdm


def _finish(
    store: ArenaStore,
    settings: ArenaSettings,
    lines: list[str],
    echo: Callable[[str], None],
    interval: str,
    models: dict[str, dict[str, str]],
) -> dict[str, Any]:
    """Write the canonical ``games.jsonl``, ``results.json`` (with the agents' model files, when
    any plays one) and the plot; print the table."""
    from carnac_env.arena.ratings import plot_ratings

    results = {
        "board": settings.board.name,
        "games_per_pair": settings.games,
        "seed": settings.seed,
        **summarise(list(settings.agents), lines, settings.seed, interval),
        **({"models": models} if models else {}),
    }
    store.finish(lines, results)
    echo(format_table(results))
    if plot_ratings(results, store.plot_path):
        echo(f"ratings plot: {store.plot_path}")
    else:
        echo("no ratings plot: it needs matplotlib (pip install 'carnac-env[plot]')")
    echo(f"games: {store.games_path}; results: {store.results_path}; settings: {store.settings_path}")
    return results
