"""Web replays (``carnac replay FILE --html OUT.html``): the page's content, and the page in a
real headless browser (Chromium driven by Selenium): it loads without console errors, and
stepping, scrubbing and the move list change the board.

The browser test skips where Selenium, Chromium or its driver is missing, except where
``CARNAC_REQUIRE`` names ``chromium`` (CI installs them with ``.ci/install-browser``): there a
missing browser fails the test.
"""

from __future__ import annotations

import html
import json
import subprocess
import sys

import pytest
from _browser import headless_browser as _browser
from _games import random_game

from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError
from carnac_env.render.animate import captions
from carnac_env.render.html import replay_html, write_replay_html


def random_record(board: str = "petit_menec", seed: int = 3) -> GameRecord:
    record = random_game(board, seed)
    record.meta["agents"] = ["random", "<b>greedy</b>"]  # markup in a name, to be escaped
    return record


def embedded(page: str, name: str) -> list[str]:
    tag = f'<script id="{name}" type="application/json">'
    start = page.index(tag) + len(tag)
    return json.loads(page[start : page.index("</script>", start)])


def test_page_is_self_contained_with_every_position_and_caption():
    record = random_record()
    page = replay_html(record)
    frames = embedded(page, "frames")
    assert len(frames) == len(record.moves) + 1
    assert embedded(page, "captions") == captions(record)  # the GIF's captions: the move just made
    assert page.count('<li><button data-step="') == len(record.moves)
    assert "<b>greedy</b>" not in page and "&lt;b&gt;greedy&lt;/b&gt;" in page  # names escaped
    for forbidden in ("http://", "https://", "src=", "@import"):
        assert forbidden not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "Game over" in frames[-1] and "Why:" in frames[-1]


def test_every_frame_outlines_the_dolmens_as_they_stand_and_shows_the_bga_scores():
    from carnac_env.core.scoring import dolmens
    from carnac_env.render.animate import positions

    record = random_record()
    frames = embedded(replay_html(record), "frames")
    states = [state for state, _, _, _ in positions(record)]
    live = [i for i, state in enumerate(states[:-1]) if dolmens(state.board, state.cells)]
    assert live, "the test game should have a dolmen before its end"
    for i, (state, frame) in enumerate(zip(states, frames)):
        assert frame.count('class="dolmen"') == len(dolmens(state.board, state.cells)), i
        scores = state.score_now().scores
        text = frame.replace("\u00a0", " ")
        assert f"BGA {scores[0]}" in text and f"BGA {scores[1]}" in text, i


def test_the_page_has_a_legend_for_the_marks():
    page = replay_html(random_record())
    legend = page[page.index('<ul class="legend"') :]
    legend = html.unescape(legend[: legend.index("</ul>")])
    for words in ("Red's dolmens", "White's dolmens", "move just made", "tilts it or declines", "tilt would land"):
        assert words in legend, words


def test_write_checks_the_name_and_the_folder(tmp_path):
    record = random_record()
    with pytest.raises(CarnacError, match=r"\.html"):
        write_replay_html(record, tmp_path / "game.txt")
    with pytest.raises(CarnacError, match="does not exist"):
        write_replay_html(record, tmp_path / "missing" / "game.html")
    assert write_replay_html(record, tmp_path / "game.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_cli_writes_the_page(tmp_path):
    record_path = tmp_path / "game.json"
    random_record().save(record_path)
    out = tmp_path / "game.html"
    done = subprocess.run(
        [sys.executable, "-m", "carnac_env.cli", "replay", str(record_path), "--html", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert out.exists() and f"wrote {out}" in done.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "carnac_env.cli", "replay", str(record_path), "--html", str(tmp_path / "no" / "x.html")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("carnac: error:") and "Traceback" not in bad.stderr


# --------------------------------------------------------------------------- in a real browser
def test_page_in_a_headless_browser(tmp_path):
    record = random_record()
    path = write_replay_html(record, tmp_path / "game.html")
    driver = _browser()
    try:
        from selenium.webdriver.common.by import By

        driver.get(path.resolve().as_uri())
        pieces = driver.find_element(By.ID, "pieces")
        caption = driver.find_element(By.ID, "caption")
        start = pieces.get_attribute("innerHTML")
        assert caption.text == "Start: petit_menec board"
        driver.find_element(By.ID, "next").click()
        after_one = pieces.get_attribute("innerHTML")
        assert after_one != start  # stepping changes the board
        assert caption.text == f"1. Red: {record.moves[0]}"
        assert len(driver.find_elements(By.CSS_SELECTOR, "#pieces .standing, #pieces .pending")) == 1
        driver.find_element(By.ID, "last").click()
        assert "Game over" in caption.text
        assert driver.find_elements(By.CSS_SELECTOR, "#pieces .dolmen") or "neither" in pieces.get_attribute(
            "innerHTML"
        )
        driver.find_element(By.ID, "prev").click()
        assert caption.text.startswith(f"{len(record.moves) - 1}. ")
        # The move list jumps to the position after that move.
        driver.find_elements(By.CSS_SELECTOR, "#moves button")[4].click()
        assert caption.text.startswith("5. ")
        # The slider scrubs.
        driver.execute_script(
            "var s = document.getElementById('scrub'); s.value = 2; s.dispatchEvent(new Event('input'));"
        )
        assert caption.text.startswith("2. ")
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        driver.quit()


def _luminance(css: str) -> float:
    """The relative luminance (WCAG) of a CSS rgb()/rgba() colour."""
    channels = [int(float(v)) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
    linear = [(c / 255) / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(foreground: str, background: str) -> float:
    a, b = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def test_the_address_names_the_position_in_a_headless_browser(tmp_path):
    record = random_record()
    path = write_replay_html(record, tmp_path / "game.html")
    last = len(record.moves)
    url = path.resolve().as_uri()
    driver = _browser()
    try:
        from selenium.webdriver.common.by import By

        def caption() -> str:
            return driver.find_element(By.ID, "caption").text

        def fresh(address: str) -> None:  # a new page load at that address
            driver.get("about:blank")
            driver.get(address)

        fresh(url + "#move=5")
        assert caption().startswith("5. ")
        fresh(url + "#end")
        assert caption().startswith(f"{last}. ") and "Game over" in caption()
        fresh(url + "#move=99999")  # past the end: the end
        assert caption().startswith(f"{last}. ")
        fresh(url + "#move=nonsense")  # not a position: the start
        assert caption().startswith("Start")
        # Stepping writes the position into the address (a link a teacher can copy) ...
        driver.find_element(By.ID, "next").click()
        driver.find_element(By.ID, "next").click()
        assert driver.execute_script("return window.location.hash") == "#move=2"
        assert driver.find_element(By.ID, "link").get_attribute("href").endswith("#move=2")
        # ... and editing the address jumps there.
        driver.execute_script("window.location.hash = '#move=7'")
        assert caption().startswith("7. ")
        # The highlighted move reads well: the names' colours and the text against its background.
        current = driver.find_element(By.CSS_SELECTOR, "#moves button.current")
        background = current.value_of_css_property("background-color")
        for element in (current, current.find_element(By.TAG_NAME, "span")):
            ratio = _contrast(element.value_of_css_property("color"), background)
            assert ratio >= 4.5, (element.text, ratio)  # WCAG AA for normal text
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        driver.quit()


# --------------------------------------------------------------------------- the agent's view
def _reviewed(search: str = "mistakes", solve: int = 0):
    from carnac_env.analysis import Analyst

    record = random_record()
    return record, Analyst(record.board, sims=16, solve=solve).review(record, search=search)


def test_the_page_carries_the_agents_view_of_every_position():
    record, review = _reviewed(search="all")
    page = replay_html(record, analysis=review)
    data = json.loads(page.split('<script id="analysis-data" type="application/json">')[1].split("</script>")[0])
    assert len(data["positions"]) == len(embedded(page, "frames")) == len(record.moves) + 1
    for view, position in zip(data["positions"], review.positions):
        assert view["expected"] == [round(x, 4) for x in position.expected]
        assert view["summary"] == position.summary()
        assert (view["layer"] == "") == position.final  # a heat map on every unfinished position
    assert 'id="show-analysis"' in page and 'class="review-curve"' in page
    assert page.count('data-before="1"') == len(review.mistakes)
    assert '<script id="analysis-data"' not in replay_html(record)  # without an analysis: no data, no box
    assert 'id="show-analysis"' not in replay_html(record)


def test_an_analysis_of_another_game_is_refused():
    _, review = _reviewed()
    other = random_record(seed=4)
    with pytest.raises(CarnacError, match="another game"):
        replay_html(other, analysis=review)


def test_the_agents_view_in_a_headless_browser(tmp_path):
    record, review = _reviewed()
    path = write_replay_html(record, tmp_path / "game.html", analysis=review)
    driver = _browser()
    try:
        from selenium.webdriver.common.by import By

        driver.get(path.resolve().as_uri() + "#move=3")
        layer = driver.find_element(By.ID, "analysis")
        assert layer.get_attribute("innerHTML") == ""  # on demand: nothing until asked
        assert not driver.find_element(By.ID, "evaluation").is_displayed()
        driver.find_element(By.ID, "show-analysis").click()
        assert driver.find_elements(By.CSS_SELECTOR, "#analysis rect.heat")
        assert len(driver.find_elements(By.CSS_SELECTOR, "#analysis rect.best")) == 1
        summary = driver.find_element(By.ID, "agent-summary").text
        assert summary == review.positions[3].summary()
        rows = driver.find_elements(By.CSS_SELECTOR, "#agent-moves tr")
        assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows] == [
            m.text for m in review.positions[3].top(5)
        ]
        driver.find_element(By.ID, "next").click()  # the view follows the position
        assert driver.find_element(By.ID, "agent-summary").text == review.positions[4].summary()
        # A mistake of the review: the position before it, with the agent's view on.
        driver.find_element(By.ID, "show-analysis").click()
        first = review.mistakes[0]
        driver.find_elements(By.CSS_SELECTOR, "#mistakes button")[0].click()
        assert driver.find_element(By.ID, "caption").text.startswith(f"{first.ply - 1}. ")
        assert driver.find_element(By.ID, "show-analysis").is_selected()
        assert first.best_text in driver.find_element(By.ID, "agent-summary").text
        # A point of the curve: that position.
        driver.find_elements(By.CSS_SELECTOR, "#review circle.point")[7].click()
        assert driver.find_element(By.ID, "caption").text.startswith("7. ")
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        driver.quit()


@pytest.mark.slow  # the solver's first compile
def test_the_replay_shows_the_solvers_verdicts_near_the_end(tmp_path):
    record, review = _reviewed(solve=7)
    assert review.solved is not None
    page = replay_html(record, analysis=review)
    data = json.loads(page.split('<script id="analysis-data" type="application/json">')[1].split("</script>")[0])
    late = max(i for i, v in enumerate(review.solved) if v is not None)
    assert "solved: " in data["positions"][late]["summary"]
    assert data["positions"][late]["summary"] == review.positions[late].summary()
    assert 'id="perfect-play"' in page and "Against perfect play" in page
    assert page.count('data-before="1"') == len(review.mistakes) + len(review.blunders)
    solver_rings = data["positions"][late]["layer"].count('class="solved-best"')
    assert solver_rings == (1 if review.positions[late].verdict.result >= 0 else 0)
    path = write_replay_html(record, tmp_path / "game.html", analysis=review)
    driver = _browser()
    try:
        from selenium.webdriver.common.by import By

        driver.get(path.resolve().as_uri() + f"#move={late}")
        driver.find_element(By.ID, "show-analysis").click()
        summary = driver.find_element(By.ID, "agent-summary").text
        assert summary == review.positions[late].summary() and "solved: " in summary
        assert driver.find_element(By.ID, "perfect-play").is_displayed()
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        driver.quit()
