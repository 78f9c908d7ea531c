"""Ratings: an Elo-scaled Bradley-Terry fit with bootstrap intervals, and their plot."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: Elo points per unit of Bradley-Terry strength (natural log odds).
ELO_PER_UNIT = 400.0 / math.log(10.0)
#: Bootstrap resamples for the rating intervals.
BOOTSTRAP = 200
#: A virtual draw added to every pair before fitting, so a perfect record has a finite rating.
PRIOR_DRAWS = 1.0


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
