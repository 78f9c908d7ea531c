"""The agent's-view pictures draw nothing over what they must show (issue 50, item 3).

Each case renders the picture (Pillow, and the SVG where the page uses it) and checks pixel
regions or the drawn shapes' boxes:

* the heat map of a tilt frames the board's tilt preview instead of covering it, so the
  preview's colour (what the tilt would show) stays visible;
* the "decline N%" label stays inside the pending megalith's square;
* in a one-sided game, no point of the review's curve falls on the "Red ahead" or
  "White ahead" label.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from carnac_env.analysis.position import Analyst
from carnac_env.analysis.review import Review
from carnac_env.core.actions import decode
from carnac_env.core.game import RESPOND, GameState
from carnac_env.render.agent_view import (
    PREVIEW_INSET,
    _curve_geometry,
    curve_png,
    curve_svg,
    evaluation_png,
    heat_shapes,
    policy_layer,
)
from carnac_env.render.image import ImageRenderer
from carnac_env.render.style import ANALYSIS_LABEL_EDGE, CURVE_LINE
from carnac_env.render.svg import SvgLayout

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def respond_view():
    """A petit_menec position where Red answers a megalith (tilt W 98%, decline 1%, tilt N),
    through the raw network (no search, no solver: no other ring on the board)."""
    state, rng = GameState("petit_menec"), np.random.default_rng(2)
    while not (state.phase == RESPOND and len(state.legal_actions()) >= 3 and state.placed > 4):
        legal = state.legal_actions()
        state.apply(int(legal[rng.integers(len(legal))]))
    return Analyst("petit_menec", sims=0, solve=0).evaluate(state)


def _near(image: np.ndarray, colour: tuple[int, int, int], within: int) -> np.ndarray:
    """The pixels of ``image`` within ``within`` of ``colour`` on every channel."""
    return np.all(np.abs(image.astype(int) - np.array(colour)) <= within, axis=-1)


def _tilt_previews(view, cell: int) -> list[tuple[int, int, int, int]]:
    """Each legal tilt's preview box, as the board renderers draw it (inset from its squares)."""
    state = view.state
    renderer = ImageRenderer(state.board, cell, status=False)
    inset = round(cell * PREVIEW_INSET)
    boxes = []
    for first, second, _ in state.tilt_targets().values():
        a, b = sorted((first, second))
        x0, y0, _, _ = renderer.layout.square_box(a)
        _, _, x1, y1 = renderer.layout.square_box(b)
        boxes.append((x0 + inset, y0 + inset, x1 - inset, y1 - inset))
    return boxes


@pytest.mark.parametrize("cell", [48, 40])
def test_the_heat_map_leaves_the_tilt_previews_colour_visible(respond_view, cell):
    """Inside every tilt preview, away from its percentage label, the picture is the board's
    own pixels: the tint (once a box over the whole slab) frames the preview instead."""
    state = respond_view.state
    assert len(state.tilt_targets()) >= 2
    plain = np.array(ImageRenderer(state.board, cell, status=False).draw_image(state, dolmens=True))
    shown = np.array(evaluation_png(respond_view, cell=cell))[: plain.shape[0], : plain.shape[1]]
    shapes = [s for s in heat_shapes(respond_view, 0, 0, cell, state.board.cols) if not s.get("decline")]
    assert any(s["t"] == 1.0 for s in shapes), "the strongest move should be a tilt, tinted most"
    for x0, y0, x1, y1 in _tilt_previews(respond_view, cell):
        region = np.ones((y1 - y0, x1 - x0), bool)
        label = 0.4 * cell  # the label stands on the first square's centre: leave its square out
        if x1 - x0 > y1 - y0:
            region[:, : int(cell - label)] = False
        else:
            region[: int(cell - label), :] = False
        same = np.all(shown[y0:y1, x0:x1] == plain[y0:y1, x0:x1], axis=-1)
        assert same[region].mean() > 0.97, (cell, (x0, y0, x1, y1), same[region].mean())


def test_the_svg_tilt_tint_is_a_frame_outside_the_preview(respond_view):
    cell = 48
    layout = SvgLayout(respond_view.state.board, cell)
    group = ET.fromstring(policy_layer(respond_view, layout))  # a <g>, no namespace
    inset = round(cell * PREVIEW_INSET)
    tilts = [decode(respond_view.state.board, m.action).kind == "tilt" and m.action for m in respond_view.moves]
    heat = [r for r in group.iter("rect") if r.get("class") == "heat"]
    framed = [r for r in heat if r.get("fill") == "none"]
    assert len(framed) == sum(1 for t in tilts if t is not False)
    for rect in framed:
        x, w, stroke = float(rect.get("x")), float(rect.get("width")), float(rect.get("stroke-width"))
        y, h = float(rect.get("y")), float(rect.get("height"))
        left, top = x - layout.left, y - layout.top
        # the stroke's inner edge stays short of the preview, which starts `inset` into a square
        assert (left + stroke / 2) % cell <= inset and (top + stroke / 2) % cell <= inset
        assert w + stroke <= 2 * cell and h + stroke <= 2 * cell


@pytest.mark.parametrize("cell", [48, 40, 32])
def test_the_decline_label_stays_inside_its_square(respond_view, cell):
    state = respond_view.state
    (decline,) = [s for s in heat_shapes(respond_view, 0, 0, cell, state.board.cols) if s.get("decline")]
    assert decline["label"] is not None, "the test position should label its decline"
    renderer = ImageRenderer(state.board, cell, status=False)
    x0, _, x1, y1 = renderer.layout.square_box(state.pending)
    shown = np.array(evaluation_png(respond_view, cell=cell))
    ink = _near(shown, ANALYSIS_LABEL_EDGE, 24)
    band = ink[y1 - cell // 4 : y1 + cell // 4, x0 - cell : x1 + cell]  # the foot of the square, and below
    xs = np.nonzero(band.any(axis=0))[0] + x0 - cell
    assert len(xs), "the decline label should be drawn"
    assert x0 <= xs.min() and xs.max() < x1, (cell, (x0, x1), (xs.min(), xs.max()))
    assert not ink[y1 + 1 : y1 + cell // 4, x0 - cell : x1 + cell].any()


def test_the_svg_decline_label_fits_its_square(respond_view):
    cell = 48
    layout = SvgLayout(respond_view.state.board, cell)
    group = ET.fromstring(policy_layer(respond_view, layout))
    (text,) = [t for t in group.iter("text") if (t.text or "").startswith("decline")]
    size = float(text.get("font-size"))
    width = float(text.get("textLength")) if text.get("textLength") else 0.62 * size * len(text.text)
    assert width <= cell - 4, (text.attrib, text.text)


def _one_sided(moves: int = 40) -> Review:
    """A review by hand of a game White led from the first move: Red's curve on the floor."""
    red = (0.5,) + (0.01,) * moves
    players = tuple(k % 2 for k in range(moves))
    return Review(
        "petit_menec", tuple(range(moves)), tuple(f"m{k}" for k in range(moves)), players, red, (), (), 0, "test"
    )


@pytest.mark.parametrize("height", [240, 160])
def test_no_curve_point_sits_on_the_side_labels(height, monkeypatch):
    """The labels are drawn in colours found nowhere else (green, magenta) so that their ink
    is told apart from the curve's; a one-sided game either way puts points at both ends."""
    from carnac_env.render import agent_view

    monkeypatch.setattr(agent_view, "RED_TEXT", (255, 0, 255))
    monkeypatch.setattr(agent_view, "WHITE_TEXT", (0, 200, 0))
    review = _one_sided()
    flipped = Review(**{**review.__dict__, "red": tuple(1 - p for p in review.red)})
    for shown in (review, flipped):
        image = np.array(curve_png(shown, width=560, height=height)).astype(int)
        curve = _near(image, CURVE_LINE, 30)
        red, green, blue = image[..., 0], image[..., 1], image[..., 2]
        for name, ink in (("Red ahead", (red - green > 80) & (blue - green > 80)), ("White ahead", green - red > 60)):
            ys, xs = np.nonzero(ink)
            assert len(xs), f"{name} should be drawn"
            box = curve[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
            assert not box.any(), (height, name, (xs.min(), ys.min(), xs.max(), ys.max()))


def test_the_svg_side_labels_stand_left_of_the_plot():
    review = _one_sided()
    g = _curve_geometry(review, 560, 240)
    root = ET.fromstring(curve_svg(review))
    labels = [t for t in root.iter(f"{SVG}text") if (t.text or "").endswith("ahead")]
    assert [t.text for t in labels] == ["Red ahead", "White ahead"]
    for t in labels:
        x, size = float(t.get("x")), float(t.get("font-size"))
        assert re.fullmatch(r"rotate\(-90 [\d.]+ [\d.]+\)", t.get("transform") or ""), t.attrib
        assert x <= g["left"] - 6 - 3 * 7  # left of the axis's numbers ("0.5" is right-aligned at left - 6)
        assert size * 0.6 * len(t.text) <= g["h"] / 2  # within its half of the plot's height
    points = [float(c.get("cx")) for c in root.iter(f"{SVG}circle") if c.get("class") == "point"]
    assert min(points) - 3 > max(float(t.get("x")) for t in labels)
