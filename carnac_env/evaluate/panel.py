"""Reference panels: fixed opponents with fixed ratings, one file per panel version.

A panel is a JSON file (``carnac_env/evaluate/panels/NAME-vVERSION.json``) holding the
board and rules it was measured on, its members (agent specs) with their Elo ratings and
95% intervals on the panel's scale (the ``anchor`` member, ``random``, pinned at 0), the
default games per opponent and seed of an evaluation, and how the ratings were measured:
the exact command of the round robin, its package version, its results and its time.

A panel file is data, never code: its members must be built-in agent specs (``random``,
``greedy``, ``mcts:sims=200``, ``az``...), because building a member from an import path
(``mypkg.mod.Agent``) imports and runs that module. A panel that names such a member is
refused unless the caller trusts it (``trust_code=True``, ``carnac evaluate --panel FILE
--trust-panel-code``); the shipped panels are checked the same way (docs/security.md).

Panel files are written once by :func:`build_panel` from a finished round robin
(``carnac arena ...``) and never rewritten: a better measurement, another member or
another budget is a new version in a new file, so every published card keeps meaning what
it said. ``carnac panel ARENA_DIR --name NAME --version N --command "..."`` writes a new
one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from carnac_env import _checks
from carnac_env.core.boards import Board, make_board
from carnac_env.core.record import MAX_RECORD_BYTES
from carnac_env.errors import CarnacError
from carnac_env.evaluate.versioned import check_board, check_identity, is_whole_from, versioned_ids

#: Where the package's panel files live.
PANEL_DIR = Path(__file__).resolve().parent / "panels"
#: The format version of panel files this code reads.
PANEL_FORMAT = 1


@dataclass(frozen=True)
class PanelMember:
    """One reference opponent: its agent spec and its rating on the panel's scale."""

    spec: str
    elo: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class Panel:
    """A loaded, checked reference panel (see the module docstring)."""

    name: str
    version: int
    board: Board
    anchor: str
    members: tuple[PanelMember, ...]
    default_games: int
    default_seed: int
    measured: dict[str, Any]
    #: Random plies each evaluation game opens with by default (``defaults.openings``; 0 when
    #: the file has none, as in the v1 panels, whose round robins started from the empty board).
    default_openings: int = 0

    @property
    def id(self) -> str:
        """``NAME-vVERSION``, e.g. ``medium-v1``: how cards and docs cite the panel."""
        return f"{self.name}-v{self.version}"


def panel_ids() -> list[str]:
    """The ids of the panels shipped with the package, sorted by name then version."""
    return versioned_ids(PANEL_DIR)


def default_panel_id(board: str) -> str:
    """The newest shipped panel measured on ``board`` (by name).

    Raises:
        CarnacError: no shipped panel is for that board (naming the panels there are).
    """
    best: tuple[int, str] | None = None
    for panel_id in panel_ids():
        data = _read(PANEL_DIR / f"{panel_id}.json")
        if data.get("board") == board:
            version = int(data.get("version", 0))
            if best is None or version > best[0]:
                best = (version, panel_id)
    if best is None:
        raise CarnacError(
            f"no reference panel is measured on board {board!r}; the panels are: {', '.join(panel_ids()) or 'none'} "
            "(or pass --panel FILE.json)"
        )
    return best[1]


def load_panel(
    panel: str | Path | None = None, board: str | Board | None = "medium", *, trust_code: bool = False
) -> Panel:
    """A panel by id (``"medium-v1"``), by the path of a panel file, or (``None``) the newest
    shipped panel for ``board``.

    Args:
        panel: a shipped panel's id, a path to a panel ``.json`` file, or None.
        board: the board the evaluation is on; the panel must have been measured on it with
            the same rules (None: take the panel's board).
        trust_code: accept members named by an import path (``mypkg.mod.Agent``), which
            the evaluation will import and run. Off by default: a panel file from anyone
            else could name any module on the Python path (docs/security.md).

    Raises:
        CarnacError: an unknown panel id, a file that is not a valid panel, a member that
            is not a built-in agent spec (without ``trust_code``), or a panel measured on
            another board or other rules.
    """
    trust_code = _checks.flag("trust_code", trust_code)
    if panel is None:
        if board is None:
            raise CarnacError("give a panel or a board")
        panel = default_panel_id(board.name if isinstance(board, Board) else str(board))
    if isinstance(panel, Path) or (isinstance(panel, str) and panel.endswith(".json")):
        path = Path(panel)
    elif isinstance(panel, str) and panel in panel_ids():
        path = PANEL_DIR / f"{panel}.json"
    else:
        raise CarnacError(f"unknown panel {panel!r}; the panels are: {', '.join(panel_ids())} (or a panel .json file)")
    loaded = parse_panel(_read(path), path, trust_code)
    if board is not None:
        wanted = board if isinstance(board, Board) else make_board(board)
        if wanted != loaded.board:
            raise CarnacError(
                f"panel {loaded.id} is measured on board {loaded.board.name!r} {loaded.board.rules()}, "
                f"not on {wanted.name!r} {wanted.rules()}; choose another --panel or --board"
            )
    return loaded


def _read(path: Path, what: str = "panel file") -> dict[str, Any]:
    """The JSON object in ``path`` (a ``what``: a panel file, an arena's settings or results),
    read as untrusted input: a regular file of at most :data:`MAX_RECORD_BYTES`, UTF-8 JSON with
    finite numbers (``NaN`` and ``Infinity``, which Python's json reads, are refused).

    Raises:
        CarnacError: anything else, naming the file.
    """
    from carnac_env._files import reading

    with reading(path, f"the {what}") as handle:  # a FIFO or a device is refused, never waited on
        data = handle.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise CarnacError(f"{path} is not a {what}: larger than {MAX_RECORD_BYTES} bytes")
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_checks.json_constant)
    except (ValueError, RecursionError) as err:  # not UTF-8, not JSON, too deep, a 5000-digit number, NaN
        raise CarnacError(f"{path} is not a {what} (JSON text): {str(err)[:200]}") from None
    if not isinstance(value, dict):
        raise CarnacError(f"{path} is not a {what} (a JSON object)")
    return value


def parse_panel(data: dict[str, Any], path: Path, trust_code: bool = False) -> Panel:
    """The :class:`Panel` that a panel file's contents ``data`` describe (``path`` names the
    file in errors), checked field by field.

    Raises:
        CarnacError: a field that does not check, naming the file and the field.
    """
    name, version = check_identity(data, PANEL_FORMAT, lambda what: _bad(path, what))
    board = check_board(data, lambda what: _bad(path, what))
    members = _parse_members(data, path, trust_code)
    anchor = data.get("anchor")
    specs = [m.spec for m in members]
    if anchor not in specs:
        raise _bad(path, f"the anchor {anchor!r} is not a member ({specs})")
    games, seed, openings = _parse_defaults(data, path)
    measured = data.get("measured") if isinstance(data.get("measured"), dict) else {}
    return Panel(name, version, board, anchor, tuple(members), games, seed, measured, openings)


def _bad(path: Path, what: str) -> CarnacError:
    return CarnacError(f"panel file {path}: {what}")


def _finite(value: Any) -> bool:
    """Whether ``value`` is a finite real number (not a bool; not an int too large for a float)."""
    try:
        _checks.number("value", value)
    except CarnacError:
        return False
    return True


def _check_member_spec(spec: str, path: Path, trust_code: bool) -> None:
    """Refuse a member spec that is not a built-in agent's (unless ``trust_code``): building
    it would import and run the module it names."""
    from carnac_env.agents import agent_names, parse_spec

    try:
        name, _ = parse_spec(spec)
    except CarnacError as err:
        raise _bad(path, f"member spec {spec!r} does not parse: {err}") from None
    if name in agent_names():
        return
    if "." in name and trust_code:
        return
    if "." in name:
        raise _bad(
            path,
            f"member {spec!r} names code to import ({name!r}); a panel file may only name built-in agents "
            f"({', '.join(agent_names())}). If you trust this file and the code it names, pass "
            "--trust-panel-code (trust_code=True): the evaluation will import and run it",
        )
    raise _bad(path, f"member {spec!r} is not a built-in agent ({', '.join(agent_names())})")


def _parse_members(data: dict[str, Any], path: Path, trust_code: bool = False) -> list[PanelMember]:
    raw_members = data.get("members")
    if not isinstance(raw_members, list) or not raw_members:
        raise _bad(path, "members must be a non-empty list")
    members = []
    for entry in raw_members:
        if not isinstance(entry, dict) or not isinstance(entry.get("spec"), str):
            raise _bad(path, f"a member must be an object with a spec, got {entry!r}")
        _check_member_spec(entry["spec"], path, trust_code)
        numbers = [entry.get(k) for k in ("elo", "ci_low", "ci_high")]
        if not all(_finite(v) for v in numbers):
            raise _bad(path, f"member {entry['spec']!r} needs finite elo, ci_low and ci_high, got {numbers}"[:500])
        members.append(PanelMember(entry["spec"], *(float(v) for v in numbers)))
    specs = [m.spec for m in members]
    if len(set(specs)) != len(specs):
        raise _bad(path, f"member specs must differ, got {specs}")
    return members


def _parse_defaults(data: dict[str, Any], path: Path) -> tuple[int, int, int]:
    from carnac_env.arena.openings import MAX_OPENING_PLIES

    defaults = data.get("defaults")
    if not isinstance(defaults, dict):
        raise _bad(path, "defaults must be an object with games and seed")
    games, seed = defaults.get("games"), defaults.get("seed")
    if not is_whole_from(games, 1):
        raise _bad(path, f"defaults.games must be a whole number from 1, got {games!r}")
    if not is_whole_from(seed, 0) or seed > _checks.MAX_SEED:
        raise _bad(path, f"defaults.seed must be a whole number in 0..2**63-1, got {seed!r}"[:500])
    openings = defaults.get("openings", 0)
    if not is_whole_from(openings, 0) or openings > MAX_OPENING_PLIES:
        raise _bad(path, f"defaults.openings must be a whole number in 0..{MAX_OPENING_PLIES}, got {openings!r}"[:500])
    return games, seed, openings


def build_panel(
    arena_dir: str | Path,
    name: str,
    version: int,
    command: str,
    anchor: str = "random",
    games: int = 20,
    seed: int = 1,
    note: str = "",
) -> dict[str, Any]:
    """A panel file's contents from a finished round robin in ``arena_dir``.

    The ratings are refitted from the arena's results with ``anchor`` pinned at 0
    (:func:`~carnac_env.arena.ratings.bradley_terry` with ``anchor``), so each interval is that
    member's gap to the anchor: a profile likelihood-ratio interval
    (:func:`~carnac_env.arena.ratings.profile_intervals`), which always contains the rating.
    (Panels up to the v3 ones were written with the arena's seeded bootstrap intervals, whose
    percentiles could sit below a nearly unbeaten member's rating; their files keep them, and
    say so in ``measured.rating_method``.) A round robin played
    from ``--openings K`` openings gives the panel ``defaults.openings = K`` (and
    ``measured.openings``), so that evaluations open their games the same way by default.

    Args:
        arena_dir: the output folder of ``carnac arena`` (``arena.json`` and ``results.json``).
        name, version: the panel's id is ``NAME-vVERSION``.
        command: the exact command that played the round robin (stored in the panel).
        anchor: the member pinned at 0.
        games, seed: an evaluation's default games per opponent and seed.
        note: free text kept in ``measured.note`` (e.g. where the time was measured).

    Raises:
        CarnacError: the folder holds no finished arena, or ``anchor`` is not one of its agents.
    """

    arena_dir = Path(arena_dir)
    settings = _read(arena_dir / "arena.json", "arena's settings file")
    results = _read(arena_dir / "results.json", "arena's results file")
    agents = results.get("agents")
    if not isinstance(agents, list) or anchor not in agents:
        raise CarnacError(f"{arena_dir}: the anchor {anchor!r} is not one of the arena's agents {agents!r}")
    try:
        return _panel_data(settings, results, agents, name, version, command, anchor, games, seed, note)
    except (KeyError, TypeError, ValueError, IndexError) as err:  # a hand-edited or torn arena folder
        raise CarnacError(
            f"{arena_dir}: arena.json and results.json are not a finished arena's ({type(err).__name__}: "
            f"{str(err)[:200]}); run the round robin to its end"
        ) from None


def _panel_data(
    settings: dict[str, Any],
    results: dict[str, Any],
    agents: list[str],
    name: str,
    version: int,
    command: str,
    anchor: str,
    games: int,
    seed: int,
    note: str,
) -> dict[str, Any]:
    from carnac_env.arena.ratings import PRIOR_DRAWS, bradley_terry

    ratings = bradley_terry(agents, results["pairs"], anchor=anchor, interval="likelihood")
    openings = settings.get("openings", 0)
    return {
        "format": PANEL_FORMAT,
        "name": name,
        "version": version,
        "board": settings["board"],
        "rules": settings["rules"],
        "anchor": anchor,
        "members": [{"spec": a, **ratings[a]} for a in agents],
        "defaults": {"games": games, "seed": seed, **({"openings": openings} if openings else {})},
        "measured": {
            "command": command,
            "carnac_env": settings["carnac_env"],
            "games_per_pair": settings["games_per_pair"],
            "seed": settings["seed"],
            **({"openings": openings} if openings else {}),
            "pairs": results["pairs"],
            "standings": results["standings"],
            "rating_method": (
                "Bradley-Terry maximum likelihood (Newton iterations in numpy), draws as half wins, "
                f"{PRIOR_DRAWS:g} virtual draw per pair, Elo scale 400/ln10, {anchor} pinned at 0; "
                "95% profile likelihood-ratio interval of each member's gap to the anchor (the other "
                "strengths refitted at each trial gap; the ends where the log-likelihood is 1.92 below "
                "its maximum)"
            ),
            "note": note,
        },
    }
