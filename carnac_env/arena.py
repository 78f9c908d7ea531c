"""A reproducible, resumable round-robin arena between agents.

Every pair of agents plays ``games`` games, seats alternating (in game 0 of a pair the
first-named agent plays Red, player_0). Each game is identified by its pair and index, and
its seed is derived from the arena seed and that identity alone (:func:`game_seed`), never
from the order in which games run; so the set of games is the same for any number of
workers, and an interrupted run resumed later plays exactly the games that are missing.

Files written to the output folder:

* ``arena.json``: the arena's settings (board, agents, games per pair, seed); a rerun
  with different settings into the same folder is refused.
* ``games.jsonl``: one game record per line (see :mod:`carnac_env.core.record`), with
  extra keys ``agents`` (``[Red name, White name]``), ``pair`` (``[a, b]``), ``game``
  (the index within the pair), ``seats`` (name -> player number) and ``seed``. Lines
  are appended and flushed as games finish; once all games are in, the file is rewritten
  in a canonical order (pair order, then index), so its bytes do not depend on workers or
  interruptions. A torn last line (a kill during a write) is dropped and replayed.
* ``results.json``: ``agents``, ``pairs`` (``{"a", "b", "wins_a", "wins_b", "draws"}``),
  ``standings`` and ``ratings`` (name -> ``{"elo", "ci_low", "ci_high"}``), see
  :func:`bradley_terry`.
* ``ratings.png``: the ratings with their intervals, when matplotlib is installed.

The progress bar needs tqdm; the plot needs matplotlib (``pip install carnac-env[plot]``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from carnac_env.agents import make
from carnac_env.core.boards import Board, make_board
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError

#: Elo points per unit of Bradley-Terry strength (natural log odds).
ELO_PER_UNIT = 400.0 / math.log(10.0)
#: Bootstrap resamples for the rating intervals.
BOOTSTRAP = 200
#: A virtual draw added to every pair before fitting, so a perfect record has a finite rating.
PRIOR_DRAWS = 1.0


@dataclass(frozen=True)
class ArenaGame:
    """One game of the round robin: agents ``a`` and ``b`` (in the order given), game ``index``."""

    a: str
    b: str
    index: int
    seed: int

    @property
    def key(self) -> tuple[str, str, int]:
        """The game's identity."""
        return (self.a, self.b, self.index)

    @property
    def seats(self) -> tuple[str, str]:
        """``(Red, White)``: ``a`` is Red in even games, White in odd ones."""
        return (self.a, self.b) if self.index % 2 == 0 else (self.b, self.a)


def game_seed(seed: int, a: str, b: str, index: int) -> int:
    """The seed of game ``index`` between ``a`` and ``b`` in an arena seeded ``seed`` (63 bits)."""
    digest = hashlib.sha256(f"carnac-arena\0{seed}\0{a}\0{b}\0{index}".encode()).hexdigest()
    return int(digest[:15], 16)


def split_agents(text: str) -> list[str]:
    """Split a comma-separated list of agent specs, keeping ``key=value`` pieces with the
    spec before them: ``"random,mcts:sims=200,c=2"`` -> ``["random", "mcts:sims=200,c=2"]``."""
    specs: list[str] = []
    for piece in text.split(","):
        piece = piece.strip()
        if not piece:
            continue
        name = piece.partition(":")[0]
        if "=" in name and specs:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs


def schedule(agents: list[str], games: int, seed: int) -> list[ArenaGame]:
    """Every game of the round robin, in canonical order (pairs in the agents' order, then index)."""
    out = []
    for i, a in enumerate(agents):
        for b in agents[i + 1 :]:
            out.extend(ArenaGame(a, b, k, game_seed(seed, a, b, k)) for k in range(games))
    return out


def play_game(board: Board | str, red: str | Any, white: str | Any, seed: int) -> GameRecord:
    """Play one game on the AEC env between two agents (specs or agent objects).

    The agents are built (or re-seeded) with seeds derived from ``seed`` and their seat.

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
    while not env.game.is_over:
        seat = env.game.to_act
        action = players[seat].act(env)
        try:
            env.step(action)
        except CarnacError as err:
            name = red if seat == 0 else white
            raise CarnacError(f"agent {name!r} chose an illegal move: {err}") from None
    return env.record()


def _play_task(task: tuple[Board, str, str, int, str, str, int]) -> tuple[tuple[str, str, int], str]:
    """Worker entry point: play one arena game and return its key and JSON line."""
    board, red, white, seed, a, b, index = task
    record = play_game(board, red, white, seed)
    record.meta = {
        "agents": [red, white],
        "pair": [a, b],
        "game": index,
        "seats": {red: 0, white: 1},
        "seed": seed,
    }
    return (a, b, index), record.to_json()


def _ignore_sigint() -> None:
    """Workers leave Ctrl-C to the main process, which stops them."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


# --------------------------------------------------------------------------- files
def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def load_games(path: Path, expected: dict[tuple[str, str, int], ArenaGame]) -> dict[tuple[str, str, int], str]:
    """The finished games in a ``games.jsonl`` (key -> line), dropping a torn last line from the file.

    Raises:
        CarnacError: a malformed line before the last, or a game that is not part of this arena.
    """
    if not path.exists():
        return {}
    data = path.read_bytes()
    keep = data
    if data and not data.endswith(b"\n"):
        keep = data[: data.rfind(b"\n") + 1]  # a torn last line (killed mid-write)
    lines = keep.decode("utf-8").splitlines()
    done: dict[tuple[str, str, int], str] = {}
    good_bytes = 0
    for number, line in enumerate(lines, start=1):
        size = len(line.encode("utf-8")) + 1
        if not line.strip():
            good_bytes += size
            continue
        try:
            record = json.loads(line)
            key = (record["pair"][0], record["pair"][1], record["game"])
        except (json.JSONDecodeError, KeyError, TypeError, IndexError):
            if number == len(lines):
                break  # a damaged last line: drop it and play the game again
            raise CarnacError(f"{path} line {number} is not an arena game record; move the file away") from None
        if key not in expected:
            raise CarnacError(
                f"{path} line {number} holds game {key}, which is not part of this arena; use another --out"
            )
        if expected[key].seed != record.get("seed"):
            raise CarnacError(f"{path} line {number}: game {key} has seed {record.get('seed')}, expected another")
        done.setdefault(key, line)
        good_bytes += size
    if good_bytes != len(data):
        with open(path, "r+b") as handle:
            handle.truncate(good_bytes)
    return done


# --------------------------------------------------------------------------- ratings
def _fit(wins: Any) -> Any:
    """Bradley-Terry log-strengths (mean 0) maximising the likelihood of ``wins[i, j]``
    (wins of i over j, fractional for draws): Newton's method with step halving on the
    concave log-likelihood, the mean held at 0 by a quadratic penalty. A finite maximum
    exists whenever every agent has a positive score against a connected field, which the
    virtual draws guarantee."""
    import numpy as np

    n = len(wins)
    games = wins + wins.T
    ones = np.ones((n, n))

    def loglik(theta: Any) -> float:
        diff = theta[:, None] - theta[None, :]
        return float(-(wins * np.logaddexp(0.0, -diff)).sum() - 0.5 * theta.sum() ** 2)

    theta = np.zeros(n)
    current = loglik(theta)
    for _ in range(100):
        diff = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))
        grad = (wins - games * p).sum(axis=1) - theta.sum()
        curvature = games * p * (1.0 - p)
        hessian = curvature - np.diag(curvature.sum(axis=1)) - ones
        step = np.linalg.solve(hessian, -grad)
        scale = 1.0
        while True:
            candidate = theta + scale * step
            value = loglik(candidate)
            if value >= current - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        theta, previous, current = candidate, current, value
        if np.abs(scale * step).max() < 1e-9 or abs(current - previous) < 1e-12:
            break
    return theta - theta.mean()


def bradley_terry(
    agents: list[str], pairs: list[dict[str, Any]], seed: int = 0, resamples: int = BOOTSTRAP
) -> dict[str, dict[str, float]]:
    """Elo-scaled Bradley-Terry ratings with 95% bootstrap intervals.

    A draw counts as half a win for each side, and every pair gets ``PRIOR_DRAWS`` virtual
    draw(s) so that a perfect record has a finite rating. The strengths maximise the
    likelihood (:func:`_fit`, Newton's method), are centred on a mean of 0 and scaled to Elo
    (400 / ln 10 per unit). The interval is the 2.5 and 97.5 percentiles over ``resamples``
    refits on a parametric bootstrap (seeded by ``seed``): each pair's games drawn again from
    the fitted model, with draws at the pair's observed rate.
    """
    import numpy as np

    index = {name: i for i, name in enumerate(agents)}
    n = len(agents)

    def matrix(rows: Iterable[tuple[int, int, float, float, float]]) -> Any:
        wins = np.zeros((n, n))
        for i, j, wa, wb, d in rows:
            wins[i, j] += wa + 0.5 * (d + PRIOR_DRAWS)
            wins[j, i] += wb + 0.5 * (d + PRIOR_DRAWS)
        return wins

    base = [(index[p["a"]], index[p["b"]], p["wins_a"], p["wins_b"], p["draws"]) for p in pairs]
    fitted = _fit(matrix(base))
    theta = fitted * ELO_PER_UNIT
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(resamples):
        rows = []
        for i, j, wa, wb, d in base:
            total = wa + wb + d
            if total:
                # a parametric bootstrap: the pair's games again, drawn from the fitted model
                # (draws at the pair's observed rate), so a perfect record still varies
                p_a = 1.0 / (1.0 + math.exp(fitted[j] - fitted[i]))
                rate = d / total
                wa2, wb2, d2 = rng.multinomial(total, [(1 - rate) * p_a, (1 - rate) * (1 - p_a), rate])
            else:
                wa2 = wb2 = d2 = 0
            rows.append((i, j, wa2, wb2, d2))
        samples.append(_fit(matrix(rows)) * ELO_PER_UNIT)
    low, high = np.percentile(np.array(samples), [2.5, 97.5], axis=0) if samples else (theta, theta)
    return {
        name: {"elo": _tidy(theta[i]), "ci_low": _tidy(low[i]), "ci_high": _tidy(high[i])} for name, i in index.items()
    }


def _tidy(value: float) -> float:
    """One decimal, and never a negative zero."""
    return round(float(value), 1) + 0.0


def summarise(agents: list[str], lines: Iterable[str], seed: int) -> dict[str, Any]:
    """Pairs, standings and ratings from game lines (see the module docstring)."""
    pairs = {
        (a, b): {"a": a, "b": b, "wins_a": 0, "wins_b": 0, "draws": 0}
        for i, a in enumerate(agents)
        for b in agents[i + 1 :]
    }
    standings = {name: {"games": 0, "wins": 0, "draws": 0, "losses": 0} for name in agents}
    for line in lines:
        record = json.loads(line)
        a, b = record["pair"]
        winner = record["result"]["winner"]
        entry = pairs[(a, b)]
        if winner is None:
            entry["draws"] += 1
            standings[a]["draws"] += 1
            standings[b]["draws"] += 1
        else:
            name = record["agents"][winner]
            other = b if name == a else a
            entry["wins_a" if name == a else "wins_b"] += 1
            standings[name]["wins"] += 1
            standings[other]["losses"] += 1
        standings[a]["games"] += 1
        standings[b]["games"] += 1
    pair_list = list(pairs.values())
    return {
        "agents": list(agents),
        "pairs": pair_list,
        "standings": standings,
        "ratings": bradley_terry(agents, pair_list, seed=seed),
        "rating_method": (
            "Bradley-Terry maximum likelihood (Newton iterations in numpy), draws as half wins, "
            f"{PRIOR_DRAWS:g} virtual draw per pair, Elo scale 400/ln10, mean 0; "
            f"95% interval from {BOOTSTRAP} refits on a seeded parametric bootstrap (each pair's games "
            "drawn again from the fitted model, draws at the observed rate)"
        ),
    }


def format_table(results: dict[str, Any]) -> str:
    """The win/draw/loss table (row agent's wins-draws-losses against each column agent)
    and the ratings, as text."""
    agents = results["agents"]
    cell: dict[tuple[str, str], str] = {}
    for p in results["pairs"]:
        cell[(p["a"], p["b"])] = f"{p['wins_a']}-{p['draws']}-{p['wins_b']}"
        cell[(p["b"], p["a"])] = f"{p['wins_b']}-{p['draws']}-{p['wins_a']}"
    width = max(10, *(len(a) for a in agents)) + 2
    lines = ["wins-draws-losses of the row agent against the column agent:"]
    lines.append("".ljust(width) + "".join(a.rjust(width) for a in agents))
    for a in agents:
        lines.append(a.ljust(width) + "".join(cell.get((a, b), "-").rjust(width) for b in agents))
    lines.append("")
    lines.append(
        "agent".ljust(width)
        + "games".rjust(7)
        + "wins".rjust(7)
        + "draws".rjust(7)
        + "losses".rjust(8)
        + "elo".rjust(9)
        + "   95% interval"
    )
    order = sorted(agents, key=lambda a: -results["ratings"][a]["elo"])
    for a in order:
        s, r = results["standings"][a], results["ratings"][a]
        lines.append(
            a.ljust(width) + f"{s['games']:>7}{s['wins']:>7}{s['draws']:>7}{s['losses']:>8}"
            f"{round(r['elo']):>9d}   [{round(r['ci_low'])}, {round(r['ci_high'])}]"
        )
    return "\n".join(lines)


def plot_ratings(results: dict[str, Any], path: Path) -> bool:
    """Draw the ratings with their intervals to ``path`` (PNG); False if matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ratings = results["ratings"]
    order = sorted(results["agents"], key=lambda a: ratings[a]["elo"])
    elo = [ratings[a]["elo"] for a in order]
    low = [ratings[a]["elo"] - ratings[a]["ci_low"] for a in order]
    high = [ratings[a]["ci_high"] - ratings[a]["elo"] for a in order]
    fig, ax = plt.subplots(figsize=(6, 0.6 * len(order) + 1.2))
    ax.errorbar(elo, range(len(order)), xerr=[low, high], fmt="o", capsize=4)
    ax.set_yticks(range(len(order)), order)
    ax.set_xlabel("Elo (Bradley-Terry, mean 0) with 95% bootstrap interval")
    ax.set_title(f"carnac arena: {results.get('board', '')}, {results.get('games_per_pair', '')} games per pair")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)
    return True


# --------------------------------------------------------------------------- the run
def run_arena(
    agents: list[str],
    out: str | Path,
    board: str | Board = "medium",
    games: int = 4,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    echo: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Play (or resume) a round robin and write ``out``'s files; see the module docstring.

    Args:
        agents: agent specs (at least two, all different); their texts are the names.
        out: the output folder (created if needed).
        board: board name or :class:`Board`.
        games: games per pair (seats alternate).
        seed: the arena seed.
        workers: processes playing games in parallel (1: in this process).
        progress: show a tqdm progress bar on stderr.
        echo: where the final table goes.

    Returns:
        The contents of ``results.json``.

    Raises:
        CarnacError: bad settings, an agent spec that does not build, or an output folder
            that holds a different arena.
    """
    board = board if isinstance(board, Board) else make_board(board)
    agents = [a.strip() for a in agents]
    if len(agents) < 2:
        raise CarnacError(f"an arena needs at least two agents, got {agents}")
    if len(set(agents)) != len(agents):
        raise CarnacError(f"agent names must differ, got {agents}; give one of them another option or seed")
    if games < 1:
        raise CarnacError(f"games per pair must be at least 1, got {games}")
    if workers < 1:
        raise CarnacError(f"workers must be at least 1, got {workers}")
    for spec in agents:
        make(spec)  # fail early on a bad spec
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    settings = {"board": board.name, "rules": board.rules(), "agents": agents, "games_per_pair": games, "seed": seed}
    settings_path = out / "arena.json"
    if settings_path.exists():
        try:
            previous = json.loads(settings_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            previous = None
        if previous is not None and previous != settings:
            raise CarnacError(
                f"{out} holds an arena with other settings ({previous}); use another --out or remove the folder"
            )
    _write_atomic(settings_path, json.dumps(settings, indent=2) + "\n")
    planned = schedule(agents, games, seed)
    expected = {g.key: g for g in planned}
    games_path = out / "games.jsonl"
    done = load_games(games_path, expected)
    todo = [g for g in planned if g.key not in done]
    tasks = [(board, *g.seats, g.seed, g.a, g.b, g.index) for g in todo]
    bar = None
    if progress:
        try:
            from tqdm import tqdm
        except ImportError:
            raise CarnacError(
                "the arena's progress bar needs tqdm (pip install tqdm), or run without it (--no-progress)"
            ) from None
        bar = tqdm(total=len(planned), initial=len(done), unit="game", desc="arena", file=sys.stderr)
    pool = None
    try:
        with open(games_path, "a", encoding="utf-8") as handle:
            if workers > 1 and len(tasks) > 1:
                import multiprocessing

                pool = multiprocessing.get_context("spawn").Pool(min(workers, len(tasks)), _ignore_sigint)
                results: Iterable[tuple[tuple[str, str, int], str]] = pool.imap_unordered(_play_task, tasks)
            else:
                results = map(_play_task, tasks)
            for key, line in results:
                handle.write(line + "\n")
                handle.flush()
                os.fsync(handle.fileno())
                done[key] = line
                if bar is not None:
                    bar.update(1)
        if pool is not None:
            pool.close()
            pool.join()
    finally:
        if pool is not None:
            pool.terminate()
        if bar is not None:
            bar.close()
    ordered = [done[g.key] for g in planned]
    _write_atomic(games_path, "".join(line + "\n" for line in ordered))
    results_data = {"board": board.name, "games_per_pair": games, "seed": seed, **summarise(agents, ordered, seed)}
    _write_atomic(out / "results.json", json.dumps(results_data, indent=2) + "\n")
    echo(format_table(results_data))
    if plot_ratings(results_data, out / "ratings.png"):
        echo(f"ratings plot: {out / 'ratings.png'}")
    echo(f"games: {games_path}; results: {out / 'results.json'}")
    return results_data
