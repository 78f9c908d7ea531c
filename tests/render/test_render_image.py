"""The rgb_array picture: shape, colours of known positions, pending megalith, tilt previews,
dolmen outlines, coordinates, determinism and golden images (a hash with the Pillow that made
them, a tolerance with any other).

Regenerate the golden hashes (after an intended change of the picture, or a new Pillow
that draws text differently) with ``python tests/render/test_render_image.py --regenerate``,
then look at the PNGs it writes beside them before committing.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from carnac_env.core.boards import BOARDS, make_board
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.render.image import ImageRenderer
from carnac_env.render.style import (
    BACKGROUND,
    DOLMEN_LINE,
    DOLMEN_LINES,
    PENDING_RING,
    RED_FACE,
    SQUARE_COLOUR,
    WHITE_FACE,
)

GOLDEN = Path(__file__).resolve().parent / "golden_images"  # run as a script too (--regenerate)
HASHES = GOLDEN / "hashes.json"

# Golden positions: name -> (board, moves). Moves in the project's notation.
GOLDEN_GAMES = {
    # Mid-game on the medium board, White to tilt or decline the megalith on e4.
    "medium_pending": ("medium", ["c3 Rns", "tilt S", "f5 Wew", "decline", "g2 Wns", "tilt W", "e4 Rew"]),
    # A finished game on petit_menec (dolmens outlined, the winner shown).
    "petit_menec_over": ("petit_menec", None),
}


def random_game(board: str, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    state = GameState(board)
    actions = []
    while not state.is_over:
        legal = state.legal_actions()
        action = int(legal[rng.integers(len(legal))])
        state.apply(action)
        actions.append(action)
    return actions


def golden_state(name: str) -> GameState:
    board, moves = GOLDEN_GAMES[name]
    state = GameState(board)
    if moves is None:
        for action in random_game(board, seed=11):
            state.apply(action)
        return state
    from carnac_env.core.notation import parse_action

    for text in moves:
        state.apply(parse_action(state.board, text, state.to_act))
    return state


def digest(image: np.ndarray) -> str:
    return hashlib.sha256(f"{image.shape}".encode() + image.tobytes()).hexdigest()


def pixel(image: np.ndarray, xy: tuple[int, int]) -> tuple[int, int, int]:
    x, y = xy
    return tuple(int(v) for v in image[y, x])


def distance(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    return sum(abs(int(x) - int(y)) for x, y in zip(a, b))


# --------------------------------------------------------------------------- basics
@pytest.mark.parametrize("name", sorted(BOARDS))
def test_shape_dtype_and_even_size_on_every_board(name):
    state = GameState(name)
    renderer = ImageRenderer(state.board)
    image = renderer.draw(state)
    assert image.dtype == np.uint8
    assert image.ndim == 3 and image.shape[2] == 3
    assert image.shape == (renderer.layout.height, renderer.layout.width, 3)
    assert image.shape[0] % 2 == 0 and image.shape[1] % 2 == 0  # for video encoders
    _, _, x1, y1 = renderer.layout.board_box
    assert x1 <= image.shape[1] and y1 <= image.shape[0]


def test_tiny_custom_board_and_small_cells():
    board = make_board("custom", rows=1, cols=3, megaliths=2, min_dolmen=2)
    state = GameState(board)
    state.apply(4 * 0)  # a1, Red on top, north/south shows red: cannot tilt N/S; east tilt fits
    for cell in (8, 16, 48):
        image = ImageRenderer(board, cell).draw(state)
        assert image.dtype == np.uint8 and image.shape[2] == 3


def test_one_column_board_draws_vertical_slabs():
    # On a single column, squares a and a+1 are north and south of each other.
    board = make_board("custom", rows=4, cols=1, megaliths=3, min_dolmen=2)
    state = GameState(board)
    state.apply(0)  # a1, Red on top; north/south tilts show red
    renderer = ImageRenderer(board, 40, status=False)
    preview = renderer.draw(state)
    layout = renderer.layout
    (x, y1), (_, y2) = layout.square_centre(1), layout.square_centre(2)
    off = layout.cell // 5  # off the preview's dashed middle line
    assert all(pixel(preview, (x + off, y))[0] > pixel(preview, (x + off, y))[1] for y in range(y1, y2 + 1))
    state.tilt(2)  # south: a2 and a3 show red
    image = renderer.draw(state)
    assert all(pixel(image, (x, y)) == RED_FACE for y in range(y1, y2 + 1))
    assert pixel(image, (x, layout.square_centre(0)[1])) == SQUARE_COLOUR


def test_fresh_array_each_call_and_same_pixels():
    state = golden_state("medium_pending")
    first = ImageRenderer(state.board).draw(state)
    again = ImageRenderer(state.board).draw(state)
    assert np.array_equal(first, again)
    first[:] = 0
    assert not np.array_equal(first, ImageRenderer(state.board).draw(state))


def test_rejects_bad_arguments():
    with pytest.raises(CarnacError, match="cell"):
        ImageRenderer("medium", cell=4)
    renderer = ImageRenderer("medium")
    with pytest.raises(CarnacError, match="board"):
        renderer.draw(GameState("small"))
    state = GameState.from_diagram("petit_menec", ["R.....", "......", "......", "......", "......", "......"])
    with pytest.raises(CarnacError, match="not empty"):
        ImageRenderer("petit_menec").draw(state, tentative=(0, 0))


# --------------------------------------------------------------------------- what squares look like
DIAGRAM = [
    "R.ww..",
    "......",
    ".W..r.",
    "....r.",
    "......",
    "......",
]


def test_standing_lying_and_empty_squares_have_distinct_colours():
    state = GameState.from_diagram("petit_menec", DIAGRAM)
    renderer = ImageRenderer(state.board)
    layout = renderer.layout
    image = renderer.draw(state)
    red_standing, white_standing = layout.square_centre(0), layout.square_centre(13)
    white_lying, red_lying, empty = layout.square_centre(2), layout.square_centre(16), layout.square_centre(7)
    assert pixel(image, red_standing) == RED_FACE
    assert pixel(image, white_standing) == WHITE_FACE
    assert pixel(image, white_lying) == WHITE_FACE
    assert pixel(image, red_lying) == RED_FACE
    assert pixel(image, empty) == SQUARE_COLOUR
    assert len({RED_FACE, WHITE_FACE, SQUARE_COLOUR, BACKGROUND}) == 4


def test_standing_megalith_is_a_block_and_lying_one_a_single_slab():
    state = GameState.from_diagram("petit_menec", DIAGRAM)
    renderer = ImageRenderer(state.board)
    cell = renderer.layout.cell
    image = renderer.draw(state)
    # The lying white megalith on c1-d1 is one piece: its colour runs unbroken across the
    # border between its two squares, along the middle row of pixels.
    (cx, cy), (dx, _) = renderer.layout.square_centre(2), renderer.layout.square_centre(3)
    assert all(pixel(image, (x, cy)) == WHITE_FACE for x in range(cx, dx + 1))
    # The lying red megalith on e3-e4 (north-south) likewise, down the middle column.
    (ex, ey), (_, ey2) = renderer.layout.square_centre(16), renderer.layout.square_centre(22)
    assert all(pixel(image, (ex, y)) == RED_FACE for y in range(ey, ey2 + 1))
    # A standing megalith is smaller than its square: 0.42 of a cell from its centre is
    # no longer its face, while a lying slab still is there along its length.
    ax, ay = renderer.layout.square_centre(0)
    off = round(cell * 0.42)
    assert pixel(image, (ax, ay)) == RED_FACE
    assert distance(pixel(image, (ax - off, ay)), RED_FACE) > 60
    assert pixel(image, (cx + off, cy)) == WHITE_FACE  # towards its other square


def test_pending_megalith_ringed_with_its_faces_and_tilts_previewed():
    state = golden_state("medium_pending")
    assert state.phase == 1 and state.to_act == 1
    renderer = ImageRenderer(state.board)
    layout = renderer.layout
    image = renderer.draw(state)
    x0, y0, x1, y1 = layout.square_box(state.pending)
    ring = image[y0:y1, x0:x1].reshape(-1, 3)
    assert (ring == PENDING_RING).all(axis=1).sum() > layout.cell  # a gold ring around it
    top, ns, ew = state.cells[state.pending], *state.pending_colours
    cx, cy = layout.square_centre(state.pending)
    faces = {1: RED_FACE, 2: WHITE_FACE}
    assert pixel(image, (cx, cy)) == faces[top]
    # Each side shows the colour its tilt would show (shaded for relief, so compare the nearest face).
    side = round(layout.cell * 0.33)
    for (dx, dy), colour in (((0, -side), ns), ((side, 0), ew), ((0, side), ns), ((-side, 0), ew)):
        seen = pixel(image, (cx + dx, cy + dy))
        assert distance(seen, faces[colour]) < distance(seen, faces[3 - colour])
    # Landing squares of each legal tilt are tinted towards the colour the tilt would show.
    targets = state.tilt_targets()
    assert targets
    quarter = layout.cell // 5  # off the preview's dashed middle line
    for first, second, colour in targets.values():
        for square in (first, second):
            cx, cy = layout.square_centre(square)
            seen = pixel(image, (cx + quarter, cy + quarter))
            assert seen != SQUARE_COLOUR
            assert distance(seen, faces[colour]) < distance(seen, faces[3 - colour])
    # After a decline, nothing is pending: no ring, the landing squares are plain again.
    state.decline()
    after = renderer.draw(state)
    assert not (after == PENDING_RING).all(axis=2).any()
    for first, _, _ in targets.values():
        assert pixel(after, layout.square_centre(first)) == SQUARE_COLOUR


def test_tentative_placement_previews_its_tilts():
    state = GameState("petit_menec")
    renderer = ImageRenderer(state.board)
    plain = renderer.draw(state)
    square = 14  # c3: room to tilt every way
    shown = renderer.draw(state, tentative=(square, 0))  # Red on top, N/S show red
    assert not np.array_equal(plain, shown)
    layout = renderer.layout
    off = layout.cell // 5  # off the preview's dashed middle line
    north = tuple(v + off for v in layout.square_centre(square - 6))
    east = tuple(v + off for v in layout.square_centre(square + 1))
    assert distance(pixel(shown, north), RED_FACE) < distance(pixel(shown, north), WHITE_FACE)
    assert distance(pixel(shown, east), WHITE_FACE) < distance(pixel(shown, east), RED_FACE)


def test_dolmens_outlined_at_the_end_only_by_default():
    state = golden_state("petit_menec_over")
    assert state.is_over
    result = state.result()
    assert result.dolmens[0] or result.dolmens[1]
    renderer = ImageRenderer(state.board)
    over = renderer.draw(state)
    for colour in (1, 2):
        if result.dolmens[colour - 1]:
            assert (over == DOLMEN_LINES[colour]).all(axis=2).sum() > 50
        assert not (renderer.draw(state, dolmens=False) == DOLMEN_LINES[colour]).all(axis=2).any()
    mid = GameState.from_diagram("petit_menec", ["RRR...", "......", "......", "......", "......", "......"])
    assert not (renderer.draw(mid) == DOLMEN_LINE).all(axis=2).any()
    assert (renderer.draw(mid, dolmens=True) == DOLMEN_LINE).all(axis=2).any()


def test_status_shows_whose_turn_and_the_result():
    state = GameState("petit_menec")
    renderer = ImageRenderer(state.board)
    assert renderer.status_line(state) == "Red to place a megalith"
    red_turn = renderer.draw(state)
    state.apply(4 * 35)  # f6: cannot tilt (corner? no: west and north fit), White responds
    assert renderer.status_line(state).startswith("White: tilt or decline f6")
    white_turn = renderer.draw(state)
    status = slice(renderer.layout.status_top, None)
    assert (red_turn[status] == RED_FACE).all(axis=2).sum() > 20
    assert (white_turn[status] == WHITE_FACE).all(axis=2).sum() > 20
    over = golden_state("petit_menec_over")
    winner = over.result().winner
    expected = "Game over: a draw" if winner is None else f"Game over: {('Red', 'White')[winner]} wins"
    assert renderer.status_line(over) == expected
    named = ImageRenderer(state.board, names=("you", "mcts"))
    assert named.status_line(state).startswith("White (mcts)")


def test_coordinates_sit_by_their_column_and_row():
    board = BOARDS["medium"]
    renderer = ImageRenderer(board)
    layout = renderer.layout
    image = renderer.draw(GameState(board)).astype(int)
    ink = np.abs(image - np.array(BACKGROUND)).sum(axis=2) > 150  # text pixels
    x0, y0, x1, y1 = layout.board_box
    for c in range(board.cols):
        assert ink[: y0 - 3, layout.left + c * layout.cell : layout.left + (c + 1) * layout.cell].any(), c
    for r in range(board.rows):
        assert ink[layout.top + r * layout.cell : layout.top + (r + 1) * layout.cell, : x0 - 3].any(), r
    # Pixel to square follows the notation: a1 is the north-west corner, row-major.
    assert layout.square_at(x0 + 1, y0 + 1) == 0
    assert layout.square_at(x1 - 1, y1 - 1) == board.squares - 1
    assert layout.square_at(x0 - 1, y0 + 1) is None
    assert all(layout.square_at(*layout.square_centre(s)) == s for s in range(board.squares))


def test_every_position_of_a_game_draws_at_one_size():
    board = "small"
    renderer = ImageRenderer(board, cell=24)
    state = GameState(board)
    shapes = {renderer.draw(state).shape}
    for action in random_game(board, seed=2):
        state.apply(action)
        shapes.add(renderer.draw(state).shape)
    assert len(shapes) == 1


def test_raw_env_rgb_array_matches_the_renderer():
    import carnac_env

    env = carnac_env.raw_env(board="petit_menec")
    env.render_mode = "rgb_array"  # the path raw_env.render() takes for that mode
    env.reset(options={"moves": ["c3 Rns"]})
    image = env.render()
    assert np.array_equal(image, ImageRenderer(env.board).draw(env.game))
    env.step(env.parse_action("decline"))
    assert np.array_equal(env.render(), ImageRenderer(env.board).draw(env.game))
    env.close()


# --------------------------------------------------------------------------- golden hashes
def current_hashes() -> dict[str, str]:
    out = {}
    for name in GOLDEN_GAMES:
        state = golden_state(name)
        out[name] = digest(ImageRenderer(state.board).draw(state))
    return out


def differing_fraction(a: np.ndarray, b: np.ndarray, threshold: int = 60) -> float:
    """The share of pixels whose colours differ by more than ``threshold`` (summed over RGB)."""
    return float((np.abs(a.astype(int) - b.astype(int)).sum(axis=2) > threshold).mean())


@pytest.mark.parametrize("name", sorted(GOLDEN_GAMES))
def test_golden_image(name, tmp_path):
    """The picture of each golden position matches the stored PNG.

    With the Pillow version the PNGs were made with, pixel for pixel (the hash). With any other
    Pillow the package allows (``pillow>=10.1``), text and anti-aliasing may differ by a few
    pixels, so the board must match within a tolerance: at most 1% of its pixels off (and
    the whole picture, text included, at most 6%). A real change of the picture (a piece
    drawn differently, a colour changed) moves far more than that.
    """
    import PIL
    from PIL import Image

    stored = json.loads(HASHES.read_text())
    state = golden_state(name)
    renderer = ImageRenderer(state.board)
    image = renderer.draw(state)
    golden = np.array(Image.open(GOLDEN / f"{name}.png").convert("RGB"))
    actual = tmp_path / f"{name}.png"
    hint = (
        f"Compare {actual} with {GOLDEN / (name + '.png')}; if the change is intended, regenerate with: "
        "python tests/render/test_render_image.py --regenerate"
    )
    if image.shape != golden.shape:
        Image.fromarray(image).save(actual)
        pytest.fail(f"golden position {name!r}: size {image.shape} != stored {golden.shape}. {hint}")
    if PIL.__version__ == stored["pillow"]:
        if digest(image) != stored["hashes"][name]:
            Image.fromarray(image).save(actual)
            pytest.fail(f"the picture of golden position {name!r} changed (Pillow {PIL.__version__}). {hint}")
        return
    x0, y0, x1, y1 = renderer.layout.board_box
    board_off = differing_fraction(image[y0:y1, x0:x1], golden[y0:y1, x0:x1])
    whole_off = differing_fraction(image, golden)
    if board_off > 0.01 or whole_off > 0.06:
        Image.fromarray(image).save(actual)
        pytest.fail(
            f"golden position {name!r} drawn with Pillow {PIL.__version__} differs from the PNG made with Pillow "
            f"{stored['pillow']}: {board_off:.1%} of the board and {whole_off:.1%} of the picture. {hint}"
        )


def test_golden_tolerance_catches_a_real_change():
    """The tolerance of test_golden_image is not so loose that a changed piece passes."""
    from PIL import Image

    state = golden_state("medium_pending")
    renderer = ImageRenderer(state.board)
    golden = np.array(Image.open(GOLDEN / "medium_pending.png").convert("RGB"))
    changed = state.copy()
    changed.decline()  # no ring, no previews: a small but real change
    image = renderer.draw(changed)
    x0, y0, x1, y1 = renderer.layout.board_box
    assert differing_fraction(image[y0:y1, x0:x1], golden[y0:y1, x0:x1]) > 0.01


def regenerate() -> None:
    import PIL
    from PIL import Image

    GOLDEN.mkdir(exist_ok=True)
    for name in GOLDEN_GAMES:
        state = golden_state(name)
        Image.fromarray(ImageRenderer(state.board).draw(state)).save(GOLDEN / f"{name}.png")
    HASHES.write_text(json.dumps({"pillow": PIL.__version__, "hashes": current_hashes()}, indent=2) + "\n")
    print(f"wrote {HASHES} and the PNGs beside it; look at them before committing")


if __name__ == "__main__":
    if sys.argv[1:] == ["--regenerate"]:
        regenerate()
    else:
        print(__doc__)


# --------------------------------------------------------------------------- the BGA score, live outlines
def _texts(renderer: ImageRenderer, state: GameState, **options) -> tuple[str, np.ndarray]:
    """What the status panel writes (its lines joined), and the picture."""
    written: list[str] = []
    paste = renderer.paste_text

    def record(image, xy, text, *args, **kwargs):
        written.append(text)
        return paste(image, xy, text, *args, **kwargs)

    renderer.paste_text = record
    try:
        image = renderer.draw(state, **options)
    finally:
        del renderer.paste_text
    return " ".join(written), image


@pytest.mark.parametrize("cell", [24, 48])
def test_the_panel_shows_each_sides_bga_score_beside_its_dolmens(cell):
    renderer = ImageRenderer("petit_menec", cell)
    state = GameState("petit_menec")
    for action in random_game("petit_menec", seed=5):
        state.apply(action)
        text, _ = _texts(renderer, state)
        red, white = state.result().scores if state.is_over else state.score_now().scores
        if state.is_over:
            assert f"(BGA {red}) | White" in text and f"(BGA {white})" in text
        else:
            assert "Dolmens now: Red " in text and f"BGA {red})" in text and f"BGA {white})" in text


def test_replay_frames_outline_the_dolmens_as_they_stand():
    from carnac_env.core.record import GameRecord
    from carnac_env.core.scoring import dolmens
    from carnac_env.render.animate import frames, positions

    record = GameRecord.from_actions(make_board("petit_menec"), random_game("petit_menec", seed=5))
    renderer = ImageRenderer("petit_menec", 40)
    checked = 0
    for (image, _), (state, _, marks, _) in zip(frames(record, 40), positions(record)):
        if state.is_over or not dolmens(state.board, state.cells):
            continue
        board = np.asarray(image)[-renderer.layout.height :]  # below the caption
        assert np.array_equal(board, renderer.draw(state, marks=marks, dolmens=True))
        assert not np.array_equal(board, renderer.draw(state, marks=marks))  # the outlines are there
        checked += 1
    assert checked
