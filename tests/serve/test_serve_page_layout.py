"""``carnac serve``'s page fits every board and screen (issue 50).

In one headless Chromium, on one server offering the seven built-in boards, at three desktop
sizes and a phone's (emulated with touch): every square's centre, once scrolled into view, is
that square for the browser's hit test (nothing lies over the board), the page is no wider
than the screen, the side panel sits beside or below the board and its buttons can be
reached, and choosing a square does not move the panel. At 1280x900 the evaluation's table of
the agent's moves can be reached, and an evaluation's heat map is not drawn over a
placement's preview.

The server takes the board names only (a custom board is not yet accepted by ``Server``), so
the largest boards checked are the built-in ``le_menec`` (12 x 16) and ``kermario`` (5 x 20).
"""

from __future__ import annotations

from typing import Any

import pytest
from _frameworks import require
from test_serve import Client

from carnac_env.core.boards import BOARDS

#: (width, height, phone): the screens checked, CSS pixels.
SCREENS = [(1280, 800, False), (1366, 768, False), (1920, 1080, False), (390, 844, True)]

# One script for a whole page: each square scrolled into view and hit-tested at its centre,
# the page's width, the panel's place beside or below the board, and its buttons reachable.
MEASURE = """
var out = {squares: 0, hit: 0, misses: [], overflow: 0, overlap: false, reachable: [], unreachable: []};
var targets = document.querySelectorAll("#targets rect.place");
out.squares = targets.length;
function at(r) {  // the element at the centre of r's box
  var b = r.getBoundingClientRect();
  return document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
}
Array.prototype.forEach.call(targets, function (r) {
  var e = at(r);
  if (e !== r) {  // scrolled into view (only where it is not: scrolling each one is slow)
    r.scrollIntoView({block: "center", inline: "center"});
    e = at(r);
  }
  if (e === r) { out.hit += 1; }
  else { out.misses.push(r.getAttribute("data-name") + " -> " + (e ? e.tagName + "#" + e.id : "nothing")); }
});
var doc = document.documentElement;
out.overflow = doc.scrollWidth - doc.clientWidth;
window.scrollTo(0, 0);
var board = document.getElementById("board-svg").getBoundingClientRect();
var panel = document.querySelector("aside").getBoundingClientRect();
out.overlap = !(panel.left >= board.right - 0.5 || panel.top >= board.bottom - 0.5);
["evaluate", "review", "undo", "show-heat"].forEach(function (id) {
  var el = document.getElementById(id);
  el.scrollIntoView({block: "center"});
  var b = el.getBoundingClientRect();
  var e = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
  (e === el || el.contains(e) ? out.reachable : out.unreachable).push(id);
});
window.scrollTo(0, 0);
return out;
"""

PANEL = """var b = document.querySelector("aside").getBoundingClientRect();
return [b.left + window.scrollX, b.top + window.scrollY, b.width];"""


@pytest.fixture(scope="module")
def server():
    require("tornado", "the serve extra: pip install -e '.[serve]'")
    from carnac_env.serve import Server

    # The raw network for the analysis (no search, no solver): the evaluation answers at once.
    with Server(port=0, agents=["greedy"], boards=list(BOARDS), analysis_sims=0, analysis_solve=0) as running:
        yield Client(running.url)


@pytest.fixture(scope="module")
def driver():
    from _browser import headless_browser as _browser

    browser = _browser()
    try:
        yield browser
    finally:
        browser.quit()


def _screen(driver: Any, width: int, height: int, phone: bool) -> None:
    """The viewport ``width`` x ``height`` CSS pixels; a phone's also takes touch and honours
    the page's viewport tag."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": phone},
    )
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": phone, "maxTouchPoints": 5})


def _tap(driver: Any, element: Any) -> None:
    """A touch on the centre of ``element`` (in view), as a phone's finger sends it."""
    x, y = driver.execute_script(
        "var b = arguments[0].getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2];", element
    )
    for kind, points in (("touchStart", [{"x": x, "y": y}]), ("touchEnd", [])):
        driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})


def _new_game(driver: Any, server: Client, board: str, squares: int | None = None) -> None:
    """A new game of ``board`` against greedy, the person Red: waits for its ``squares``
    targets (default: the built-in board's squares) and the agent's panel."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(server.url + f"?board={board}&opponent=greedy&seat=0")
    wait = WebDriverWait(driver, 60)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#opponent option"))
    driver.find_element(By.ID, "start").click()
    squares = BOARDS[board].rows * BOARDS[board].cols if squares is None else squares
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#targets rect.place")) == squares)
    wait.until(lambda d: d.find_element(By.ID, "agent").is_displayed())


@pytest.mark.parametrize("board", list(BOARDS))
def test_every_square_can_be_clicked_and_the_panel_stays_beside_or_below(server, driver, board):
    """One game of ``board``, the screen resized under it: at each size every square is hit,
    the page fits, the panel is beside or below the board, and choosing a square (a touch on
    the phone) and previewing a placement leave the panel where it was."""
    _check_every_screen(driver, server, board, BOARDS[board].rows * BOARDS[board].cols)


#: A custom board larger than every built-in one (12 x 16 is le_menec's, 5 x 20 kermario's).
CUSTOM = "12x20"


def test_a_large_custom_board_fits_too(driver):
    """The same checks on a custom board, which the server offers under its spec (issue 50 item 4)."""
    require("tornado", "the serve extra: pip install -e '.[serve]'")
    from carnac_env.core.boards import board_spec, make_board
    from carnac_env.serve import Server

    running = Server(port=0, agents=["greedy"], boards=[CUSTOM], analysis_sims=0, analysis_solve=0)
    rows, cols = map(int, CUSTOM.split("x"))
    with running:
        _check_every_screen(driver, Client(running.url), board_spec(make_board(CUSTOM)), rows * cols)


def _check_every_screen(driver: Any, server: Client, board: str, squares: int) -> None:
    from selenium.webdriver.common.by import By

    _screen(driver, *SCREENS[0])
    _new_game(driver, server, board, squares)
    for width, height, phone in SCREENS:
        where = f"{board} at {width}x{height}"
        _screen(driver, width, height, phone)
        driver.execute_script('document.getElementById("cancel").click()')  # the position as it is, chooser closed
        seen = driver.execute_script(MEASURE)
        assert seen["squares"] == squares, where
        assert seen["hit"] == squares, f"{where}: squares hidden {seen['misses']}"
        assert seen["overflow"] <= 0, f"{where}: the page is {seen['overflow']} px too wide"
        assert not seen["overlap"], f"{where}: the panel lies over the board"
        assert not seen["unreachable"], f"{where}: cannot reach {seen['unreachable']}"

        # Choosing a square (the middle one) opens the chooser in the panel; the panel stays put,
        # and so it does when a placement is previewed.
        before = driver.execute_script(PANEL)
        middle = driver.find_elements(By.CSS_SELECTOR, "#targets rect.place")[squares // 2]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", middle)
        if phone:  # a finger's tap
            _tap(driver, middle)
        else:
            middle.click()
        assert driver.find_element(By.ID, "chooser").is_displayed(), where
        assert driver.execute_script(PANEL) == pytest.approx(before, abs=0.5), f"{where}: the panel moved"
        orientation = driver.find_elements(By.CSS_SELECTOR, "button.orientation")[0]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", orientation)
        orientation.click()
        assert driver.execute_script(PANEL) == pytest.approx(before, abs=0.5), f"{where}: the panel moved"
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors


def test_the_evaluation_can_be_read_and_its_heat_map_leaves_the_preview_alone(server, driver):
    """At 1280x900 on le_menec: the evaluation's table of moves can be scrolled to and read, and
    once a placement is previewed the heat map is no longer drawn over it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    _screen(driver, 1280, 900, False)
    _new_game(driver, server, "le_menec")
    wait = WebDriverWait(driver, 120)
    driver.find_element(By.ID, "evaluate").click()
    wait.until(lambda d: d.find_element(By.ID, "evaluation").is_displayed())
    rows = driver.find_elements(By.CSS_SELECTOR, "#agent-moves tr")
    assert rows and driver.find_elements(By.CSS_SELECTOR, "#analysis .heat")
    last = rows[-1].find_elements(By.TAG_NAME, "td")[-1]
    hit = driver.execute_script(
        "var el = arguments[0]; el.scrollIntoView({block: 'center'}); var b = el.getBoundingClientRect();"
        "var e = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);"
        "return e === el || el.contains(e);",
        last,
    )
    assert hit, "the last row of the agent's moves cannot be reached"

    square = driver.find_elements(By.CSS_SELECTOR, "#targets rect.place")[40]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", square)
    square.click()
    driver.find_elements(By.CSS_SELECTOR, "button.orientation")[0].click()
    wait.until(lambda d: d.find_element(By.ID, "place").is_enabled())
    assert driver.find_elements(By.CSS_SELECTOR, "#pieces .preview")
    heat = driver.find_elements(By.CSS_SELECTOR, "#analysis .heat")
    assert heat and not any(box.is_displayed() for box in heat)  # the heat map stands aside
    driver.find_element(By.ID, "cancel").click()
    heat = driver.find_elements(By.CSS_SELECTOR, "#analysis .heat")
    assert heat and all(box.is_displayed() for box in heat)  # and comes back with the position


def test_a_tilts_preview_shows_its_colour_over_the_heat_map(server, driver):
    """The agent placed a megalith that can be tilted; evaluated, the heat map's boxes are drawn
    before (under) the tilts' previews and its numbers after (over) them (SVG paints in
    document order)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    _screen(driver, 1280, 800, False)
    driver.get(server.url + "?board=medium&opponent=greedy&seat=1")
    wait = WebDriverWait(driver, 60)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#opponent option"))
    driver.find_element(By.ID, "start").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#answer-buttons button"))
    driver.find_element(By.ID, "evaluate").click()
    wait.until(lambda d: d.find_element(By.ID, "evaluation").is_displayed())
    order = driver.execute_script(
        "var all = Array.prototype.slice.call(document.querySelectorAll('#board-svg *'));"
        "var at = function (sel) { return Array.prototype.map.call(document.querySelectorAll(sel),"
        " function (e) { return all.indexOf(e); }); };"
        "return {heat: at('rect.heat'), preview: at('#pieces .preview'), labels: at('text.heat-label')};"
    )
    assert order["heat"] and order["preview"] and order["labels"], order
    assert max(order["heat"]) < min(order["preview"]) < max(order["preview"]) < min(order["labels"])


# Plays the page's game to its end by its own buttons: the person's first placement (previewed,
# then placed) or a decline, each after the agent has answered.
PLAY_TO_THE_END = """
var done = arguments[arguments.length - 1], $ = function (id) { return document.getElementById(id); };
var steps = 0;
function step() {
  steps += 1;
  if (steps > 4000) { done("stuck"); return; }
  if (!$("result").hidden) { done("over"); return; }
  if (!$("thinking").hidden) { setTimeout(step, 20); return; }
  var place = document.querySelector("#targets rect.place");
  if (place && $("chooser").hidden) {
    place.dispatchEvent(new MouseEvent("click", {bubbles: true}));
    document.querySelector("button.orientation").click();
  } else if (place && !$("place").disabled) {
    $("place").click();
  } else if (!place && !$("answers").hidden) {
    var buttons = document.querySelectorAll("#answer-buttons button");
    buttons[buttons.length - 1].click();  // decline
  }
  setTimeout(step, 20);
}
step();
"""


@pytest.mark.slow  # a whole game by the page's buttons (about 6 s)
def test_after_the_game_the_evaluation_shows_no_empty_table(server, driver):
    """Evaluate once the game is over: the value, and a plain line instead of an empty table."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    _screen(driver, 1280, 800, False)
    _new_game(driver, server, "petit_menec")
    driver.set_script_timeout(120)
    assert driver.execute_async_script(PLAY_TO_THE_END) == "over"
    driver.find_element(By.ID, "evaluate").click()
    WebDriverWait(driver, 60).until(lambda d: d.find_element(By.ID, "evaluation").is_displayed())
    assert not driver.find_elements(By.CSS_SELECTOR, "#agent-moves tr")
    assert not any(table.is_displayed() for table in driver.find_elements(By.CSS_SELECTOR, "#evaluation table"))
    assert "The game is over: there are no moves to weigh." in driver.find_element(By.ID, "evaluation").text


def test_a_board_made_on_the_page_can_be_played(server, driver):
    """'Make a board': the spec typed on the page becomes a board of the menu (the server's
    answer, under its spec), a new game starts on it with all its squares, and a bad spec is
    shown as the page's error, with the menu unchanged."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    _screen(driver, 1366, 768, False)
    driver.get(server.url)
    wait = WebDriverWait(driver, 60)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#opponent option"))
    before = len(driver.find_elements(By.CSS_SELECTOR, "#board option"))
    driver.find_element(By.CSS_SELECTOR, "#make-board summary").click()
    spec = driver.find_element(By.ID, "board-spec")
    spec.send_keys("6x11:megaliths=20")
    driver.find_element(By.ID, "add-board").click()
    wait.until(lambda d: d.find_element(By.ID, "board").get_attribute("value") == "6x11:megaliths=20,min_dolmen=3")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#board option")) == before + 1
    driver.find_element(By.ID, "start").click()
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#targets rect.place")) == 66)
    spec.clear()
    spec.send_keys("6x99")
    driver.find_element(By.ID, "add-board").click()
    wait.until(lambda d: "cols=99" in d.find_element(By.ID, "error").text)
    assert len(driver.find_elements(By.CSS_SELECTOR, "#board option")) == before + 1
