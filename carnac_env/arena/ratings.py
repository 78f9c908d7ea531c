"""Ratings: an Elo-scaled Bradley-Terry fit with bootstrap or profile likelihood-ratio intervals, and their plot."""

from __future__ import annotations

import io
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from carnac_env._files import write_bytes
from carnac_env.errors import CarnacError

#: Elo points per unit of Bradley-Terry strength (natural log odds).
ELO_PER_UNIT = 400.0 / math.log(10.0)
#: Bootstrap resamples for the rating intervals.
BOOTSTRAP = 200
#: A virtual draw added to every pair before fitting, so a perfect record has a finite rating.
PRIOR_DRAWS = 1.0


def wilson(rate: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a rate over ``games`` trials (a win rate with draws as
    half wins, or a share of positions); ``(0, 1)`` for no trials."""
    if games <= 0:
        return 0.0, 1.0
    centre = (rate + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(rate * (1 - rate) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return max(0.0, centre - half), min(1.0, centre + half)


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
    theta = np.zeros(n)
    current = _penalised_loglik(wins, theta)
    for _ in range(100):
        diff = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))
        grad = (wins - games * p).sum(axis=1) - theta.sum()
        curvature = games * p * (1.0 - p)
        hessian = curvature - np.diag(curvature.sum(axis=1)) - ones
        step = np.linalg.solve(hessian, -grad)
        previous = current
        theta, current, scale = _halving_step(wins, theta, step, current)
        if np.abs(scale * step).max() < 1e-9 or abs(current - previous) < 1e-12:
            break
    return theta - theta.mean()


def _halving_step(wins: Any, theta: Any, step: Any, current: float) -> tuple[Any, float, float]:
    """A Newton step from ``theta``, halved until :func:`_penalised_loglik` does not fall below
    ``current`` (or the step is a millionth of itself): the new point, its objective and the
    scale taken."""
    scale = 1.0
    while True:
        candidate = theta + scale * step
        value = _penalised_loglik(wins, candidate)
        if value >= current - 1e-12 or scale < 1e-6:
            return candidate, value, scale
        scale /= 2


#: The intervals :func:`bradley_terry` can give: the seeded parametric bootstrap (the arena's
#: default) and the profile likelihood-ratio interval (the panels', and ``--interval likelihood``).
INTERVALS = ("bootstrap", "likelihood")


def check_interval(interval: Any) -> str:
    """``interval`` if it is one of :data:`INTERVALS`.

    Raises:
        CarnacError: it is not, naming the value and the choices.
    """
    if interval not in INTERVALS:
        raise CarnacError(f"interval must be {' or '.join(map(repr, INTERVALS))}, got {interval!r}")
    return interval


def interval_method(interval: str) -> str:
    """How the 95% intervals of ``interval`` (one of :data:`INTERVALS`) were made, in words:
    the end of a ``rating_method`` text."""
    if check_interval(interval) == "likelihood":
        return (
            "95% profile likelihood-ratio interval (the other strengths refitted at each trial rating; "
            f"the ends where the log-likelihood is {LIKELIHOOD_DROP_95:.2f} below its maximum)"
        )
    return (
        f"95% interval from {BOOTSTRAP} refits on a seeded parametric bootstrap (each pair's games "
        "drawn again from the fitted model, draws at the observed rate)"
    )


def is_likelihood(results: dict[str, Any]) -> bool:
    """Whether ``results`` (an arena's, or a panel's ``measured``) has profile likelihood-ratio
    intervals, as its ``rating_method`` says; older files without the words have bootstrap ones."""
    return "profile likelihood-ratio" in results.get("rating_method", "")


def bradley_terry(
    agents: list[str],
    pairs: list[dict[str, Any]],
    seed: int = 0,
    resamples: int = BOOTSTRAP,
    anchor: str | None = None,
    interval: str = "bootstrap",
) -> dict[str, dict[str, float]]:
    """Elo-scaled Bradley-Terry ratings with 95% intervals.

    A draw counts as half a win for each side, and every pair gets ``PRIOR_DRAWS`` virtual
    draw(s) so that a perfect record has a finite rating. The strengths maximise the
    likelihood (:func:`_fit`, Newton's method), are centred on a mean of 0 and scaled to Elo
    (400 / ln 10 per unit). The interval is the 2.5 and 97.5 percentiles over ``resamples``
    refits on a parametric bootstrap (seeded by ``seed``): each pair's games drawn again from
    the fitted model, with draws at the pair's observed rate.

    With ``anchor`` (one of ``agents``) the scale is pinned there instead of at the mean:
    the fit and every bootstrap refit are shifted so that the anchor is at 0, which makes
    each interval that of the agent's gap to the anchor (the anchor's own is ``[0, 0]``).

    With ``interval="likelihood"`` the interval is the profile likelihood-ratio one instead
    (:func:`profile_intervals`; ``seed`` and ``resamples`` are then unused): it always
    contains the rating, where the bootstrap's percentiles can sit below it for an agent that
    won nearly every game (each refit's virtual draws pull it towards the field once more).

    Raises:
        CarnacError: ``anchor`` is not one of ``agents``, or ``interval`` is not one of
            ``"bootstrap"`` and ``"likelihood"``.
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
    if anchor is not None and anchor not in index:
        raise CarnacError(f"the anchor {anchor!r} is not one of the agents {agents}")
    origin = (lambda fit: fit[index[anchor]]) if anchor is not None else (lambda fit: 0.0)
    check_interval(interval)
    fitted = _fit(matrix(base))
    theta = (fitted - origin(fitted)) * ELO_PER_UNIT
    if interval == "likelihood":
        bounds = profile_intervals(matrix(base), fitted, None if anchor is None else index[anchor])
        return {
            name: {"elo": _tidy(theta[i]), "ci_low": _tidy(bounds[i][0]), "ci_high": _tidy(bounds[i][1])}
            for name, i in index.items()
        }
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
        refit = _fit(matrix(rows))
        samples.append((refit - origin(refit)) * ELO_PER_UNIT)
    low, high = np.percentile(np.array(samples), [2.5, 97.5], axis=0) if samples else (theta, theta)
    return {
        name: {"elo": _tidy(theta[i]), "ci_low": _tidy(low[i]), "ci_high": _tidy(high[i])} for name, i in index.items()
    }


#: How far the log-likelihood drops at the ends of a 95% likelihood-ratio interval: half the
#: 95% quantile of the chi-square distribution with one degree of freedom (3.8415 / 2).
LIKELIHOOD_DROP_95 = 1.920729410347062


def _penalised_loglik(wins: Any, theta: Any) -> float:
    """:func:`_fit`'s objective: the Bradley-Terry log-likelihood of ``wins`` at ``theta``, less
    the quadratic penalty that holds the (otherwise free) mean at 0."""
    import numpy as np

    diff = theta[:, None] - theta[None, :]
    return float(-(wins * np.logaddexp(0.0, -diff)).sum() - 0.5 * theta.sum() ** 2)


def _constrained_fit(wins: Any, start: Any, direction: Any, value: float) -> tuple[Any, float]:
    """The maximum of :func:`_penalised_loglik` over the strengths ``theta`` with
    ``direction @ theta == value`` (a rating, measured from the anchor or from the mean, held
    fixed), by Newton's method on the constrained problem's KKT system with step halving,
    from ``start`` moved onto the constraint. Returns the strengths and the objective there."""
    import numpy as np

    n = len(wins)
    games = wins + wins.T
    ones = np.ones((n, n))
    theta = start + (value - direction @ start) * direction / (direction @ direction)
    current = _penalised_loglik(wins, theta)
    kkt = np.zeros((n + 1, n + 1))
    kkt[:n, n] = kkt[n, :n] = direction
    rhs = np.zeros(n + 1)
    for _ in range(100):
        diff = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))
        grad = (wins - games * p).sum(axis=1) - theta.sum()
        curvature = games * p * (1.0 - p)
        kkt[:n, :n] = curvature - np.diag(curvature.sum(axis=1)) - ones
        rhs[:n] = -grad
        step = np.linalg.solve(kkt, rhs)[:n]  # stays on the constraint: direction @ step == 0
        previous = current
        theta, current, scale = _halving_step(wins, theta, step, current)
        if np.abs(scale * step).max() < 1e-10 or abs(current - previous) < 1e-13:
            break
    return theta, current


def profile_intervals(wins: Any, fitted: Any, anchor: int | None = None) -> list[tuple[float, float]]:
    """95% profile likelihood-ratio intervals (Elo) of every agent's rating in a round robin.

    ``wins`` is :func:`bradley_terry`'s matrix (virtual draws included) and ``fitted`` its
    maximum (:func:`_fit`). An agent's rating is its strength less the ``anchor``'s (an index),
    or less the mean of all strengths without one. Its interval holds the ratings ``x`` whose
    profile log-likelihood (the maximum over the other strengths with the rating held at ``x``)
    is within ``LIKELIHOOD_DROP_95`` of the overall maximum: it always contains the rating, is
    asymmetric where the games are one-sided, and finite thanks to the virtual draws. The
    anchor's own interval is ``(0, 0)``.
    """
    import numpy as np

    n = len(wins)
    best = _penalised_loglik(wins, fitted)
    target = best - LIKELIHOOD_DROP_95
    bounds: list[tuple[float, float]] = []
    for k in range(n):
        if k == anchor:
            bounds.append((0.0, 0.0))
            continue
        direction = -np.full(n, 1.0 / n) if anchor is None else np.zeros(n)
        direction[k] += 1.0
        if anchor is not None:
            direction[anchor] -= 1.0
        centre = float(direction @ fitted)

        def above(x: float, direction: Any = direction) -> bool:
            return _constrained_fit(wins, fitted, direction, x)[1] > target

        ends = []
        for sign in (-1.0, 1.0):
            step = 1.0
            while above(centre + sign * step):
                step *= 2.0
            inside, outside = centre + sign * step / 2 if step > 1.0 else centre, centre + sign * step
            for _ in range(60):
                middle = 0.5 * (inside + outside)
                if above(middle):
                    inside = middle
                else:
                    outside = middle
                if abs(outside - inside) < 1e-7:
                    break
            ends.append(0.5 * (inside + outside) * ELO_PER_UNIT)
        bounds.append((ends[0], ends[1]))
    return bounds


def fit_against_anchors(records: Iterable[tuple[float, float, float, float]]) -> dict[str, float]:
    """One agent's Elo against opponents whose ratings are held fixed, with a 95% interval.

    ``records`` holds ``(opponent_elo, wins, draws, losses)`` for each opponent, from the
    agent's side. The model and conventions are :func:`bradley_terry`'s: the agent beats an
    opponent rated ``r`` with probability ``1 / (1 + 10 ** ((r - x) / 400))``, a draw counts as
    half a win for each side, and every opponent adds ``PRIOR_DRAWS`` virtual draw(s). Only
    ``x`` is fitted (the maximum of the concave log-likelihood, by bisection on its slope),
    so against a single opponent rated 0 a record of ``w`` wins and ``l`` losses gives
    ``400 * log10((w + 0.5) / (l + 0.5))``. The interval is the likelihood-ratio one: the
    ratings where the log-likelihood is ``LIKELIHOOD_DROP_95`` below its maximum. It
    reflects the agent's games only; the opponents' ratings define the scale.

    Returns:
        ``{"elo", "ci_low", "ci_high"}``, rounded to one decimal.

    Raises:
        CarnacError: no opponents, or a count that is negative or not a finite number.
    """
    rows = []
    for row in records:
        elo, wins, draws, losses = (float(v) for v in row)
        if not all(math.isfinite(v) for v in (elo, wins, draws, losses)) or min(wins, draws, losses) < 0:
            raise CarnacError(f"a record must be (opponent elo, wins, draws, losses) with counts >= 0, got {row!r}")
        rows.append((elo, wins + 0.5 * (draws + PRIOR_DRAWS), losses + 0.5 * (draws + PRIOR_DRAWS)))
    if not rows:
        raise CarnacError("fitting a rating against fixed opponents needs at least one opponent")

    def loglik(x: float) -> float:
        # log p(win) = -softplus((r - x) / s) and log p(loss) = -softplus((x - r) / s)
        return -sum(w * _softplus((r - x) / ELO_PER_UNIT) + lo * _softplus((x - r) / ELO_PER_UNIT) for r, w, lo in rows)

    def slope(x: float) -> float:
        return sum(w - (w + lo) / (1.0 + math.exp((r - x) / ELO_PER_UNIT)) for r, w, lo in rows)

    low = min(r for r, _, _ in rows) - 400.0
    high = max(r for r, _, _ in rows) + 400.0
    while slope(low) <= 0:
        low -= high - low
    while slope(high) >= 0:
        high += high - low
    best = _bisect(lambda x: slope(x) > 0, low, high)
    target = loglik(best) - LIKELIHOOD_DROP_95
    step = 400.0
    while loglik(best - step) > target:
        step *= 2
    ci_low = _bisect(lambda x: loglik(x) <= target, best - step, best)
    step = 400.0
    while loglik(best + step) > target:
        step *= 2
    ci_high = _bisect(lambda x: loglik(x) > target, best, best + step)
    return {"elo": _tidy(best), "ci_low": _tidy(ci_low), "ci_high": _tidy(ci_high)}


def _softplus(z: float) -> float:
    """``log(1 + e**z)`` without overflow."""
    return max(z, 0.0) + math.log1p(math.exp(-abs(z)))


def _bisect(left_of: Any, low: float, high: float) -> float:
    """The boundary in ``[low, high]`` between the points where ``left_of`` holds (below)
    and those where it does not (above), to within floating point."""
    for _ in range(200):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if left_of(middle):
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)


def _tidy(value: float) -> float:
    """One decimal, and never a negative zero."""
    return round(float(value), 1) + 0.0


#: The longest agent name (or board) the ratings plot writes whole; longer ones keep their
#: ends around an ellipsis, so that the plot stays a readable size.
PLOT_NAME = 48
#: The inches the ratings plot gives its axes, beside the agents' names.
PLOT_AXES_WIDTH = 4.5


def _short(name: str) -> str:
    """``name`` as the ratings plot writes it: whole up to :data:`PLOT_NAME` characters, else
    its two ends around an ellipsis."""
    if len(name) <= PLOT_NAME:
        return name
    half = (PLOT_NAME - 1) // 2
    return name[:half] + "\N{HORIZONTAL ELLIPSIS}" + name[-half:]


def _plot_width(fig: Any, ax: Any) -> float:
    """The figure width, in inches, that holds the axes (:data:`PLOT_AXES_WIDTH`) beside the
    widest agent name and under the whole title, so that ``tight_layout`` always fits (it
    warns and gives up when the names leave the axes no room)."""
    renderer = fig.canvas.get_renderer()
    names = max((label.get_window_extent(renderer).width for label in ax.get_yticklabels()), default=0.0)
    title = ax.title.get_window_extent(renderer).width
    return max(6.0, names / fig.dpi + PLOT_AXES_WIDTH + 0.5, title / fig.dpi + 0.5)


def plot_ratings(results: dict[str, Any], path: Path) -> bool:
    """Draw the ratings with their intervals to ``path`` (PNG, written atomically and left
    alone when it already holds this plot); False if matplotlib is missing.

    Raises:
        CarnacError: the file cannot be written, naming it.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ratings = results["ratings"]
    order = sorted(results["agents"], key=lambda a: ratings[a]["elo"])
    elo = [ratings[a]["elo"] for a in order]
    # a bootstrap interval need not contain the centred rating (an agent that lost every game
    # sits at its floor in almost every refit): its bar then stops at the point
    low = [max(0.0, ratings[a]["elo"] - ratings[a]["ci_low"]) for a in order]
    high = [max(0.0, ratings[a]["ci_high"] - ratings[a]["elo"]) for a in order]
    height = 0.6 * len(order) + 1.2
    fig, ax = plt.subplots(figsize=(6, height))
    ax.errorbar(elo, range(len(order)), xerr=[low, high], fmt="o", capsize=4)
    ax.set_yticks(range(len(order)), [_short(a) for a in order])
    kind = "profile likelihood-ratio" if is_likelihood(results) else "bootstrap"
    ax.set_xlabel(f"Elo (Bradley-Terry, mean 0) with 95% {kind} interval")
    board = _short(str(results.get("board", "")))
    ax.set_title(f"carnac arena: {board}, {results.get('games_per_pair', '')} games per pair")
    ax.grid(axis="x", alpha=0.3)
    fig.set_size_inches(_plot_width(fig, ax), height)
    fig.tight_layout()
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    write_bytes(path, image.getvalue(), if_changed=True)
    return True
