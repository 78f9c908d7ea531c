"""A reproducible, resumable round-robin arena between agents.

Every pair of agents plays ``games`` games, seats alternating (in game 0 of a pair the
first-named agent plays Red, player_0). Each game is identified by its pair and index, and
its seed is derived from the arena seed and that identity alone (:func:`game_seed`), never
from the order in which games run; so the set of games is the same for any number of
workers, and an interrupted run resumed later plays exactly the games that are missing.

Files written to the output folder:

* ``arena.json``: the arena's settings (board, rules, agents, games per pair, seed and
  the package version; ``models``: the model file each model-playing agent such as ``az``
  plays, by name and sha256, :func:`~carnac_env.agents.model_record`); a rerun with different
  settings into the same folder is refused (another network under the same name included),
  and so are games without their settings (see :mod:`carnac_env.arena.store`).
* ``games.jsonl``: one game record per line (see :mod:`carnac_env.core.record`), with
  extra keys ``agents`` (``[Red name, White name]``), ``pair`` (``[a, b]``), ``game``
  (the index within the pair), ``seats`` (name -> player number) and ``seed``. Lines
  are appended and flushed as games finish; once all games are in, the file is rewritten
  in a canonical order (pair order, then index), so its bytes do not depend on workers or
  interruptions. On resume every stored line is checked against the settings and
  replayed to its stated result; a torn last line (a kill during a write) is dropped and
  played again.
* ``results.json``: ``agents``, ``pairs`` (``{"a", "b", "wins_a", "wins_b", "draws"}``),
  ``standings`` and ``ratings`` (name -> ``{"elo", "ci_low", "ci_high"}``), see
  :func:`bradley_terry`; and ``models`` as in ``arena.json`` when an agent plays a model file.
* ``ratings.png``: the ratings with their intervals, when matplotlib is installed.

The progress bar needs tqdm; the plot needs matplotlib (``pip install 'carnac-env[plot]'``).

The package's parts: :mod:`~carnac_env.arena.schedule` (settings, games, seeds),
:mod:`~carnac_env.arena.store` (the files), :mod:`~carnac_env.arena.runner` (playing
games, locally), :mod:`~carnac_env.arena.ratings` (Bradley-Terry and the plot),
:mod:`~carnac_env.arena.report` (results and the table) and :mod:`~carnac_env.arena.run`
(:func:`run_arena`, which ties them together).
"""

from __future__ import annotations

from carnac_env.arena.ratings import BOOTSTRAP, ELO_PER_UNIT, PRIOR_DRAWS, bradley_terry, plot_ratings
from carnac_env.arena.report import format_table, summarise
from carnac_env.arena.run import run_arena
from carnac_env.arena.runner import ArenaTerminated, play_game
from carnac_env.arena.schedule import (
    MAX_ARENA_GAMES,
    MAX_GAMES_PER_PAIR,
    MAX_SEED,
    MAX_WORKERS,
    ArenaGame,
    ArenaSettings,
    game_seed,
    schedule,
    split_agents,
)
from carnac_env.arena.store import ArenaStore, check_record, load_games

__all__ = [
    "BOOTSTRAP",
    "ELO_PER_UNIT",
    "MAX_ARENA_GAMES",
    "MAX_GAMES_PER_PAIR",
    "MAX_SEED",
    "MAX_WORKERS",
    "PRIOR_DRAWS",
    "ArenaGame",
    "ArenaSettings",
    "ArenaStore",
    "ArenaTerminated",
    "bradley_terry",
    "check_record",
    "format_table",
    "game_seed",
    "load_games",
    "play_game",
    "plot_ratings",
    "run_arena",
    "schedule",
    "split_agents",
    "summarise",
]
