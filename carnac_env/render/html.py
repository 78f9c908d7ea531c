"""Web replays: one self-contained HTML page per game (``carnac replay FILE --html OUT.html``).

The page needs no server and no network: the board is inline SVG (drawn by
:mod:`carnac_env.render.svg`), every position of the game is stored in the page, and a few
lines of plain JavaScript swap them. It has buttons to step (first, back, play/pause,
forward, last), a slider to scrub, the move list (click a move to jump to the position
after it), and the arrow keys. The caption names the move **just made**, as the text replay
(``carnac replay``) and the GIF do, and the board shows each side's dolmens now, outlined on
every position, with each side's Board Game Arena score and who leads (at the end: the
result and the tie-break that decided it). A legend under the board explains the outlines,
the last move's dot, the ring of a megalith awaiting a decision and the tilt previews.

The address says which position is shown, so a teacher can link a moment of the game:
``game.html#move=12`` opens after move 12, ``#end`` at the end (``#move=0``: the start).
Stepping updates the address; editing it jumps there.

With ``analysis`` (a :class:`~carnac_env.analysis.Review` of the game, from
:func:`carnac_env.analysis.review`), the page also carries the learned agent's view, computed
when the page was written (the page stays one file with no server): a box, **Show the agent's
view**, lays the heat map of its moves over every position (the search's visit share where it
searched, else the network's prior), rings its choice and shows each side's expected score;
and a **review** under the board plots Red's expected score move by move, with the moves where
it dropped most circled and listed, each with the move the agent preferred there (click a
point or a mistake to go to that position). ``python -m carnac_env.analysis GAME.json --html
OUT.html`` writes such a page.

>>> from carnac_env.core.record import GameRecord                # doctest: +SKIP
>>> write_replay_html(GameRecord.load("game.json"), "game.html")  # doctest: +SKIP
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from string import Template
from typing import Any

from carnac_env._files import check_output, is_stdout, write_text
from carnac_env.core.game import PLAYER_NAMES
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError
from carnac_env.render.animate import positions
from carnac_env.render.score import result_line
from carnac_env.render.style import (
    BLOCK_EDGE,
    BOARD_RIM,
    DOLMEN_LINES,
    FACE_COLOURS,
    FACE_EDGES,
    HIGHLIGHT,
    HIGHLIGHT_EDGE,
    MARK_COLOUR,
    NOTE_TEXT,
    PAGE_BACKGROUND,
    PENDING_RING,
    RED_TEXT,
    SOFT_TEXT,
    SQUARE_COLOUR,
    TEXT_COLOUR,
    WHITE_TEXT,
    hex_colour,
)
from carnac_env.render.svg import SvgLayout, board_layer, pieces_layer

_STYLE = Template(
    """
body { font-family: sans-serif; background: $page; color: $text; margin: 1.2em; }
h1 { font-size: 1.3em; margin: 0 0 .3em 0; }
.meta { color: $soft; margin: 0 0 .8em 0; }
.replay { display: flex; flex-wrap: wrap; gap: 1.2em; align-items: flex-start; }
.controls { display: flex; gap: .3em; align-items: center; margin: .5em 0; flex-wrap: wrap; }
.controls button { font-size: 1em; padding: .25em .6em; cursor: pointer; }
#scrub { flex: 1; min-width: 10em; }
#caption { font-weight: bold; min-height: 1.3em; margin: .3em 0; }
#moves { max-height: 32em; overflow-y: auto; margin: 0; padding-left: 2.8em; }
#moves li button { border: none; background: none; cursor: pointer; font: inherit; padding: .05em .3em; }
#moves li button.current {
  background: $highlight; color: $text; border-radius: 3px; outline: 2px solid $highlight_edge;
}
.red { color: $red; font-weight: bold; } .white { color: $white; font-weight: bold; }
.legend { list-style: none; padding: 0; margin: .4em 0; font-size: .9em; color: $note; max-width: 34em; }
.legend li { display: flex; align-items: center; gap: .5em; margin: .15em 0; }
.legend svg { flex: none; }
#link { font-size: .9em; color: $note; }
.agent { margin: .6em 0; max-width: 40em; }
.agent label { font-weight: bold; cursor: pointer; }
#evaluation p { margin: .2em 0; }
#evaluation .bar { display: flex; height: 1.1em; max-width: 30em; border: 1px solid $soft; font-size: .85em; }
#evaluation .bar span { display: block; padding: 0 .3em; white-space: nowrap; overflow: hidden; }
#evaluation .bar .red-part { background: $red_face; color: #ffffff; }
#evaluation .bar .white-part { background: $white_face; color: $text; text-align: right; flex: 1; }
#evaluation table { border-collapse: collapse; font-size: .9em; }
#evaluation td, #evaluation th { padding: .05em .6em .05em 0; text-align: left; }
#review h2 { font-size: 1.1em; margin: .8em 0 .3em 0; }
#review svg .point, #review svg .mistake { cursor: pointer; }
#mistakes button, #blunders button {
  border: none; background: none; cursor: pointer; font: inherit; text-align: left; padding: .1em 0;
}
#mistakes button:hover, #blunders button:hover { text-decoration: underline; }
"""
).substitute(  # the colours of render/style.py
    page=hex_colour(PAGE_BACKGROUND),
    text=hex_colour(TEXT_COLOUR),
    soft=hex_colour(SOFT_TEXT),
    rim=hex_colour(BOARD_RIM),
    red=hex_colour(RED_TEXT),
    white=hex_colour(WHITE_TEXT),
    note=hex_colour(NOTE_TEXT),
    highlight=hex_colour(HIGHLIGHT),
    highlight_edge=hex_colour(HIGHLIGHT_EDGE),
    red_face=hex_colour(FACE_COLOURS[1]),
    white_face=hex_colour(FACE_COLOURS[2]),
)

_SCRIPT = r"""
(function () {
  "use strict";
  var frames = JSON.parse(document.getElementById("frames").textContent);
  var captions = JSON.parse(document.getElementById("captions").textContent);
  var pieces = document.getElementById("pieces");
  var scrub = document.getElementById("scrub");
  var caption = document.getElementById("caption");
  var where = document.getElementById("where");
  var playButton = document.getElementById("play");
  var moveButtons = document.querySelectorAll("#moves button");
  var link = document.getElementById("link");
  var index = 0, timer = null, last = frames.length - 1;
  // The position the address names: #move=N (clamped to the game) or #end; else the start.
  function fromHash() {
    var hash = window.location.hash.replace(/^#/, "");
    if (hash === "end") { return last; }
    var m = /^move=(\d+)$/.exec(hash);
    return m ? Math.min(Number(m[1]), last) : 0;
  }
  function setHash(i) {
    var hash = "#move=" + i;
    link.href = hash;
    if (window.location.hash === hash) { return; }
    try { history.replaceState(null, "", hash); } catch (e) { window.location.replace(hash); }
  }
  var agent = document.getElementById("analysis-data");
  agent = agent ? JSON.parse(agent.textContent) : null;
  var layer = document.getElementById("analysis");
  var toggle = document.getElementById("show-analysis");
  function cell(row, text) { var td = document.createElement("td"); td.textContent = text; row.appendChild(td); }
  function showAgent() {
    if (!agent) { return; }
    var on = toggle.checked, view = agent.positions[index], box = document.getElementById("evaluation");
    layer.innerHTML = on ? view.layer : "";
    box.hidden = !on;
    if (!on) { return; }
    var red = 100 * view.expected[0];
    document.getElementById("red-part").style.width = red + "%";
    document.getElementById("red-part").textContent = red >= 22 ? "Red " + view.shown[0] : "";
    document.getElementById("white-part").textContent = red <= 78 ? "White " + view.shown[1] : "";
    document.getElementById("agent-summary").textContent = view.summary;
    var rows = document.getElementById("agent-moves"); rows.innerHTML = "";
    view.moves.forEach(function (m) {
      var tr = document.createElement("tr");
      cell(tr, m.text); cell(tr, m.shown[0]); cell(tr, view.search ? m.shown[1] : "-");
      rows.appendChild(tr);
    });
    document.getElementById("agent-table").hidden = view.moves.length === 0;
  }
  function show(i) {
    index = Math.max(0, Math.min(last, i));
    pieces.innerHTML = frames[index];
    showAgent();
    scrub.value = index;
    caption.textContent = captions[index];
    where.textContent = index + " / " + last;
    moveButtons.forEach(function (b) {
      var current = Number(b.dataset.step) === index;
      b.classList.toggle("current", current);
      if (current && b.scrollIntoView) { b.scrollIntoView({block: "nearest"}); }
    });
    setHash(index);
  }
  function stop() { if (timer) { clearInterval(timer); timer = null; playButton.textContent = "Play"; } }
  function play() {
    if (timer) { stop(); return; }
    if (index >= frames.length - 1) { show(0); }
    playButton.textContent = "Pause";
    timer = setInterval(function () { if (index >= frames.length - 1) { stop(); } else { show(index + 1); } }, 700);
  }
  document.getElementById("first").onclick = function () { stop(); show(0); };
  document.getElementById("prev").onclick = function () { stop(); show(index - 1); };
  document.getElementById("next").onclick = function () { stop(); show(index + 1); };
  document.getElementById("last").onclick = function () { stop(); show(frames.length - 1); };
  playButton.onclick = play;
  scrub.oninput = function () { stop(); show(Number(scrub.value)); };
  moveButtons.forEach(function (b) { b.onclick = function () { stop(); show(Number(b.dataset.step)); }; });
  document.addEventListener("keydown", function (e) {
    if (e.key === "ArrowRight") { stop(); show(index + 1); }
    else if (e.key === "ArrowLeft") { stop(); show(index - 1); }
    else if (e.key === "Home") { stop(); show(0); }
    else if (e.key === "End") { stop(); show(frames.length - 1); }
  });
  window.addEventListener("hashchange", function () { if (fromHash() !== index) { stop(); show(fromHash()); } });
  if (agent) {
    toggle.onchange = showAgent;
    document.querySelectorAll("#review [data-step]").forEach(function (el) {
      el.addEventListener("click", function () {
        stop();
        if (el.hasAttribute("data-before")) { toggle.checked = true; }
        show(Number(el.getAttribute("data-step")));
      });
    });
  }
  show(fromHash());
})();
"""


def _json_for_script(value: object) -> str:
    """JSON that is safe inside a ``<script type="application/json">`` element."""
    return json.dumps(value).replace("</", "<\\/").replace("<!--", "<\\!--")


_rgb = hex_colour


def legend_html() -> str:
    """The legend of the board's marks, as a list with small SVG swatches in the picture's colours."""
    size, half = 22, 11

    def swatch(body: str) -> str:
        return (
            f'<svg width="{size}" height="{size}" viewBox="0 0 {size} {size}" aria-hidden="true">'
            f'<rect width="{size}" height="{size}" fill="{_rgb(SQUARE_COLOUR)}"/>{body}</svg>'
        )

    def outline(colour: tuple[int, int, int]) -> str:
        return swatch(
            f'<rect x="3" y="3" width="16" height="16" fill="none" stroke="{_rgb(colour)}" stroke-width="3"/>'
        )

    items = [
        (outline(DOLMEN_LINES[1]), "Red's dolmens: red groups of at least 3 connected squares, outlined in gold"),
        (outline(DOLMEN_LINES[2]), "White's dolmens, outlined in blue"),
        (
            swatch(f'<circle cx="{size - 6}" cy="6" r="3.5" fill="{_rgb(MARK_COLOUR)}"/>'),
            "the square or squares of the move just made",
        ),
        (
            swatch(
                f'<rect x="2" y="2" width="18" height="18" rx="3" fill="none" stroke="{_rgb(PENDING_RING)}" '
                f'stroke-width="2.5"/><rect x="7" y="7" width="8" height="8" fill="{_rgb(FACE_COLOURS[2])}" '
                f'stroke="{_rgb(BLOCK_EDGE)}"/>'
            ),
            "a ring round a megalith just placed, drawn with its four faces: the other player tilts it or declines",
        ),
        (
            swatch(
                f'<rect x="4" y="4" width="14" height="14" fill="{_rgb(FACE_COLOURS[1])}" fill-opacity="0.4" '
                f'stroke="{_rgb(FACE_EDGES[1])}" stroke-width="1.5" stroke-dasharray="3 3"/>'
                f'<text x="{half}" y="15" font-size="11" text-anchor="middle" fill="{_rgb(FACE_EDGES[1])}">&gt;</text>'
            ),
            "where a tilt would land, in the colour it would show",
        ),
    ]
    rows = "".join(f"<li>{mark}<span>{escape(text)}</span></li>" for mark, text in items)
    return f'<ul class="legend" aria-label="legend">{rows}</ul>'


def _perfect_play(review: Any) -> str:
    """The review's part against the exact solver: where it solved from, and each move that
    threw a solved result away (a button to the position before it); empty if it solved
    nothing."""
    solved = getattr(review, "solved", None)
    if not solved:
        return ""
    first = next(i for i, v in enumerate(solved) if v is not None)
    items = "".join(
        f'<li><button data-step="{b.ply - 1}" data-before="1">{escape(b.line())}</button></li>' for b in review.blunders
    )
    head = f"Against perfect play (solved from position {first} on): " + (
        "" if items else "no move changed a solved result."
    )
    return f'<div id="perfect-play"><p class="meta">{escape(head)}</p><ul id="blunders">{items}</ul></div>'


def _analysis_parts(review: Any, record: GameRecord, layout: SvgLayout) -> tuple[str, str, str]:
    """The analysis's data (a JSON script), its box beside the board and its review section."""
    from carnac_env.render.agent_view import policy_layer  # only draws what the review holds

    if tuple(review.actions) != tuple(record.actions()) or review.board_name != record.board.name:
        raise CarnacError("the analysis given is of another game than the record: review this record")
    data = {
        "positions": [
            {
                "layer": policy_layer(view, layout),
                "expected": [round(x, 4) for x in view.expected],
                "shown": [f"{x:.0%}" for x in view.expected],
                "summary": view.summary(),
                "search": view.searched,
                "moves": [m.to_dict() for m in view.top(5)],
            }
            for view in review.positions
        ]
    }
    box = (
        '<div class="agent"><label><input type="checkbox" id="show-analysis"> Show the agent\'s view</label> '
        f'<span class="meta">(the network {escape(review.model)}'
        + (f", searched {review.sims} simulations where it searched" if review.sims else "")
        + ')</span><div id="evaluation" hidden>'
        '<div class="bar" aria-label="expected score"><span id="red-part" class="red-part"></span>'
        '<span id="white-part" class="white-part"></span></div><p id="agent-summary"></p>'
        '<table id="agent-table"><thead><tr><th>move</th><th>prior</th><th>visits</th></tr></thead>'
        '<tbody id="agent-moves"></tbody></table><p class="meta">On the board, the tint and the number of a square '
        "are the share of the search's visits (or the network's prior) of all the moves there, a placement's four "
        "orientations together; the agent's move is ringed.</p></div></div>"
    )
    items = "".join(
        f'<li><button data-step="{m.ply - 1}" data-before="1">{escape(m.line())}</button></li>' for m in review.mistakes
    )
    nothing = review.nothing_listed()
    if nothing:  # said plainly, as the page and the text review say it
        items = f"<li>{escape(nothing)}</li>"
    section = (
        '<section id="review"><h2>Review: where the expected score dropped</h2>'
        f"{review.svg()}"
        '<p class="meta">Red\'s expected score is (1 + value) / 2 from the value head: 1 a Red win, 1/2 a draw, '
        "0 a loss. Click a point to go to that position, a mistake to see the position before it with the "
        "agent's view.</p>"
        f'{_perfect_play(review)}<p class="meta">Listed: {escape(review.threshold_text())}.</p>'
        f'<ol id="mistakes">{items}</ol></section>'
    )
    return f'<script id="analysis-data" type="application/json">{_json_for_script(data)}</script>\n', box, section


def replay_html(record: GameRecord, *, cell: int = 40, title: str | None = None, analysis: Any = None) -> str:
    """The replay page of ``record`` as one HTML string (see the module docstring);
    ``analysis``, a :class:`~carnac_env.analysis.Review` of this game, adds the agent's view.

    Raises:
        RecordError: a move of the record that does not parse or is illegal.
        CarnacError: an analysis of another game.
    """
    board = record.board
    layout = SvgLayout(board, cell)
    agents = record.meta.get("agents")
    names = (str(agents[0]), str(agents[1])) if isinstance(agents, list) and len(agents) == 2 else None
    frames: list[str] = []
    captions: list[str] = []
    movers: list[int] = []
    final = None
    for state, caption, last, mover in positions(record):
        frames.append(pieces_layer(state, layout, marks=last, names=names, outlines=True))
        captions.append(caption)
        if mover is not None:
            movers.append(mover)
        final = state
    players = (
        f"Red: {escape(names[0])}, White: {escape(names[1])}. " if names else ""
    ) + f"{len(record.moves)} moves on the {escape(board.name)} board."
    if final is not None and final.is_over:
        players += " " + escape(result_line(final.result(), names)) + "."
    items = "".join(
        f'<li><button data-step="{n}"><span class="{PLAYER_NAMES[who].lower()}">{PLAYER_NAMES[who]}</span>: '
        f"{escape(text)}</button></li>"
        for n, (who, text) in enumerate(zip(movers, record.moves), start=1)
    )
    heading = escape(title or "Carnac replay")
    svg = (
        f'<svg id="board" xmlns="http://www.w3.org/2000/svg" width="{layout.width}" height="{layout.height}" '
        f'viewBox="0 0 {layout.width} {layout.height}" role="img" aria-label="the board">'
        f'{board_layer(layout)}<g id="pieces">{frames[0]}</g><g id="analysis"></g></svg>'
    )
    last = len(frames) - 1
    data, box, section = _analysis_parts(analysis, record, layout) if analysis is not None else ("", "", "")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{heading}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f'<h1>{heading}</h1>\n<p class="meta">{players}</p>\n'
        '<div class="replay">\n<div>\n'
        f"{svg}\n"
        '<div class="controls">'
        '<button id="first" title="start (Home)">|&lt;</button>'
        '<button id="prev" title="back (left arrow)">&lt;</button>'
        '<button id="play">Play</button>'
        '<button id="next" title="forward (right arrow)">&gt;</button>'
        '<button id="last" title="end (End)">&gt;|</button>'
        f'<input id="scrub" type="range" min="0" max="{last}" value="0" aria-label="position">'
        '<span id="where"></span> <a id="link" href="#move=0" title="copy this link to show this position">'
        "link to this position</a></div>\n"
        f'<p id="caption"></p>\n{box}{legend_html()}\n</div>\n'
        f'<ol id="moves">{items}</ol>\n</div>\n{section}'
        f'<script id="frames" type="application/json">{_json_for_script(frames)}</script>\n'
        f'<script id="captions" type="application/json">{_json_for_script(captions)}</script>\n'
        f"{data}<script>{_SCRIPT}</script>\n</body>\n</html>\n"
    )


def write_replay_html(record: GameRecord, path: str | Path, *, cell: int = 40, analysis: Any = None) -> Path:
    """Write the replay page of ``record`` to ``path`` (an ``.html`` file, or ``-`` for
    standard output), with the agent's view if ``analysis`` (a
    :class:`~carnac_env.analysis.Review` of it) is given. Returns the path.

    Raises:
        CarnacError: the name does not end in .html/.htm, its folder does not exist, the
            path is not a regular file (a device, a FIFO, a folder: see
            :mod:`carnac_env._files`), or the file cannot be written.
        RecordError: a move of the record that does not parse or is illegal.
    """
    if is_stdout(path):
        write_text(path, replay_html(record, cell=cell, analysis=analysis))
        return Path(path)
    path = Path(path)
    if path.suffix.lower() not in (".html", ".htm"):
        raise CarnacError(f"cannot write {path.name!r}: expected a file name ending in .html")
    check_output(path)  # a missing folder, a device or a FIFO there: refused before the page is made
    page = replay_html(record, cell=cell, analysis=analysis)
    write_text(path, page)  # atomic: a full disk leaves no half page (carnac_env._files)
    return path
