"""A standard evaluation: an agent's rating on a fixed scale, against a versioned panel.

The arena's ratings are centred on the agents of one run, so they cannot be compared across
runs. An evaluation instead plays one agent against a *reference panel*: fixed opponents
(``random``, ``greedy``, MCTS at two budgets) whose ratings were measured once, in a large
round robin, and are stored with the package (:mod:`carnac_env.evaluate.panel`). Only the
new agent's rating is fitted, with the panel's ratings held fixed, so it lands on the
panel's scale (``random`` pinned at 0) and two cards on the same panel compare directly.

>>> from carnac_env.evaluate import evaluate
>>> card = evaluate("greedy", board="medium", games=10, out="eval-greedy")  # doctest: +SKIP
>>> card["rating"]                                                        # doctest: +SKIP
{'elo': ..., 'ci_low': ..., 'ci_high': ...}

The command line is ``carnac evaluate SPEC --board medium [--games N] [--seed S]
[--workers W] [--ray [ADDR]] [--out DIR]``. Files in ``DIR``: ``arena.json`` (the
settings), ``games.jsonl`` (every game, as in the arena; an interrupted evaluation resumes
from it) and ``card.json``. docs/evaluating.md explains the scale and how to cite a card.

Against the truth instead: :func:`endgame_errors` (``carnac evaluate SPEC --endgames``) counts
how often an agent's move throws away a win or a draw in a board's endgame set, positions from
real games solved exactly (:mod:`carnac_env.evaluate.endgames`: the set file, making a set,
scoring an agent, the report).
"""

from __future__ import annotations

from carnac_env.evaluate.card import CARD_FORMAT, evaluate, evaluation_games, format_card, make_card
from carnac_env.evaluate.endgames.report import format_endgame_table
from carnac_env.evaluate.endgames.score import EndgameErrors, endgame_errors
from carnac_env.evaluate.endgames.sets import EndgameSet, load_endgames
from carnac_env.evaluate.panel import (
    PANEL_DIR,
    PANEL_FORMAT,
    Panel,
    PanelMember,
    build_panel,
    default_panel_id,
    load_panel,
    panel_ids,
)

__all__ = [
    "CARD_FORMAT",
    "PANEL_DIR",
    "PANEL_FORMAT",
    "EndgameErrors",
    "EndgameSet",
    "Panel",
    "PanelMember",
    "build_panel",
    "default_panel_id",
    "endgame_errors",
    "evaluate",
    "evaluation_games",
    "format_card",
    "format_endgame_table",
    "load_endgames",
    "load_panel",
    "make_card",
    "panel_ids",
]
