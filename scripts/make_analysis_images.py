"""The pictures of the learned agent's view in docs/images (docs/analysis.md, Tutorials 6 and 7).

    python scripts/make_analysis_images.py            # all five
    python scripts/make_analysis_images.py --pillow   # only the three Pillow pictures (no browser)

* ``analysis-position.png``: ``analyse(GameState("petit_menec")).png()``, Tutorial 6's first view;
* ``analysis-review.png``: ``review.png()`` of Tutorial 6's reviewed game (the same code);
* ``analysis-solved.png``: ``view.png()`` of Tutorial 7's position where the value head is most
  confident and wrong (the same code and seeds), with the solver's verdict and move;
* ``analysis-serve.png``: ``carnac serve`` in headless Chromium, after a few moves, with the
  position evaluated and the game reviewed;
* ``analysis-replay.png``: a web replay written by ``python -m carnac_env.analysis`` with the
  agent's view shown, and its review.

The screenshots need Selenium, Chromium and its driver (as the browser tests), and Tornado (the
``serve`` extra). Each picture is reduced to a palette of 128 colours, which keeps it small.
"""

from __future__ import annotations

import io
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from carnac_env._files import write_bytes
from carnac_env.analysis import Analyst, analyse
from carnac_env.core.game import GameState
from carnac_env.core.record import GameRecord

IMAGES = Path(__file__).resolve().parent.parent / "docs" / "images"


def _save(image: Any, name: str) -> None:
    small = image.convert("RGB").quantize(colors=128, dither=0)
    buffer = io.BytesIO()
    small.save(buffer, format="PNG", optimize=True)
    write_bytes(IMAGES / name, buffer.getvalue())
    print(f"wrote docs/images/{name} ({len(buffer.getvalue()) // 1024} KB)")


def tutorial_game() -> list[int]:
    """Tutorial 6's game: Red the policy head's favourite moves, White random (seed 3)."""
    analyst = Analyst("petit_menec")
    rng = np.random.default_rng(3)
    game = GameState("petit_menec")
    actions = []
    while not game.is_over:
        if game.to_act == 0:
            action = analyst.evaluate(game, sims=0).best
        else:
            legal = game.legal_actions()
            action = legal[rng.integers(len(legal))]
        actions.append(int(action))
        game.apply(action)
    return actions


def tutorial_7_wrong() -> GameState:
    """Tutorial 7's second position: of the unfinished positions with at most 6 megaliths left
    in 40 games of small's default policy against itself (seed 0), the one where the value head is
    most confident of the side that loses with perfect play."""
    from carnac_env.solve import solve

    analyst = Analyst("small", sims=0)
    rng = np.random.default_rng(0)
    states = [GameState("small") for _ in range(40)]
    kept = []
    while any(not s.is_over for s in states):
        live = [i for i, s in enumerate(states) if not s.is_over]
        for i, (value, priors) in zip(live, analyst.raw([states[i] for i in live])):
            if states[i].supply <= 6:
                kept.append((states[i].copy(), value))
            moves = list(priors)
            weights = np.array([priors[m] for m in moves])
            states[i].apply(int(rng.choice(moves, p=weights / weights.sum())))
    solved = [solve(state, max_megaliths_left=6).result for state, _ in reversed(kept)][::-1]
    wrong = [(abs(v), k) for k, ((_, v), r) in enumerate(zip(kept, solved)) if r != 0 and np.sign(v) != r]
    return kept[max(wrong)[1]][0]


def pillow_pictures() -> None:
    _save(analyse(GameState("petit_menec")).png(), "analysis-position.png")
    _save(Analyst("petit_menec").review(tutorial_game()).png(), "analysis-review.png")
    _save(Analyst("small", sims=0).evaluate(tutorial_7_wrong()).png(), "analysis-solved.png")


def _browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"
    flags = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1180,900")
    for flag in flags:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def _shot(element: Any, name: str) -> None:
    from PIL import Image

    _save(Image.open(io.BytesIO(element.screenshot_as_png)), name)


def serve_picture() -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from carnac_env.serve import Server

    with Server(port=0, agents=["greedy"], boards=["petit_menec"]) as server:
        driver = _browser()
        try:
            wait = WebDriverWait(driver, 120)
            driver.get(server.url + "?board=petit_menec&opponent=greedy")
            wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#opponent option"))
            driver.find_element(By.ID, "start").click()
            for k, square in enumerate((14, 8, 21)):
                wait.until(
                    lambda d: (
                        d.find_elements(By.CSS_SELECTOR, "#targets rect.place")
                        or d.find_elements(By.CSS_SELECTOR, "#answer-buttons button")
                    )
                )
                places = driver.find_elements(By.CSS_SELECTOR, f'#targets rect.place[data-square="{square}"]')
                if places:
                    places[0].click()
                    driver.find_elements(By.CSS_SELECTOR, "button.orientation")[k % 2].click()
                    wait.until(lambda d: d.find_element(By.ID, "place").is_enabled())
                    driver.find_element(By.ID, "place").click()
                else:
                    driver.find_elements(By.CSS_SELECTOR, "#answer-buttons button")[-1].click()
                time.sleep(1.5)
                wait.until(lambda d: d.find_element(By.ID, "thinking").get_attribute("hidden"))
            driver.find_element(By.ID, "review").click()
            wait.until(lambda d: d.find_element(By.ID, "review-box").is_displayed())
            driver.find_element(By.ID, "evaluate").click()
            wait.until(lambda d: d.find_element(By.ID, "evaluation").is_displayed())
            time.sleep(0.3)
            _shot(driver.find_element(By.CSS_SELECTOR, "div.play"), "analysis-serve.png")
        finally:
            driver.quit()


def replay_picture() -> None:
    from selenium.webdriver.common.by import By

    from carnac_env.render.html import write_replay_html

    record = GameRecord.from_actions(
        GameState("petit_menec").board, tutorial_game(), meta={"agents": ["policy head", "random"]}
    )
    with tempfile.TemporaryDirectory() as folder:
        page = write_replay_html(record, Path(folder) / "game.html", analysis=Analyst("petit_menec").review(record))
        driver = _browser()
        try:
            driver.get(page.resolve().as_uri() + "#move=4")
            driver.find_element(By.ID, "show-analysis").click()
            time.sleep(0.3)
            _shot(driver.find_element(By.TAG_NAME, "body"), "analysis-replay.png")
        finally:
            driver.quit()


def main(argv: list[str]) -> int:
    if argv not in ([], ["--pillow"]):
        print(__doc__)
        return 2
    pillow_pictures()
    if not argv:
        serve_picture()
        replay_picture()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
