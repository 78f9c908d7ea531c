"""Make the pictures of the docs from the project's own renderers.

    python scripts/make_images.py            # writes docs/images/*.png and docs/images/game.gif

* ``board.png``: a mid-game position on the medium board, a megalith awaiting a tilt
  decision (ringed in gold, its legal tilts previewed);
* ``end.png``: the end of a game, dolmens outlined, the winner shown;
* ``game.gif``: a short game on petit_menec, one frame per decision;
* ``orientations.png``: the four ways to stand a megalith and what each tilt shows;
* ``tilt.png``: one megalith before and after a tilt east and a tilt north;
* ``dolmen.png``: lying and standing megaliths making a dolmen, and squares that touch only
  at corners making none;
* ``tiebreak.png``: a finished game won on the tie-break (equal numbers of dolmens, the
  largest decides), two dolmens of different colours touching;
* ``replay.html``: a web replay of the GIF's game (``carnac replay --html``), embedded in
  the Rendering page.

Needs only the core install (Pillow is a core dependency). The pictures are deterministic:
the same code and Pillow version give the same files.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from carnac_env._files import writing
from carnac_env.core.arithmetic import tilt_colours
from carnac_env.core.boards import make_board
from carnac_env.core.game import GameState
from carnac_env.core.notation import action_to_text, parse_action
from carnac_env.core.record import GameRecord
from carnac_env.render.animate import write_animation
from carnac_env.render.html import write_replay_html
from carnac_env.render.image import ImageRenderer
from carnac_env.render.style import BACKGROUND, SOFT_TEXT, TEXT_COLOUR, font

OUT = Path(__file__).resolve().parent.parent / "docs" / "images"


def save_png(image: Image.Image, name: str) -> None:
    """Write ``image`` to ``OUT/name`` through :func:`carnac_env._files.writing` (atomic)."""
    with writing(OUT / name) as out:
        image.save(out, format="PNG", optimize=True)


# An opening on the medium board (random moves, seed 4), ending with Red to tilt or decline d1.
MID_GAME = [
    "a6 Wew", "decline", "b7 Wew", "tilt E", "g7 Wns", "decline", "i7 Wns", "tilt N", "j3 Rns", "tilt W",
    "h2 Wew", "tilt W", "b5 Rew", "decline", "i4 Wns", "tilt W", "f5 Wew", "decline", "c2 Rns", "tilt W",
    "c3 Wns", "decline", "d1 Rns",
]  # fmt: skip


def play_out(board: str, seed: int, moves: list[str] | None = None) -> GameRecord:
    """A whole game: ``moves`` first, then the greedy agent against itself (random moves
    where carnac_env.agents is not installed)."""
    state = GameState(board)
    actions = []
    for text in moves or []:
        action = parse_action(state.board, text, state.to_act)
        state.apply(action)
        actions.append(action)
    try:
        from carnac_env.agents import make

        agents = [make("greedy", seed=seed), make("greedy", seed=seed + 1)]
        choose = lambda s: agents[s.to_act].act(s)  # noqa: E731
    except ImportError:
        rng = np.random.default_rng(seed)
        choose = lambda s: int(rng.choice(s.legal_actions()))  # noqa: E731
    while not state.is_over:
        action = int(choose(state))
        state.apply(action)
        actions.append(action)
    return GameRecord.from_actions(state.board, actions)


def board_png() -> GameState:
    state = GameState("medium")
    for text in MID_GAME:
        state.apply(parse_action(state.board, text, state.to_act))
    assert state.phase == 1, "the docs' mid-game position must end with a megalith awaiting a decision"
    save_png(Image.fromarray(ImageRenderer(state.board, 56).draw(state)), "board.png")
    return state


def end_png() -> None:
    record = play_out("medium", seed=3, moves=MID_GAME)
    state = record.replay()
    save_png(Image.fromarray(ImageRenderer(state.board, 56).draw(state)), "end.png")


def game_gif() -> None:
    record = play_out("petit_menec", seed=5)
    write_animation(record, OUT / "game.gif", fps=1.5, cell=44)
    record.meta["agents"] = ["greedy", "greedy"]
    write_replay_html(record, OUT / "replay.html")


def caption(image: Image.Image, lines: list[str], size: int = 15) -> Image.Image:
    """``image`` with centred lines of text below it."""
    line_height = round(size * 1.35)
    out = Image.new("RGB", (image.width, image.height + line_height * len(lines) + size // 2), BACKGROUND)
    out.paste(image, (0, 0))
    draw = ImageDraw.Draw(out)
    for i, line in enumerate(lines):
        face = font(size if i else size + 2)
        width = face.getlength(line)
        draw.text(
            ((image.width - width) / 2, image.height + i * line_height),
            line,
            font=face,
            fill=SOFT_TEXT if i else TEXT_COLOUR,
        )
    return out


def row(panels: list[Image.Image], gap: int = 16) -> Image.Image:
    height = max(p.height for p in panels)
    out = Image.new("RGB", (sum(p.width for p in panels) + gap * (len(panels) + 1), height + 2 * gap), BACKGROUND)
    x = gap
    for panel in panels:
        out.paste(panel, (x, gap))
        x += panel.width + gap
    return out


def colour_name(value: int) -> str:
    return "red" if value == 1 else "white"


def orientations_png() -> None:
    board = make_board("custom", rows=5, cols=5, megaliths=4, min_dolmen=3)
    renderer = ImageRenderer(board, 44, status=False)
    state = GameState(board)
    centre = 12  # c3
    panels = []
    for orientation in range(4):
        top, ns, ew = tilt_colours(0, orientation)
        image = renderer.draw_image(state, tentative=(centre, orientation))
        text = action_to_text(board, centre * 4 + orientation, 0).split()[1]
        panels.append(
            caption(
                image,
                [
                    f"{text}: {colour_name(top)} on top",
                    f"tilt N/S shows {colour_name(ns)}",
                    f"tilt E/W shows {colour_name(ew)}",
                ],
            )
        )
    save_png(row(panels), "orientations.png")


def tilt_png() -> None:
    board = make_board("custom", rows=5, cols=5, megaliths=4, min_dolmen=3)
    renderer = ImageRenderer(board, 44, status=False)
    placed = GameState(board)
    placed.apply(parse_action(board, "c3 Wew", 0))  # Red places; White may tilt
    east = placed.copy()
    east.tilt(1)
    north = placed.copy()
    north.tilt(0)
    panels = [
        caption(renderer.draw_image(placed), ["Red places c3 Wew", "White may tilt it or decline"]),
        caption(renderer.draw_image(east), ["tilt E", "d3 and e3 show white"]),
        caption(renderer.draw_image(north), ["tilt N", "c2 and c1 show red"]),
    ]
    save_png(row(panels), "tilt.png")


def dolmen_png() -> None:
    board = make_board("custom", rows=3, cols=5, megaliths=10, min_dolmen=3)
    state = GameState.from_diagram(board, ["rrR.W", "...W.", "....W"])
    image = ImageRenderer(board, 48, status=False).draw_image(state, dolmens=True)
    picture = caption(
        image,
        [
            "Red: one dolmen of 3",
            "a1-b1 (lying) + c1 (standing)",
            "White: e1, d2, e3 touch only",
            "at corners: no dolmen",
        ],
    )
    save_png(picture, "dolmen.png")


#: A finished game won on the tie-break: 2 dolmens each, Red's largest (4) beats White's (3).
#: Red's row-3 dolmen and White's row-4 dolmen touch along an edge.
TIE_BREAK = ["rrRWWW.", ".......", "RRRR...", "WWW....", "......."]


def tiebreak_png() -> GameState:
    board = make_board("custom", rows=5, cols=7, megaliths=17, min_dolmen=3, last_tilt=False)
    state = GameState.from_diagram(board, TIE_BREAK, supply=1)
    state.apply(parse_action(board, "g5 Rns", 0))  # the last megalith: the game ends at once
    assert state.is_over and state.result().winner == 0
    save_png(Image.fromarray(ImageRenderer(board, 48).draw(state)), "tiebreak.png")
    return state


def main() -> None:
    OUT.mkdir(exist_ok=True)
    board_png()
    end_png()
    game_gif()
    orientations_png()
    tilt_png()
    dolmen_png()
    tiebreak_png()
    for path in sorted(OUT.iterdir()):
        print(f"wrote {path.relative_to(OUT.parent.parent)} ({path.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    sys.exit(main())
