"""The standing of a game in words: each side's dolmens now, who leads, and why a game was won.

Every watcher of a game (the terminal, the pictures, the GUI, the web replays) prints the
same sentences from here. The numbers come from the core's :meth:`GameState.score_now` and
:meth:`GameState.result`; this module only puts them into words, following the tie-break
chain the core applies (more dolmens; then the largest dolmen, the second largest, ...).
"""

from __future__ import annotations

from carnac_env.core.game import OVER, PLAYER_NAMES, RESPOND, GameState
from carnac_env.core.notation import square_name
from carnac_env.core.scoring import Result

_ORDINALS = ("largest", "2nd largest", "3rd largest")


def _ordinal(index: int) -> str:
    return _ORDINALS[index] if index < len(_ORDINALS) else f"{index + 1}th largest"


def _dolmens(sizes: tuple[int, ...], bga: int | None = None) -> str:
    inside = [", ".join(map(str, sizes))] if sizes else []
    if bga is not None:
        inside.append(f"BGA {bga}")
    return f"{len(sizes)} ({'; '.join(inside)})" if inside else "0"


def standing(state: GameState) -> Result:
    """The position scored as it stands (the result once the game is over)."""
    return state.result() if state.phase == OVER else state.score_now()


def score_line(state: GameState, *, bga: bool = False) -> str:
    """``"Red 2 (5, 3), White 1 (4): Red leads"``: how many dolmens each side has now (their
    sizes in brackets) and who would win if the game ended here (``"even"`` when the tie-break
    cannot separate them; ``"Red wins"`` or ``"a draw"`` once it is over). With ``bga``, each
    side's Board Game Arena score follows its sizes: ``"Red 2 (5, 3; BGA 205), White 0 (BGA 0)"``
    (the pictures show it; it never decides the winner)."""
    result = standing(state)
    red, white = result.dolmens
    scores = result.scores if bga else (None, None)
    lead = "even" if result.winner is None else f"{PLAYER_NAMES[result.winner]} leads"
    if state.phase == OVER:
        lead = "a draw" if result.winner is None else f"{PLAYER_NAMES[result.winner]} wins"
    return f"Red {_dolmens(red, scores[0])}, White {_dolmens(white, scores[1])}: {lead}"


def final_dolmens_line(result: Result) -> str:
    """``"Dolmens: Red 7, 4, 3 (BGA 307) | White 13 (BGA 113)"``: each side's dolmen sizes at the
    end, with its Board Game Arena score (``"none"`` for no dolmen)."""
    sides = [
        f"{PLAYER_NAMES[player]} {', '.join(map(str, sizes)) or 'none'} (BGA {score})"
        for player, (sizes, score) in enumerate(zip(result.dolmens, result.scores))
    ]
    return "Dolmens: " + " | ".join(sides)


def tie_break_reason(result: Result) -> str:
    """Why the tie-break chain gives this result, in words: ``"Red has more dolmens (3 to 2)"``,
    ``"both have 2 dolmens; Red's largest has 5 squares, White's 4"`` or ``"equal dolmens"``."""
    red, white = result.dolmens
    if len(red) != len(white):
        more = 0 if len(red) > len(white) else 1
        counts = sorted((len(red), len(white)), reverse=True)
        return f"{PLAYER_NAMES[more]} has more dolmens ({counts[0]} to {counts[1]})"
    if not red:
        return "neither side has a dolmen"
    both = f"both have {len(red)} dolmen{'' if len(red) == 1 else 's'}"
    for index, (a, b) in enumerate(zip(red, white)):
        if a != b:
            first = 0 if a > b else 1
            big, small = max(a, b), min(a, b)
            other = PLAYER_NAMES[1 - first]
            return f"{both}; {PLAYER_NAMES[first]}'s {_ordinal(index)} has {big} squares, {other}'s {small}"
    return f"{both} of the same sizes"


def result_line(result: Result, names: tuple[str, str] | None = None) -> str:
    """``"Red (you) wins: Red has more dolmens (3 to 2)"`` or ``"A draw: ..."``."""
    reason = tie_break_reason(result)
    if result.winner is None:
        return f"A draw: {reason}"
    who = PLAYER_NAMES[result.winner] + (f" ({names[result.winner]})" if names else "")
    return f"{who} wins: {reason}"


def turn_line(state: GameState, names: tuple[str, str] | None = None) -> str:
    """Whose turn it is and what they must do (``"White: tilt or decline e4"``, ``"Red to
    place a megalith"``), or the result (``"Game over: Red wins"``)."""

    def label(player: int) -> str:
        return PLAYER_NAMES[player] + (f" ({names[player]})" if names else "")

    if state.phase == OVER:
        winner = state.result().winner
        return "Game over: a draw" if winner is None else f"Game over: {label(winner)} wins"
    if state.phase == RESPOND:
        return f"{label(state.to_act)}: tilt or decline {square_name(state.board, state.pending)}"
    return f"{label(state.to_act)} to place a megalith"
