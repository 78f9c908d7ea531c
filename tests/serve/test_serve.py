"""``carnac serve``: a person against an agent in the browser.

The game logic (:mod:`carnac_env.serve.session`) is checked on its own; the server
(Tornado, the ``serve`` extra) through real HTTP requests, bad ones included (each a 4xx with
its reason, after which the server still plays); the agents think off the event loop (a
blocked agent does not block the server); and a whole game is played by clicks in a
headless Chromium, with an undo, ending with the game record downloaded and replayed.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import numpy as np
import pytest
from _frameworks import require

from carnac_env.core.boards import make_board
from carnac_env.core.game import GameState
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError
from carnac_env.serve.session import ConflictError, Session


# --------------------------------------------------------------------------- the session
def test_the_session_plays_checks_and_undoes():
    session = Session("g", make_board("petit_menec"), 0, "greedy")
    view = session.view()
    assert view["your_turn"] and len(view["placements"]) == 36 and not view["answers"]
    assert {o["text"] for o in view["placements"][0]["orientations"]} == {"a1 Rns", "a1 Wns", "a1 Rew", "a1 Wew"}
    with pytest.raises(CarnacError, match="illegal"):
        session.play("tilt N")  # nothing to tilt yet
    with pytest.raises(CarnacError, match="bool"):
        session.play(True)
    with pytest.raises(CarnacError):
        session.play(10**6)
    assert session.actions == [] and session.state == GameState("petit_menec")  # nothing half-applied
    session.play("c3 Rns")
    assert session.opponent_to_act and not session.your_turn
    with pytest.raises(ConflictError, match="turn"):
        session.play("decline")
    # The agent answers through opponent_state: a copy of the position.
    position = session.opponent_state()
    assert position == session.state and position is not session.state
    generation = session.generation
    assert session.apply_opponent(generation, position.legal_actions()[-1])  # the decline
    assert not session.apply_opponent(generation - 1, 0)  # an answer to an older position is dropped
    session.play("d4 Wew")  # Red places again after the decline
    assert session.undo() == 1 and len(session.actions) == 2 and session.your_turn
    assert session.undo() == 2 and session.actions == []
    with pytest.raises(ConflictError, match="nothing to undo"):
        session.undo()


def test_the_view_offers_the_tilts_and_the_preview_shows_what_the_opponent_could_do():
    session = Session("g", make_board("petit_menec"), 1, "greedy")
    assert session.apply_opponent(session.generation, 14 * 4)  # the agent, Red, places on c3 (c3 Rns)
    view = session.view()
    assert view["your_turn"] and view["phase"] == "respond"
    answers = {a["text"]: a for a in view["answers"]}
    assert set(answers) == {"tilt N", "tilt E", "tilt S", "tilt W", "decline"}
    assert answers["tilt E"]["names"] == ["d3", "e3"]
    session.play("tilt E")
    preview = session.preview("a1 Wns")
    assert preview["text"] == "a1 Wns" and 'class="pending"' in preview["pieces_svg"]
    assert {t["direction"] for t in preview["opponent_tilts"]} == {"east", "south"}  # a corner
    assert session.actions == [56, session.board.squares * 4 + 1]  # the preview played nothing
    answering = Session("h", make_board("petit_menec"), 1, "greedy")
    answering.apply_opponent(answering.generation, 0)
    with pytest.raises(CarnacError, match="not a placement"):
        answering.preview("decline")


def test_the_record_is_the_projects_format_and_names_the_players():
    session = Session("g", make_board("small"), 1, "mcts:sims=50", seed=7)
    assert session.apply_opponent(session.generation, 0)  # the agent, Red: a1 Rns
    session.play("decline")
    record = GameRecord.from_json(session.record().to_json())
    assert record.moves == ["a1 Rns", "decline"] and record.meta["agents"] == ["mcts:sims=50", "you"]
    assert record.meta["seats"] == {"you": 1} and record.meta["seed"] == 7


# --------------------------------------------------------------------------- the server
class Client:
    def __init__(self, url: str) -> None:
        self.url = url

    def call(
        self, path: str, method: str = "GET", body: Any = None, raw: bytes | None = None, headers: dict | None = None
    ) -> tuple[int, Any]:
        """The status and the JSON answer (or the text) of a request sent as the page sends it:
        JSON, with this server's Origin (``headers`` add to or replace those)."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        if method == "POST" and data is None:
            data = b""
        sent = {"Content-Type": "application/json", "Origin": self.url.rstrip("/")}
        sent.update(headers or {})
        request = urllib.request.Request(self.url + path, method=method, data=data, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                text = answer.read()
                status = answer.status
        except urllib.error.HTTPError as err:
            text, status = err.read(), err.code
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text.decode("utf-8", "replace")

    def wait(self, game: str, timeout: float = 180) -> dict:
        """The game once the agent has stopped thinking (a first move may compile the engine)."""
        import time

        end = time.monotonic() + timeout
        while True:
            status, view = self.call(f"api/games/{game}")
            assert status == 200, view
            if not view["thinking"] or time.monotonic() > end:
                return view
            time.sleep(0.05)


@pytest.fixture
def server():
    require("tornado", "the serve extra: pip install -e '.[serve]'")
    from carnac_env.serve import Server

    agents = ["greedy", "random", "mcts:sims=40", "az:sims=8", "test_serve.BlockedAgent"]
    with Server(port=0, agents=agents) as running:
        client = Client(running.url)
        client.server = running
        yield client


def test_bad_requests_get_clear_errors_and_never_break_the_server(server):
    client = server
    status, view = client.call("api/games", "POST", {"board": "petit_menec", "opponent": "greedy"})
    assert status == 201
    game = view["id"]
    bad = [
        ("api/games", "POST", {"board": "atlantis"}, 400, "board 'atlantis' is not one of"),
        ("api/games", "POST", {"opponent": "os.system"}, 400, "not offered here"),
        ("api/games", "POST", {"opponent": "mcts:sims=99999999"}, 400, "not offered here"),
        ("api/games", "POST", {"seat": 2}, 400, "seat"),
        ("api/games", "POST", {"seat": True}, 400, "seat"),
        ("api/games", "POST", {"seed": -1}, 400, "seed"),
        ("api/games", "POST", {"colour": "red"}, 400, "unknown field"),
        ("api/games", "POST", [1, 2], 400, "expected an object"),
        ("api/games/nonexistent", "GET", None, 404, "no game"),
        (f"api/games/{game}/move", "POST", {"action": "12"}, 400, ""),
        (f"api/games/{game}/move", "POST", {"action": 1.0}, 400, "whole number"),
        (f"api/games/{game}/move", "POST", {"action": -3}, 400, "0.."),
        (f"api/games/{game}/move", "POST", {"action": 144}, 400, "illegal"),
        (f"api/games/{game}/move", "POST", {"move": "x" * 5000}, 400, "characters"),
        (f"api/games/{game}/move", "POST", {"move": "tilt Q"}, 400, "not a move"),
        (f"api/games/{game}/move", "POST", {"move": "c3 Rns", "action": 1}, 400, "a move is"),
        (f"api/games/{game}/move", "POST", {}, 400, "a move is"),
        (f"api/games/{game}/preview", "GET", None, 400, "preview needs"),
        (f"api/games/{game}/preview?move=%C2%B2", "GET", None, 400, ""),
        (f"api/games/{game}/preview?move=decline", "GET", None, 400, "illegal"),
        (f"api/games/{game}/undo", "POST", None, 409, "nothing to undo"),
        (f"api/games/{game}/move", "GET", None, 405, ""),
        ("no/such/page", "GET", None, 404, "nothing at"),
    ]
    for path, method, body, expected, words in bad:
        status, answer = client.call(path, method, body)
        assert status == expected, (path, body, status, answer)
        assert isinstance(answer, dict) and words in answer["error"], (path, answer)
    status, answer = client.call("api/games", "POST", raw=b"{not json")
    assert status == 400 and "not JSON" in answer["error"]
    status, answer = client.call("api/games", "POST", raw=b"x" * 100_000)  # over the body limit
    assert status == 413 and "at most" in answer["error"]
    try:  # far over it: refused unread (400, or the connection closed while it was sent)
        status, _ = client.call("api/games", "POST", raw=b"x" * (4 << 20))
    except OSError:
        status = None
    assert status in (None, 400)
    # The game is as it was, and the server still plays.
    status, view = client.call(f"api/games/{game}")
    assert status == 200 and view["moves"] == [] and view["your_turn"]
    status, view = client.call(f"api/games/{game}/move", "POST", {"move": "c3 Rns"})
    assert status == 200 and view["moves"][0]["text"] == "c3 Rns"


def test_a_page_elsewhere_cannot_reach_a_server_on_this_machine(server):
    request = urllib.request.Request(server.url + "api/options", headers={"Host": "attacker.example"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=30)
    assert err.value.code == 403
    answer = json.loads(err.value.read())  # the reason is said (it used to be lost)
    assert "this machine only" in answer["error"] and "attacker.example" in answer["error"]


def test_cross_site_requests_are_refused_and_change_nothing(server):
    """A text/plain POST from any web page used to create games (and 100 of them evicted a
    student's game); now a change needs JSON and this server's Origin, or the page's token."""
    client, games = server, server.server.games
    status, view = client.call("api/games", "POST", {"board": "small", "opponent": "greedy"})
    assert status == 201
    student = view["id"]
    before = len(games.games)
    own = client.url.rstrip("/")
    refused = [
        ({"Content-Type": "text/plain"}, 415, "must be JSON"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "must be JSON"),
        ({"Content-Type": ""}, 415, "must be JSON"),
        ({"Origin": "http://attacker.example"}, 403, "another site"),
        ({"Origin": "null"}, 403, "another site"),
        ({"Origin": own + ".attacker.example"}, 403, "another site"),
        ({"Origin": None}, 403, "needs an Origin"),
        ({"Origin": None, "X-Carnac-Token": "guess"}, 403, "needs an Origin"),
        ({"Sec-Fetch-Site": "cross-site"}, 403, "another site"),
    ]
    for headers, expected, words in refused:
        sent = {k: v for k, v in headers.items() if v is not None}
        if headers.get("Origin", "") is None:
            request = urllib.request.Request(
                client.url + "api/games",
                data=b'{"board": "small"}',
                headers={"Content-Type": "application/json", **{k: v for k, v in sent.items() if k != "Origin"}},
            )
            try:
                urllib.request.urlopen(request, timeout=30)
                status, answer = 200, {}
            except urllib.error.HTTPError as err:
                status, answer = err.code, json.loads(err.read())
        else:
            status, answer = client.call("api/games", "POST", {"board": "small"}, headers=sent)
        assert status == expected and words in answer["error"], (headers, status, answer)
        for path in (f"api/games/{student}/move", f"api/games/{student}/undo"):
            if headers.get("Origin", "") is not None:
                status, _ = client.call(path, "POST", {"move": "a1 Rns"}, headers=sent)
                assert status == expected, (path, headers, status)
    assert len(games.games) == before and student in games.games
    assert client.call(f"api/games/{student}")[1]["moves"] == []
    # the page's own token, without an Origin (a client that sends none), is let through
    request = urllib.request.Request(
        client.url + "api/games",
        data=b'{"board": "small"}',
        headers={"Content-Type": "application/json", "X-Carnac-Token": games.token},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.status == 201
    status, page = client.call("")
    assert status == 200 and f'content="{games.token}"' in page


def test_nothing_may_frame_the_page(server):
    for path in ("", "api/options", "nothing/here"):
        request = urllib.request.Request(server.url + path)
        try:
            answer = urllib.request.urlopen(request, timeout=30)
        except urllib.error.HTTPError as err:
            answer = err
        assert answer.headers["X-Frame-Options"] == "DENY"
        assert "frame-ancestors 'none'" in answer.headers["Content-Security-Policy"]
        assert answer.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    ("name", "loopback", "allowed"),
    [
        ("localhost", True, True),
        ("127.0.0.1", True, True),
        ("127.0.0.2", True, True),
        ("127.255.255.254", True, True),
        ("[::1]", True, True),
        ("::1", True, True),
        ("LOCALHOST.", True, True),
        ("attacker.example", True, False),
        ("127.0.0.1.attacker.example", True, False),
        ("localhost.attacker.example", True, False),
        ("10.0.0.1", True, False),
        ("", True, False),
        ("10.0.0.1", False, True),
        ("myhost", False, True),
        ("attacker.example", False, False),
    ],
)
def test_the_host_check_covers_every_loopback_address(name, loopback, allowed):
    require("tornado", "the serve extra")
    from carnac_env.serve.limits import host_allowed

    assert host_allowed(name, loopback, frozenset({"myhost"})) is allowed


@pytest.mark.parametrize("host", ["127.0.0.2", "127.1", "localhost"])
def test_a_server_on_any_loopback_address_refuses_other_hosts(host):
    """With --host 127.0.0.2 or 127.1 the Host check used to be off (Host: attacker.example got
    200), which opened the server to DNS rebinding."""
    require("tornado", "the serve extra")
    from carnac_env.serve import Server, is_loopback

    assert is_loopback(host)
    with Server(host=host, port=0, agents=["greedy"], boards=["small"]) as running:
        assert running.loopback
        request = urllib.request.Request(running.url + "api/options", headers={"Host": "attacker.example"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request, timeout=30)
        assert err.value.code == 403
        status, _ = Client(running.url).call("api/options")
        assert status == 200


def test_small_faults_are_clear_errors(server):
    client = server
    status, answer = client.call("api/games", "POST", raw=b"[" * 16000)  # was a 500 (RecursionError)
    assert status == 400 and "not JSON" in answer["error"]
    for raw in (b'{"seat": NaN}', b'{"seed": ' + b"9" * 5000 + b"}", b'{"seat": Infinity}'):
        status, answer = client.call("api/games", "POST", raw=raw)
        assert status == 400 and "not JSON" in answer["error"], raw[:20]
    status, answer = client.call("api/games", "POST", {"seat": 1.0})  # was accepted
    assert status == 400 and "seat=1.0" in answer["error"]
    status, answer = client.call("100%25done")  # the 404 text used to show %%
    assert status == 404 and answer["error"].startswith("nothing at /100%25done;")
    assert "%%" not in answer["error"]


class BlockedAgent:
    """An agent that thinks until the test lets it move (the first legal action)."""

    go = threading.Event()
    started = threading.Event()

    def __init__(self, seed: int = 0) -> None:
        pass

    def memory_need(self, board: Any) -> int:
        return 0  # it keeps nothing (carnac serve refuses an agent that does not say)

    def act(self, state: Any) -> int:
        from carnac_env.agents import observe

        BlockedAgent.started.set()
        assert BlockedAgent.go.wait(60)
        return int(np.flatnonzero(observe(state)["action_mask"])[0])


def test_the_server_answers_while_an_agent_thinks(server):
    client = server
    BlockedAgent.go.clear()
    BlockedAgent.started.clear()
    status, view = client.call(
        "api/games", "POST", {"board": "small", "opponent": "test_serve.BlockedAgent", "seat": 1}
    )
    assert status == 201 and view["thinking"]  # Red, the agent, moves first
    assert BlockedAgent.started.wait(30)
    try:
        # The agent is stuck in its thread; the server still answers, and says so.
        status, page = client.call("")
        assert status == 200 and "<title>Carnac" in page
        status, again = client.call(f"api/games/{view['id']}")
        assert status == 200 and again["thinking"] and again["moves"] == []
        status, answer = client.call(f"api/games/{view['id']}/move", "POST", {"move": "decline"})
        assert status == 409 and "thinking" in answer["error"]
        status, other = client.call("api/games", "POST", {"board": "small", "opponent": "random"})
        assert status == 201 and other["your_turn"]
    finally:
        BlockedAgent.go.set()
    view = client.wait(view["id"])
    assert view["moves"][0]["player"] == "Red" and view["your_turn"]


@pytest.mark.parametrize("opponent", ["greedy", "mcts:sims=40", "az:sims=8"])
def test_a_whole_game_against_each_kind_of_agent(server, opponent):
    client = server
    rng = np.random.default_rng(0)
    status, view = client.call("api/games", "POST", {"board": "petit_menec", "opponent": opponent, "seat": 1})
    assert status == 201
    game = view["id"]
    while True:
        view = client.wait(game)
        assert not view["agent_error"], view["agent_error"]
        if view["result"] is not None:
            break
        assert view["your_turn"], {k: view[k] for k in ("thinking", "agent_error", "to_act", "moves") if k in view}
        choices = [o["action"] for p in view["placements"] for o in p["orientations"]] or [
            a["action"] for a in view["answers"]
        ]
        status, view = client.call(f"api/games/{game}/move", "POST", {"action": int(rng.choice(choices))})
        assert status == 200, view
    status, record = client.call(f"api/games/{game}/record")
    state = GameRecord.from_dict(record).replay()
    assert state.is_over and len(record["moves"]) == len(view["moves"])
    assert view["result"]["reason"] and view["score"]["bga"] == list(state.result().scores)


# --------------------------------------------------------------------------- in a real browser
def test_a_whole_game_with_clicks_in_a_headless_browser(server):
    from _browser import headless_browser as _browser

    driver = _browser()
    try:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select, WebDriverWait

        wait = WebDriverWait(driver, 60)
        driver.get(server.url + "?board=petit_menec&opponent=greedy")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#opponent option"))
        Select(driver.find_element(By.ID, "seat")).select_by_value("0")
        driver.find_element(By.ID, "start").click()

        def settled(d: Any) -> bool:  # the agent not thinking, and something to do or the end
            if not d.find_element(By.ID, "thinking").get_attribute("hidden"):
                return False
            return bool(
                d.find_elements(By.CSS_SELECTOR, "#targets rect.place")
                or d.find_elements(By.CSS_SELECTOR, "#answer-buttons button")
                or d.find_element(By.ID, "result").is_displayed()
            )

        def moves() -> int:
            return len(driver.find_elements(By.CSS_SELECTOR, "#moves li"))

        decisions, undone = 0, False
        while True:
            wait.until(settled)
            if driver.find_element(By.ID, "result").is_displayed():
                break
            score = driver.find_element(By.ID, "score-line").text
            assert score.startswith("Dolmens now: Red ") and "BGA" in score
            assert driver.find_element(By.ID, "reason").text
            squares = driver.find_elements(By.CSS_SELECTOR, "#targets rect.place")
            if squares:  # place: a square, an orientation (previewed), then Place
                before = moves()
                squares[(7 * decisions) % len(squares)].click()
                orientations = driver.find_elements(By.CSS_SELECTOR, "button.orientation")
                assert len(orientations) == 4
                orientations[decisions % 4].click()
                wait.until(lambda d: d.find_element(By.ID, "place").is_enabled())
                said = driver.find_element(By.ID, "preview-text").text
                if said.startswith("Then greedy may tilt it"):  # the preview: the megalith ringed, its tilts
                    assert driver.find_elements(By.CSS_SELECTOR, "#pieces .pending")
                    assert driver.find_elements(By.CSS_SELECTOR, "#pieces .preview")
                else:
                    assert said == "Then it cannot be tilted: it stands for good."
                driver.find_element(By.ID, "place").click()
                wait.until(lambda d, n=before: moves() > n)
            else:  # answer the megalith the agent placed: click where a tilt lands, or decline
                before = moves()
                tilts = driver.find_elements(By.CSS_SELECTOR, "#targets rect.answer")
                if tilts and decisions % 3:
                    tilts[0].click()
                else:
                    driver.find_elements(By.CSS_SELECTOR, "#answer-buttons button")[-1].click()  # Decline
                wait.until(lambda d, n=before: moves() > n)
            decisions += 1
            if decisions == 4 and not undone:  # take back one decision: the move list shrinks
                wait.until(settled)
                before = moves()
                driver.find_element(By.ID, "undo").click()
                wait.until(lambda d, n=before: moves() < n)
                undone = True
            assert decisions < 200
        result = driver.find_element(By.ID, "result").text
        assert result.startswith("Game over: ") and "(" in result
        href = driver.find_element(By.ID, "download").get_attribute("href")
        record = driver.execute_async_script(
            "var done = arguments[arguments.length - 1];"
            "fetch(arguments[0]).then(function (r) { return r.text(); }).then(done);",
            href,
        )
        state = GameRecord.from_json(record).replay()
        assert state.is_over and len(GameRecord.from_json(record).moves) == moves()
        assert ("a draw" in result) == (state.result().winner is None)
        assert ("you win" in result) == (state.result().winner == 0)
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        driver.quit()


def test_a_page_elsewhere_can_neither_frame_the_game_nor_create_one(server, tmp_path):
    """In a real browser: a page from another origin frames the server (refused: frame-ancestors)
    and posts to it as a form would, text/plain (refused: no game is created)."""
    from _browser import headless_browser as _browser

    before = len(server.server.games.games)
    page = tmp_path / "elsewhere.html"
    page.write_text(
        "<!DOCTYPE html><html><body>"
        f'<iframe id="frame" src="{server.url}" width="400" height="300"></iframe>'
        "<script>window.posted = 'pending';"
        f"fetch('{server.url}api/games', {{method: 'POST', mode: 'no-cors', body: '{{}}',"
        " headers: {'Content-Type': 'text/plain'}}).then(function () { window.posted = 'sent'; },"
        " function () { window.posted = 'failed'; });</script></body></html>",
        encoding="utf-8",
    )
    driver = _browser()
    try:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        driver.get(page.resolve().as_uri())
        WebDriverWait(driver, 30).until(lambda d: d.execute_script("return window.posted") != "pending")
        driver.switch_to.frame(driver.find_element(By.ID, "frame"))
        assert not driver.find_elements(By.ID, "start")  # the game page did not load in the frame
        driver.switch_to.default_content()
    finally:
        driver.quit()
    assert len(server.server.games.games) == before


# --------------------------------------------------------------------------- the command
def test_carnac_serve_prints_where_to_play_and_serves_the_page():
    import os
    import re
    import signal
    import subprocess
    import sys

    require("tornado", "the serve extra: pip install -e '.[serve]'")
    help_text = subprocess.run(
        [sys.executable, "-m", "carnac_env.cli", "serve", "--help"], capture_output=True, text=True, timeout=120
    ).stdout
    assert "127.0.0.1" in help_text and "--agents" in help_text and "\naz " in help_text
    assert "--memory" in help_text and "(default 1024)" in help_text  # the bound, stated
    process = subprocess.Popen(
        [sys.executable, "-m", "carnac_env.cli", "serve", "--port", "0", "--agents", "greedy,random"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"},
        # Ctrl-C as a terminal sends it: a suite started in the background by a shell without job
        # control inherits SIGINT ignored, and so would the server (which then cannot be stopped)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        line = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line + process.stderr.read()
        status, options = Client(url.group(0)).call("api/options")
        assert status == 200 and options["agents"] == ["greedy", "random"]
    finally:
        process.send_signal(signal.SIGINT)
        try:  # 0.3 s on a quiet machine
            _, err = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:  # say where it hangs: faulthandler dumps every thread on SIGABRT
            process.send_signal(signal.SIGABRT)
            _, err = process.communicate(timeout=60)
            pytest.fail(f"carnac serve did not stop within 120 s of Ctrl-C; its threads:\n{err[-6000:]}")
    assert process.returncode == 0 and "Traceback" not in err, err


def test_a_bad_setting_is_refused_before_serving():
    require("tornado", "the serve extra: pip install -e '.[serve]'")
    from carnac_env.cli import main
    from carnac_env.serve import Server

    with pytest.raises(CarnacError, match="no boards"):
        Server(port=0, boards=[])
    with pytest.raises(CarnacError, match="no agents"):
        Server(port=0, agents=[])
    assert main(["serve", "--port", "0", "--boards", ","]) == 2  # used to serve a 500 for every game
    assert main(["serve", "--port", "0", "--agents", ","]) == 2

    with pytest.raises(CarnacError, match="unknown agent"):
        Server(port=0, agents=["greedy", "nonsense"])
    with pytest.raises(CarnacError, match="atlantis"):
        Server(port=0, boards=["atlantis"])
    with Server(port=0, agents=["random"]) as first, pytest.raises(CarnacError, match="cannot listen"):
        Server(port=first.port, agents=["random"]).start()


def test_without_tornado_the_error_names_the_extra():
    import subprocess
    import sys

    code = "import sys; sys.modules['tornado'] = None; from carnac_env.cli import main; sys.exit(main(['serve']))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "carnac serve needs Tornado" in done.stderr and "[serve]" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_board_made_on_the_page_is_offered_within_the_ledger(server):
    """POST /api/boards makes a custom board: it is offered under its spec with the agents whose
    memory fits, a game starts on it, the same board made twice is one board, and a bad spec or
    an impossible board is a 400 naming the bad part, with nothing added."""
    client = server
    status, made = client.call("api/boards", "POST", {"board": "7x9:megaliths=30,min_dolmen=4"})
    assert status == 201, made
    assert made["name"] == "7x9:megaliths=30,min_dolmen=4" and (made["rows"], made["cols"], made["megaliths"]) == (
        7,
        9,
        30,
    )
    assert "greedy" in made["agents"]
    assert client.call("api/boards", "POST", {"board": " 7x9:min_dolmen=4,megaliths=30 "})[1]["name"] == made["name"]
    names = [b["name"] for b in client.call("api/options")[1]["boards"]]
    assert names.count(made["name"]) == 1
    status, game = client.call("api/games", "POST", {"board": made["name"], "opponent": "greedy", "seat": 0})
    assert (
        status == 201
        and game["board"]["name"] == made["name"]
        and (game["board"]["rows"], game["board"]["cols"]) == (7, 9)
    )
    for body, words in (
        ({"board": "7x99"}, "cols=99; expected a whole number in 1..64"),
        ({"board": "7x9:megaliths=٣"}, "ASCII digits"),
        ({"board": 7}, "a board is a text"),
        ({"size": "7x9"}, '{"board": "7x9:megaliths=30"}'),
    ):
        status, answer = client.call("api/boards", "POST", body)
        assert status == 400 and words in answer["error"], (body, answer)
    assert [b["name"] for b in client.call("api/options")[1]["boards"]] == names


def test_the_boards_made_on_the_page_are_bounded(server):
    from carnac_env.serve.games import MAX_MADE_BOARDS

    client = server
    for k in range(MAX_MADE_BOARDS):
        assert client.call("api/boards", "POST", {"board": f"5x{5 + k}"})[0] == 201
    status, answer = client.call("api/boards", "POST", {"board": "9x9"})
    assert status == 400 and f"{MAX_MADE_BOARDS} boards have been made" in answer["error"]
    assert client.call("api/boards", "POST", {"board": "5x5"})[0] == 201  # one made already is still there
