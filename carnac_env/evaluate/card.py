"""``evaluate``: play an agent against a reference panel and write its card."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from carnac_env import _checks
from carnac_env._files import lock_folder, write_json, write_text
from carnac_env._version import __version__
from carnac_env.agents import make, model_record
from carnac_env.arena.openings import MAX_OPENING_PLIES, random_opening
from carnac_env.arena.ratings import LIKELIHOOD_DROP_95, PRIOR_DRAWS, fit_against_anchors
from carnac_env.arena.run import check_runner, play_schedule
from carnac_env.arena.schedule import ArenaGame, check_games, check_seed, game_seed
from carnac_env.arena.store import ArenaStore
from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError
from carnac_env.evaluate.panel import Panel, load_panel
from carnac_env.models import pinned_models

#: The format version of ``card.json``.
CARD_FORMAT = 1


def evaluation_games(spec: str, panel: Panel, games: int, seed: int, openings: int = 0) -> list[ArenaGame]:
    """The games of an evaluation, in canonical order: ``games`` against each member in the
    panel's order, the agent as pair member ``a`` (Red in even games, White in odd ones),
    each seeded from the evaluation seed and the game's identity (the arena's
    :func:`~carnac_env.arena.schedule.game_seed`). With ``openings`` plies, game ``k`` against
    every member opens with opening ``k // 2`` of the set seeded by ``seed``, as in the arena."""
    lines = {}
    if openings:
        lines = {k: tuple(random_opening(panel.board, openings, seed, k)) for k in range((games + 1) // 2)}
    return [
        ArenaGame(spec, member.spec, k, game_seed(seed, spec, member.spec, k), lines.get(k // 2, ()))
        for member in panel.members
        for k in range(games)
    ]


def evaluate(
    agent: str,
    board: str | Board | None = "medium",
    panel: str | Path | None = None,
    games: int | None = None,
    seed: int | None = None,
    workers: int = 1,
    out: str | Path = "carnac-evaluate",
    progress: bool = True,
    echo: Callable[[str], None] = print,
    ray: str | None = None,
    trust_panel_code: bool = False,
    openings: int | None = None,
) -> dict[str, Any]:
    """Play ``agent`` against a reference panel (or resume doing so) and write ``out/card.json``.

    The agent plays ``games`` games against each panel member, seats alternating (Red in
    even games). Game seeds come from ``seed`` and each game's identity, as in the arena, so
    the games, the files and the card are the same for any ``workers`` (and with Ray) and
    after any interruption. The rating is fitted with the panel's ratings held fixed
    (:func:`~carnac_env.arena.ratings.fit_against_anchors`), so it sits on the panel's scale
    (its anchor, ``random``, at 0) and can be compared with any card on the same panel.

    Args:
        agent: the agent's spec (``"greedy"``, ``"mcts:sims=400"``, ``"pkg.mod.Agent:x=1"``);
            it names the agent on the card. An import path imports and runs that code.
        board: the board (the panel must be measured on it); None: the panel's board.
        panel: a shipped panel's id (``"medium-v1"``), a panel file, or None for the newest
            panel measured on ``board``.
        games: games against each member (None: the panel's published default).
        seed: the evaluation seed (None: the panel's published default).
        workers: processes playing games in parallel (1: in this process).
        out: the output folder: ``arena.json`` (the settings), ``games.jsonl`` (every game)
            and ``card.json``. Run again with the same settings to resume.
        progress: show a tqdm progress bar on stderr.
        echo: where the card's table goes.
        ray: play the games as Ray tasks, as :func:`~carnac_env.arena.run_arena`'s ``ray``.
        trust_panel_code: let a panel file name members by import path (their code is
            imported and run); off by default, so a panel file is data only
            (:func:`~carnac_env.evaluate.panel.load_panel`, docs/security.md).
        openings: open every game with this many seeded random plies (0: none), opening
            ``k // 2`` for game ``k`` against each member, so that an agent without random
            choices meets each member in varied games. None: the panel's published default
            (``defaults.openings``: 0 for the v1 panels, measured from the start of the game;
            4 for the v2 panels, measured from 4-ply openings). The card says how many plies
            its games opened with.

    Returns:
        The card (the contents of ``card.json``; see docs/evaluating.md).

    Raises:
        CarnacError: a bad spec, panel, board, number of games, seed or workers, or an output
            folder holding something else or in use by another run (the folder is locked
            for the whole evaluation); all before any game is played.
        KeyboardInterrupt: Ctrl-C or SIGTERM; finished games are kept for the resume.
    """
    if not isinstance(agent, str) or not agent.strip():
        raise CarnacError(f"the agent to evaluate must be a spec string such as 'greedy', got {agent!r}")
    with pinned_models():  # each model file read once: the games play the bytes the card names
        spec = agent.strip()
        player = make(spec)  # fail early on a bad spec
        chosen = load_panel(panel, board, trust_code=trust_panel_code)
        model = model_record(player, chosen.board)
        games = check_games(chosen.default_games if games is None else games)
        seed = check_seed(chosen.default_seed if seed is None else seed)
        openings = _checks.whole(
            "opening plies", chosen.default_openings if openings is None else openings, 0, MAX_OPENING_PLIES
        )
        workers, bar_class = check_runner(workers, ray, progress)
        for member in chosen.members:
            make(member.spec)
        settings = {
            "evaluate": spec,
            "panel": chosen.id,
            "board": chosen.board.name,
            "rules": chosen.board.rules(),
            "games_per_opponent": games,
            "seed": seed,
            "carnac_env": __version__,
            **({"openings": openings} if openings else {}),
            **({"model": model} if model else {}),
        }
        store = ArenaStore(out)
        planned = evaluation_games(spec, chosen, games, seed, openings)
        card_path = Path(out) / "card.json"
        with lock_folder(store.out, "evaluate"):
            lines = play_schedule(store, settings, chosen.board, planned, workers, ray, bar_class, "evaluate", echo)
            card = make_card(spec, chosen, games, seed, planned, lines, __version__, panel, openings, model)
            write_text(store.games_path, "".join(line + "\n" for line in lines), if_changed=True)
            write_json(card_path, card, if_changed=True)
        echo(format_card(card))
        echo(f"card: {card_path}; games: {store.games_path}")
        return card


def make_card(
    spec: str,
    panel: Panel,
    games: int,
    seed: int,
    planned: list[ArenaGame],
    lines: list[str],
    version: str,
    panel_arg: str | Path | None = None,
    openings: int = 0,
    model: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The card of a finished evaluation (``lines`` in ``planned``'s order); ``model``: the
    agent's :func:`model_record`, kept on the card as ``"model"``."""
    tally = {m.spec: {"wins": 0, "draws": 0, "losses": 0} for m in panel.members}
    for game, line in zip(planned, lines):
        winner = json.loads(line)["result"]["winner"]
        agent_seat = 0 if game.index % 2 == 0 else 1
        key = "draws" if winner is None else ("wins" if winner == agent_seat else "losses")
        tally[game.b][key] += 1
    opponents = [{"spec": m.spec, "elo": m.elo, "games": games, **tally[m.spec]} for m in panel.members]
    rating = fit_against_anchors((o["elo"], o["wins"], o["draws"], o["losses"]) for o in opponents)
    totals = {k: sum(o[k] for o in opponents) for k in ("wins", "draws", "losses")}
    panel_option = panel.id if panel_arg is None or not str(panel_arg).endswith(".json") else str(panel_arg)
    command = (
        f"carnac evaluate {shlex.quote(spec)} --board {panel.board.name} --panel {shlex.quote(panel_option)} "
        f"--games {games} --seed {seed}" + (f" --openings {openings}" if openings else "")
    )
    return {
        "format": CARD_FORMAT,
        "agent": spec,
        "carnac_env": version,
        "board": panel.board.name,
        "rules": panel.board.rules(),
        "panel": {"id": panel.id, "name": panel.name, "version": panel.version, "anchor": panel.anchor},
        "games_per_opponent": games,
        "seed": seed,
        **({"openings": openings} if openings else {}),
        **({"model": model} if model else {}),
        "games": len(planned),
        "totals": totals,
        "opponents": opponents,
        "rating": {
            **rating,
            "method": (
                f"one-parameter Bradley-Terry fit with the panel's ratings held fixed ({panel.anchor} = 0), "
                f"draws as half wins, {PRIOR_DRAWS:g} virtual draw per opponent, Elo scale; 95% likelihood-ratio "
                f"interval (log-likelihood {LIKELIHOOD_DROP_95:.4f} below its maximum) from this card's games only"
            ),
        },
        "command": command,
    }


def format_card(card: dict[str, Any]) -> str:
    """The card as a short text table (names through :func:`~carnac_env.render.ansi.printable`)."""
    from carnac_env.render.ansi import printable

    rating = card["rating"]
    head = (
        f"{printable(card['agent'])} on {card['board']}, panel {card['panel']['id']}: "
        f"{card['games_per_opponent']} games per opponent"
        + (f" from {card['openings']}-ply openings" if card.get("openings") else "")
        + f", seed {card['seed']}, carnac_env {card['carnac_env']}"
    )
    if card.get("model"):
        head += f"\nmodel: {printable(card['model']['model'])} ({card['model']['sha256'][:19]}...)"
    width = max(10, *(len(printable(o["spec"])) for o in card["opponents"])) + 2
    lines = [head, "", "opponent".ljust(width) + "panel elo".rjust(10) + "wins".rjust(7) + "draws".rjust(7)]
    lines[-1] += "losses".rjust(8) + "score".rjust(8)
    for o in card["opponents"]:
        score = (o["wins"] + 0.5 * o["draws"]) / o["games"] if o["games"] else 0.0
        lines.append(
            printable(o["spec"]).ljust(width)
            + f"{round(o['elo']):>10d}{o['wins']:>7}{o['draws']:>7}{o['losses']:>8}{score:>8.0%}"
        )
    t = card["totals"]
    lines.append("total".ljust(width) + "".rjust(10) + f"{t['wins']:>7}{t['draws']:>7}{t['losses']:>8}")
    lines.append("")
    lines.append(
        f"rating: {round(rating['elo'])} Elo, 95% interval [{round(rating['ci_low'])}, {round(rating['ci_high'])}] "
        f"on the {card['panel']['id']} scale ({card['panel']['anchor']} = 0)"
    )
    return "\n".join(lines)
