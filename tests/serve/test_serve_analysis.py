"""``carnac serve``'s analysis: the learned agent's view of the position and of the game.

Through real HTTP requests: the answers are :mod:`carnac_env.analysis`'s own numbers, asked
again they come from the game's store, and the endpoint keeps the server's rules (JSON, the
page's Origin or token, 4xx with a reason). An analysis runs in a worker thread under the
memory ledger (a blocked one leaves the server answering, holds its need in the ledger, and
gives 409 to a second one of the same game), waits for a worker like a move (and is cancelled
with its game), counts in the queue's bound, and falls back to the raw network, or to none, on
a board where the search would not fit. In a headless Chromium the buttons draw the heat map
and the review.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from _frameworks import require
from test_serve import Client

from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError


@pytest.fixture
def server():
    require("tornado", "the serve extra: pip install -e '.[serve]'")
    from carnac_env.serve import Server

    with Server(port=0, agents=["greedy", "random"], boards=["petit_menec", "small", "le_menec"]) as running:
        client = Client(running.url)
        client.server = running
        yield client


def _game(client: Client, board: str = "petit_menec", moves: int = 0) -> dict:
    """A new game against random, with the person's first legal choices played ``moves`` times."""
    status, view = client.call("api/games", "POST", {"board": board, "opponent": "random"})
    assert status == 201, view
    for _ in range(moves):
        view = client.wait(view["id"])
        choice = (
            view["placements"][len(view["moves"]) % len(view["placements"])]["orientations"][1]["action"]
            if view["placements"]
            else view["answers"][-1]["action"]
        )
        status, view = client.call(f"api/games/{view['id']}/move", "POST", {"action": choice})
        assert status == 200, view
    return client.wait(view["id"])


def _state(board: str, view: dict) -> tuple[GameState, list[int]]:
    from carnac_env.core.notation import parse_action

    state, actions = GameState(board), []
    for move in view["moves"]:
        actions.append(parse_action(state.board, move["text"], state.to_act))
        state.apply(actions[-1])
    return state, actions


def test_each_board_says_which_analysis_it_offers(server):
    status, options = server.call("api/options")
    assert status == 200
    offers = {b["name"]: b["analysis"] for b in options["boards"]}
    assert offers["petit_menec"] == {"sims": 200, "solve": 7, "model": "general"}
    assert offers["small"]["sims"] == 200 and offers["le_menec"]["model"]


def test_the_position_and_the_review_are_the_analysis_modules_numbers(server):
    from carnac_env.analysis import Analyst

    view = _game(server, moves=3)
    game = view["id"]
    state, actions = _state("petit_menec", view)
    status, answer = server.call(f"api/games/{game}/analysis", "POST", {"kind": "position"})
    assert status == 200, answer
    own = Analyst("petit_menec", sims=200).evaluate(state, ply=len(actions))
    assert answer["evaluation"] == json.loads(json.dumps(own.to_dict(top=8)))
    assert answer["ply"] == len(view["moves"]) and answer["layer_svg"].startswith('<g class="analysis"')
    again = server.call(f"api/games/{game}/analysis", "POST", {"kind": "position"})
    assert again == (200, answer)  # kept: the same answer, not a new search
    status, done = server.call(f"api/games/{game}/analysis", "POST", {"kind": "review"})
    assert status == 200, done
    reviewed = Analyst("petit_menec", sims=200).review(actions)
    assert done["review"] == json.loads(json.dumps(reviewed.to_dict()))
    assert done["curve_svg"] == reviewed.svg()
    # what the page shows beside the list: the rule, and a sentence when no move qualifies
    assert done["review"]["threshold"] == 0.1 and "10% of expected score" in done["review"]["threshold_text"]
    assert (done["review"]["nothing_listed"] is None) == bool(done["review"]["mistakes"])


def test_the_analysis_keeps_the_servers_rules(server):
    game = _game(server)["id"]
    path = f"api/games/{game}/analysis"
    status, answer = server.call(path, "POST", raw=b'{"kind": "position"}', headers={"Content-Type": "text/plain"})
    assert status == 415 and "JSON" in answer["error"]
    status, answer = server.call(path, "POST", {"kind": "position"}, headers={"Origin": "http://evil.example"})
    assert status == 403 and "another site" in answer["error"]
    for token, expected in (("guess", 403), (server.server.games.token, 200)):  # no Origin: the page's token
        request = urllib.request.Request(
            server.url + path,
            data=b'{"kind": "position"}',
            headers={"Content-Type": "application/json", "X-Carnac-Token": token},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                status = answer.status
        except urllib.error.HTTPError as err:
            status = err.code
        assert status == expected, token
    for body, words in (({"kind": "everything"}, "expected one of position, review"), ({"ply": 3}, "kind")):
        status, answer = server.call(path, "POST", body)
        assert status == 400 and words in answer["error"], answer
    assert server.call(path)[0] == 405
    status, answer = server.call("api/games/nosuchgame/analysis", "POST", {"kind": "position"})
    assert status == 404


def _blocked(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """Make every analysis wait for ``go`` (``started`` is set when one begins)."""
    from carnac_env.serve import games

    started, go = threading.Event(), threading.Event()
    real = games._analyse

    def blocked(*args: Any) -> Any:
        started.set()
        assert go.wait(60)
        return real(*args)

    monkeypatch.setattr(games, "_analyse", blocked)
    return started, go


def test_an_analysis_runs_off_the_event_loop_under_the_ledger(server, monkeypatch):
    from carnac_env.core.boards import make_board
    from carnac_env.serve.budget import analysis_need

    started, go = _blocked(monkeypatch)
    game = _game(server)["id"]
    answers: list[Any] = []
    asking = threading.Thread(
        target=lambda: answers.append(server.call(f"api/games/{game}/analysis", "POST", {"kind": "position"}))
    )
    asking.start()
    try:
        assert started.wait(60)
        status, page = server.call("")
        assert status == 200 and "<title>Carnac" in page  # the server answers meanwhile
        assert server.call(f"api/games/{game}")[0] == 200
        status, answer = server.call(f"api/games/{game}/analysis", "POST", {"kind": "review"})
        assert status == 409 and "being made" in answer["error"]
        memory = server.server.games.memory()
        assert memory["running"] == analysis_need(make_board("petit_menec"), 200, solve=7).peak  # the solver too
    finally:
        go.set()
        asking.join(60)
    assert answers and answers[0][0] == 200
    assert server.server.games.memory()["running"] == 0 and server.server.games.memory()["kept"] == 0


def test_an_analysis_waits_for_a_worker_and_goes_with_its_game(monkeypatch):
    require("tornado", "the serve extra: pip install -e '.[serve]'")
    from carnac_env.serve import Server

    with Server(port=0, agents=["random"], boards=["small"], workers=1) as running:
        client = Client(running.url)
        started, go = _blocked(monkeypatch)
        first, second = _game(client, "small")["id"], _game(client, "small")["id"]
        answers: dict[str, Any] = {}

        def ask(game: str) -> None:
            answers[game] = client.call(f"api/games/{game}/analysis", "POST", {"kind": "position"})

        threads = [threading.Thread(target=ask, args=(g,)) for g in (first, second)]
        threads[0].start()
        try:
            assert started.wait(60)
            threads[1].start()  # the one worker is busy: this one waits in the ledger
            deadline = time.monotonic() + 30
            while running.games.games[second].analysing != "waiting" and time.monotonic() < deadline:
                time.sleep(0.02)
            assert running.games.games[second].analysing == "waiting"
            running._loop.call_soon_threadsafe(running.games.evict, second)
            threads[1].join(60)
            status, answer = answers[second]
            assert status == 404 and "forgotten" in answer["error"]
        finally:
            go.set()
            for thread in threads:
                thread.join(60)
        assert answers[first][0] == 200


def test_waiting_analyses_count_in_the_queue_bound():
    require("tornado", "the serve extra: pip install -e '.[serve]'")
    from carnac_env.serve.games import BusyError, Games

    games = Games(["random"], ["small"], max_queue=1)
    try:
        live = games.create({"board": "small"})
        live.analysing = "waiting"
        with pytest.raises(BusyError, match="busy"):
            games.check_room(None)
    finally:
        games.close()


def test_a_board_too_big_for_the_memory_gets_the_raw_network_or_nothing():
    require("tornado", "the serve extra: pip install -e '.[serve]'")
    from carnac_env.core.boards import make_board
    from carnac_env.serve.budget import analysis_need
    from carnac_env.serve.games import Games

    board = make_board("le_menec")
    searched, raw = analysis_need(board, 200).peak, analysis_need(board, 0).peak
    assert raw < searched
    between = Games(["random"], ["le_menec"], workers=1, memory=(raw + searched) // 2)
    assert between.analysis["le_menec"]["sims"] == 0
    below = Games(["random"], ["le_menec"], workers=1, memory=raw - 1)
    assert below.analysis["le_menec"] is None and "needs" in below.analysis_refused["le_menec"]
    for games in (between, below):
        games.close()


def test_the_analysis_need_bounds_what_an_analysis_allocates():
    from _games import random_game

    from carnac_env.analysis import Analyst
    from carnac_env.core.boards import make_board
    from carnac_env.serve.budget import analysis_need

    for name in ("le_menec", "small"):
        states = [GameState(name)]  # the start has the most moves: the biggest search tree
        for action in random_game(name, seed=3).actions():
            states.append(states[-1].copy())
            states[-1].apply(action)
        analyst = Analyst(name, sims=200)
        analyst.raw([s for s in states if not s.is_over])  # more positions than one network batch
        analyst.evaluate(states[0])
        assert len(states) > analyst.batch
        used = sum(int(a.nbytes) for a in analyst._raw.arrays)
        used += sum(int(a.nbytes) for a in analyst._search.arrays)
        assert used <= analysis_need(make_board(name), 200).peak, name


def test_the_solver_is_in_the_analysis_need_and_its_option():
    from carnac_env.analysis.solved import SOLVE_TABLE_MB
    from carnac_env.core.boards import make_board
    from carnac_env.serve.budget import analysis_need, solve_need
    from carnac_env.serve.games import Games

    board = make_board("small")
    assert solve_need(board, 0) == 0
    assert SOLVE_TABLE_MB << 19 < solve_need(board, 7) <= (SOLVE_TABLE_MB + 2) << 20
    assert analysis_need(board, 200, solve=7).peak == analysis_need(board, 200).peak + solve_need(board, 7)
    off = Games(["random"], ["small"], analysis_solve=0)
    assert off.analysis["small"]["solve"] == 0 and off.analysis["small"]["need"] == analysis_need(board, 200)
    on = Games(["random"], ["small"])
    assert on.analysis["small"]["need"] == analysis_need(board, 200, solve=7)
    with pytest.raises(CarnacError, match="analysis_solve"):
        Games(["random"], ["small"], analysis_solve=-1)


@pytest.mark.slow  # the solver's first compile
def test_a_late_position_and_its_review_carry_the_solvers_verdict(server):
    from carnac_env.analysis import Analyst

    view = _game(server)
    state, actions = _state("petit_menec", view)
    while state.supply > 4:  # the person's first legal choices (as _game) until few are left
        choice = (
            view["placements"][len(view["moves"]) % len(view["placements"])]["orientations"][1]["action"]
            if view["placements"]
            else view["answers"][-1]["action"]
        )
        status, view = server.call(f"api/games/{view['id']}/move", "POST", {"action": choice})
        assert status == 200, view
        view = server.wait(view["id"])
        state, actions = _state("petit_menec", view)
    assert not state.is_over
    # first here: the solver's first compile (in this process, the server's) is not in a request's timeout
    own = Analyst("petit_menec", sims=200).evaluate(state, ply=len(actions))
    status, answer = server.call(f"api/games/{view['id']}/analysis", "POST", {"kind": "position"})
    assert status == 200, answer
    assert own.verdict is not None and answer["evaluation"]["verdict"] == json.loads(json.dumps(own.verdict.to_dict()))
    assert "solved: " in answer["evaluation"]["summary"]
    status, done = server.call(f"api/games/{view['id']}/analysis", "POST", {"kind": "review"})
    assert status == 200 and done["review"]["solved"][-1] == own.solved


def test_analysis_sims_is_checked():
    require("tornado", "the serve extra: pip install -e '.[serve]'")
    from carnac_env.serve import Server

    with pytest.raises(CarnacError, match="analysis_sims"):
        Server(port=0, agents=["random"], analysis_sims=-1)


# --------------------------------------------------------------------------- in a real browser
def test_the_agents_view_in_a_headless_browser(server):
    from _browser import headless_browser as _browser

    driver = _browser()
    try:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        wait = WebDriverWait(driver, 120)
        driver.get(server.url + "?board=petit_menec&opponent=random")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#opponent option"))
        driver.find_element(By.ID, "start").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#targets rect.place"))
        assert driver.find_element(By.ID, "agent").is_displayed()
        driver.find_element(By.ID, "evaluate").click()
        wait.until(lambda d: d.find_element(By.ID, "evaluation").is_displayed())
        assert driver.find_elements(By.CSS_SELECTOR, "#analysis rect.heat")
        assert len(driver.find_elements(By.CSS_SELECTOR, "#analysis rect.best")) == 1
        assert "200 simulations" in driver.find_element(By.ID, "agent-summary").text
        assert len(driver.find_elements(By.CSS_SELECTOR, "#agent-moves tr")) == 8
        driver.find_element(By.ID, "show-heat").click()  # the heat map off, and on again
        assert not driver.find_elements(By.CSS_SELECTOR, "#analysis rect.heat")
        driver.find_element(By.ID, "show-heat").click()
        assert driver.find_elements(By.CSS_SELECTOR, "#analysis rect.heat")
        # A move: the view of the old position is gone from the board.
        before = len(driver.find_elements(By.CSS_SELECTOR, "#moves li"))
        driver.find_elements(By.CSS_SELECTOR, "#targets rect.place")[5].click()
        driver.find_elements(By.CSS_SELECTOR, "button.orientation")[0].click()
        wait.until(lambda d: d.find_element(By.ID, "place").is_enabled())
        driver.find_element(By.ID, "place").click()
        wait.until(lambda d, before=before: len(d.find_elements(By.CSS_SELECTOR, "#moves li")) > before)
        assert not driver.find_elements(By.CSS_SELECTOR, "#analysis rect.heat")
        wait.until(lambda d: d.find_element(By.ID, "thinking").get_attribute("hidden"))
        played = len(driver.find_elements(By.CSS_SELECTOR, "#moves li"))
        driver.find_element(By.ID, "review").click()
        wait.until(lambda d: d.find_element(By.ID, "review-box").is_displayed())
        points = driver.find_elements(By.CSS_SELECTOR, "#curve circle.point")
        assert len(points) == played + 1
        assert driver.find_elements(By.CSS_SELECTOR, "#mistakes li")
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        driver.quit()


@pytest.mark.slow  # the solver's first compile
def test_the_solved_line_in_a_headless_browser(server):
    """A whole petit_menec game played in the page (the first target, its first orientation,
    Place; Decline when asked): a late position's evaluation names the solver's result, and the
    review shows the line against perfect play."""
    from _browser import headless_browser as _browser
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from carnac_env.analysis import Analyst

    # first here: the solver's first compile (in this process, the server's) is not in the page's wait
    late = GameState("petit_menec")
    while late.supply > 4:
        late.apply(late.legal_actions()[0])
    assert Analyst("petit_menec", sims=8).evaluate(late).verdict is not None
    driver = _browser()
    try:
        wait = WebDriverWait(driver, 120, ignored_exceptions=(StaleElementReferenceException,))

        def my_turn(d: Any) -> bool:  # the opponent has moved: a placement or an answer to give, or the end
            if not d.find_element(By.ID, "thinking").get_attribute("hidden"):
                return False
            return bool(
                d.find_elements(By.CSS_SELECTOR, "#targets rect.place")
                or d.find_elements(By.CSS_SELECTOR, "#answer-buttons button.answer")
                or d.find_element(By.ID, "result").is_displayed()
            )

        def supply() -> int:
            game = driver.find_element(By.ID, "download").get_attribute("href").split("/")[-2]
            return _state("petit_menec", server.wait(game))[0].supply

        driver.get(server.url + "?board=petit_menec&opponent=random")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#opponent option"))
        driver.find_element(By.ID, "start").click()
        evaluated = False
        for _ in range(200):  # plies; a game of 14 megaliths has at most 28 of them
            wait.until(my_turn)
            if driver.find_element(By.ID, "result").is_displayed():
                break
            if not evaluated and supply() <= 4:
                driver.find_element(By.ID, "evaluate").click()
                wait.until(lambda d: d.find_element(By.ID, "evaluation").is_displayed())
                assert "solved: " in driver.find_element(By.ID, "agent-summary").text
                evaluated = True
            before = len(driver.find_elements(By.CSS_SELECTOR, "#moves li"))
            declines = [
                b for b in driver.find_elements(By.CSS_SELECTOR, "#answer-buttons button.answer") if b.text == "Decline"
            ]
            if declines:
                declines[0].click()
            else:
                driver.find_elements(By.CSS_SELECTOR, "#targets rect.place")[0].click()
                driver.find_elements(By.CSS_SELECTOR, "button.orientation")[0].click()
                wait.until(lambda d: d.find_element(By.ID, "place").is_enabled())
                driver.find_element(By.ID, "place").click()
            wait.until(lambda d, before=before: len(d.find_elements(By.CSS_SELECTOR, "#moves li")) > before)
        assert evaluated and driver.find_element(By.ID, "result").text.startswith("Game over")
        driver.find_element(By.ID, "review").click()
        wait.until(lambda d: d.find_element(By.ID, "review-box").is_displayed())
        perfect = driver.find_element(By.ID, "perfect-play")
        assert perfect.is_displayed() and perfect.text.startswith("Against perfect play (solved from position ")
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        driver.quit()
