"""Web replays (``carnac replay FILE --html OUT.html``): the page's content, and the page in a
real headless browser (Chromium driven by Selenium): it loads without console errors, and
stepping, scrubbing and the move list change the board.

The browser test skips where Selenium, Chromium or its driver is missing, except where
``CARNAC_REQUIRE`` names ``chromium`` (CI installs them with ``.ci/install-browser``): there a
missing browser fails the test.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from _frameworks import require, required_modules

from carnac_env.core.game import GameState
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError
from carnac_env.render.animate import captions
from carnac_env.render.html import replay_html, write_replay_html


def random_record(board: str = "petit_menec", seed: int = 3) -> GameRecord:
    rng = np.random.default_rng(seed)
    state = GameState(board)
    actions = []
    while not state.is_over:
        legal = state.legal_actions()
        actions.append(int(legal[rng.integers(len(legal))]))
        state.apply(actions[-1])
    record = GameRecord.from_actions(state.board, actions)
    record.meta["agents"] = ["random", "<b>greedy</b>"]
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
def _browser():
    webdriver = require("selenium.webdriver", "pip install selenium (the test extra)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not (chromium and driver_path):
        why = "Chromium and its driver are not installed (Debian: apt-get install chromium chromium-driver)"
        if "chromium" in required_modules():
            pytest.fail(f"CARNAC_REQUIRE names chromium, but: {why}")
        pytest.skip(why)
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver_path), options=options)


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
