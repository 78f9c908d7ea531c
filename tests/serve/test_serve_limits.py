"""``carnac serve`` under load and abuse: its memory bound, its queue, stale and evicted work,
idle and half-open connections, and an HTTP fuzz (hypothesis) that checks every answer, the
memory ledger, and that another client is still served afterwards."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import socket
import subprocess
import sys
import time
from typing import Any

import pytest
from _frameworks import require

require("tornado", "the serve extra: pip install -e '.[serve]'")

from _slow_agents import Gate, Sleeper  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_serve import Client  # noqa: E402

from carnac_env.agents import make  # noqa: E402
from carnac_env.core.boards import make_board  # noqa: E402
from carnac_env.core.game import GameState  # noqa: E402
from carnac_env.errors import CarnacError  # noqa: E402
from carnac_env.serve import Server, connections, handlers, limits  # noqa: E402
from carnac_env.serve.budget import held_bytes, oversized, search_need, tree_bytes  # noqa: E402
from carnac_env.serve.games import Games  # noqa: E402

MB = 1 << 20


def wait_until(condition: Any, timeout: float = 60, what: str = "") -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"waited {timeout:g} s for {what or condition}")
        time.sleep(0.02)


def new_game(client: Client, **body: Any) -> dict:
    status, view = client.call("api/games", "POST", body)
    assert status == 201, view
    return view


# --------------------------------------------------------------------------- memory
@pytest.mark.parametrize(
    ("spec", "board"), [("mcts:sims=300", "small"), ("mcts:sims=200:reuse=false", "medium"), ("az:sims=24", "medium")]
)
def test_search_need_bounds_what_a_search_really_takes(spec, board):
    """The estimate made before an agent is built bounds, move by move over a whole game, the
    numpy memory its search allocates at its peak (tracemalloc) and what its tree keeps, with
    the server's rule: a tree grown past one move's room is forgotten after its move."""
    import tracemalloc

    agent = make(spec, seed=3)
    need = search_need(agent, make_board(board))
    assert need is not None and need.kept <= need.peak
    state = GameState(board)
    trimmed = 0
    warm, first = make(spec), GameState(board)  # compile first: the compiler's memory is not the search's
    for _ in range(6):  # a few moves of the agent's own, for the paths of a reused tree too
        first.apply(warm.choose(first) if first.to_act == 0 else first.legal_actions()[0])
    tracemalloc.start()
    try:
        while not state.is_over:
            if state.to_act == 0:
                tracemalloc.reset_peak()
                start = tracemalloc.get_traced_memory()[0]
                action = agent.choose(state)
                peak = tracemalloc.get_traced_memory()[1] - start
                assert peak <= need.peak, (state.placed, peak, need.peak)
                assert tree_bytes(agent) <= 2 * need.kept
                if oversized(agent, need):
                    trimmed += 1
                    agent = make(spec, seed=3)  # what the server does: the tree is forgotten
            else:
                action = state.legal_actions()[0]
            state.apply(action)
    finally:
        tracemalloc.stop()
    assert tree_bytes(agent) > 0


def test_every_offered_agent_fits_the_cap_and_the_defaults_are_offered_everywhere():
    server = Server(port=0)  # not started: the offer is made at construction
    games = server.games
    assert games.ledger.limit == 1024 * MB and games.ledger.cap == 512 * MB
    assert not games.refused  # mcts at 5000 sims fits le_menec's cap
    for (spec, board), need in games.needs.items():
        assert need is None or need.peak <= games.ledger.cap
        assert spec in games.offered[board]
    mcts = games.needs["mcts", "le_menec"]
    assert 100 * MB < mcts.kept < 130 * MB  # the 118 MB tree (5,000 x 773)
    games.close()


def test_an_agent_over_the_cap_is_not_offered_on_that_board():
    with Server(port=0, agents=["greedy", "mcts"], boards=["small", "le_menec"], memory=256) as server:
        client = Client(server.url)
        status, options = client.call("api/options")
        offered = {b["name"]: b["agents"] for b in options["boards"]}
        assert offered == {"small": ["greedy", "mcts"], "le_menec": ["greedy"]}
        status, answer = client.call("api/games", "POST", {"board": "le_menec", "opponent": "mcts"})
        assert status == 400 and "not offered on le_menec" in answer["error"] and "MB" in answer["error"]
        assert server.games.games == {}
    with pytest.raises(CarnacError, match="no agent fits any board"):
        Server(port=0, agents=["mcts"], boards=["le_menec"], memory=64)
    with pytest.raises(CarnacError, match="time budget"):
        Server(port=0, agents=["mcts:seconds=1"])


def test_many_search_games_keep_the_trees_under_the_bound():
    """The issue's attack, scaled down: games that each reserve a 37 MB tree, far more than the
    bound holds; the trees kept stay under it and every game still gets its agent's move."""
    spec = "mcts:sims=1500:reuse=false"
    with Server(port=0, agents=[spec], boards=["le_menec"], workers=1, memory=100) as server:
        games = server.games
        need = games.needs[spec, "le_menec"]
        assert need.kept > 30 * MB and 12 * need.kept > 4 * games.ledger.limit
        client = Client(server.url)
        ids = [new_game(client, board="le_menec", opponent=spec, seat=1)["id"] for _ in range(12)]
        for game in ids:
            view = client.wait(game)
            assert len(view["moves"]) == 1 and not view["agent_error"]
            trees = [held_bytes(live.agent) for live in games.games.values() if live.agent is not None]
            assert sum(trees) <= games.ledger.limit
        trees = [held_bytes(live.agent) for live in games.games.values() if live.agent is not None]
        assert 1 <= len(trees) <= 2  # what the bound holds; the other games forgot theirs
        assert games.memory()["kept"] == sum(trees) and games.memory()["running"] == 0
        # a game whose tree was forgotten plays on: its agent starts afresh
        first = ids[0]
        assert games.games[first].agent is None
        status, view = client.call(f"api/games/{first}/move", "POST", {"move": "decline"})  # Red places again
        assert status == 200, view
        view = client.wait(first)
        assert len(view["moves"]) >= 3 and not view["agent_error"]


def test_evicted_and_idle_games_forget_their_trees():
    with Server(port=0, agents=["mcts:sims=200"], boards=["small"], idle_seconds=0.5) as server:
        games = server.games
        games.max_games = 3
        client = Client(server.url)
        ids = [new_game(client, board="small", opponent="mcts:sims=200", seat=1)["id"] for _ in range(5)]
        for game in ids[2:]:
            client.wait(game)
        assert list(games.games) == ids[2:]  # the two oldest were evicted ...
        assert set(games.ledger.kept) <= set(ids[2:])  # ... and keep nothing
        # idle for more than half a second: every tree is forgotten
        wait_until(lambda: games.memory()["kept"] == 0, 30, "the idle games to forget their trees")
        assert all(live.agent is None for live in games.games.values())


# --------------------------------------------------------------------------- stale work, queue
def test_move_and_undo_pairs_leave_at_most_one_stale_search():
    """1,000 move+undo pairs used to queue 1,000 searches (the next new game took 31 s); now a
    game has at most one search running, and a queued one searches the position as it is."""
    sleeper = "_slow_agents.Sleeper:seconds=1"
    with Server(port=0, agents=[sleeper, "greedy"], boards=["small"], workers=1) as server:
        client = Client(server.url)
        game = new_game(client, board="small", opponent=sleeper)["id"]
        Sleeper.calls = 0
        start = time.monotonic()
        for _ in range(40):
            status, view = client.call(f"api/games/{game}/move", "POST", {"move": "a1 Rns"})
            assert status == 200, view
            status, view = client.call(f"api/games/{game}/undo", "POST", {})
            assert status == 200 and view["moves"] == [], view
        elapsed = time.monotonic() - start
        other = new_game(client, board="small", opponent="greedy", seat=1)["id"]
        assert len(client.wait(other, timeout=30)["moves"]) == 1
        # one search at a time, one second each, while the pairs were sent, and one after: on a
        # busy machine the 40 pairs take longer, so more searches end meanwhile (it was 40)
        assert Sleeper.calls <= 2 + int(elapsed), (Sleeper.calls, elapsed)
        wait_until(lambda: not server.games.ledger.running, 30, "the stale search to end")
        assert client.call(f"api/games/{game}")[1]["moves"] == []


def test_a_full_queue_answers_503_with_retry_after_and_plays_nothing(caplog):
    Gate.shut()
    gate = "_slow_agents.Gate"
    with Server(port=0, agents=[gate, "greedy"], boards=["small"], workers=1, max_queue=2) as server:
        client = Client(server.url)
        try:
            playing = new_game(client, board="small", opponent="greedy")["id"]
            new_game(client, board="small", opponent=gate, seat=1)  # thinks (at the gate)
            assert Gate.entered.wait(30)
            new_game(client, board="small", opponent=gate, seat=1)  # waits
            new_game(client, board="small", opponent=gate, seat=1)  # waits: the queue is full
            before = len(server.games.games)
            status, answer = client.call("api/games", "POST", {"board": "small", "opponent": gate, "seat": 1})
            assert status == 503 and "busy" in answer["error"] and len(server.games.games) == before
            status, answer = client.call(f"api/games/{playing}/move", "POST", {"move": "a1 Rns"})
            assert status == 503 and client.call(f"api/games/{playing}")[1]["moves"] == []
            request = client.url + f"api/games/{playing}/move"
            import urllib.error
            import urllib.request

            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(
                    urllib.request.Request(
                        request,
                        data=b'{"move": "a1 Rns"}',
                        headers={"Content-Type": "application/json", "Origin": client.url.rstrip("/")},
                    ),
                    timeout=30,
                )
            assert err.value.code == 503 and err.value.headers["Retry-After"] == str(limits.RETRY_AFTER)
            status, _ = client.call(f"api/games/{playing}")  # reading is never refused
            assert status == 200
        finally:
            Gate.gate.set()
        wait_until(lambda: not server.games.ledger.running and not server.games.ledger.waiting, 60, "the queue")
        status, _ = client.call(f"api/games/{playing}/move", "POST", {"move": "a1 Rns"})
        assert status == 200
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_an_evicted_game_whose_search_ends_later_is_dropped_quietly(caplog):
    """The finished search of an evicted game used to raise KeyError in a callback."""
    Gate.shut()
    gate = "_slow_agents.Gate"
    with Server(port=0, agents=[gate, "greedy"], boards=["small"], workers=1) as server:
        server.games.max_games = 1
        client = Client(server.url)
        try:
            evicted = new_game(client, board="small", opponent=gate, seat=1)["id"]
            assert Gate.entered.wait(30)
            kept = new_game(client, board="small", opponent="greedy", seat=1)["id"]
            assert client.call(f"api/games/{evicted}")[0] == 404
        finally:
            Gate.gate.set()
        assert Gate.left.wait(30)
        assert len(client.wait(kept)["moves"]) == 1
        wait_until(lambda: not server.games.ledger.running, 30, "the evicted game's search to end")
        assert evicted not in server.games.ledger.kept
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


# --------------------------------------------------------------------------- connections
def half_open(url: str, count: int) -> list[socket.socket]:
    """``count`` connections that each send half a request header, then nothing."""
    host, port = url.split("//")[1].rstrip("/").rsplit(":", 1)
    sockets = []
    for _ in range(count):
        sock = socket.create_connection((host, int(port)), timeout=10)
        sock.sendall(b"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        sockets.append(sock)
    return sockets


def test_a_connection_that_stalls_is_closed_after_the_timeout():
    with Server(port=0, agents=["greedy"], boards=["small"], timeout=0.5) as server:
        (sock,) = half_open(server.url, 1)
        sock.settimeout(10)
        started = time.monotonic()
        try:
            data = sock.recv(100)
        except ConnectionResetError:
            data = b""
        assert data == b"" and time.monotonic() - started < 8  # closed by the server, not by us
        sock.close()
        assert Client(server.url).call("api/options")[0] == 200


def test_half_open_connections_do_not_shut_out_another_client(caplog):
    """1,100 half-sent headers used to stop the server answering anyone; now the oldest
    connection is closed for each new one, above a limit, and nothing is logged."""
    with Server(port=0, agents=["greedy"], boards=["small"], max_connections=40) as server:
        sockets = half_open(server.url, 400)
        try:
            status, options = Client(server.url).call("api/options")
            assert status == 200 and options["agents"] == ["greedy"]
            assert len(server.http.open_streams) <= 40
        finally:
            for sock in sockets:
                sock.close()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


def test_with_a_low_file_limit_the_server_answers_and_does_not_flood_its_log(tmp_path):
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))\n"
        "from carnac_env.cli import main\n"
        "sys.exit(main(['serve', '--port', '0', '--agents', 'greedy', '--boards', 'small']))\n"
    )
    log = tmp_path / "stderr.txt"
    with open(log, "wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            line = process.stdout.readline()
            url = line.split("play at ")[1].split()[0]
            sockets = half_open(url, 300)  # beyond the process's 64 descriptors
            try:
                assert Client(url).call("api/options")[0] == 200
            finally:
                for sock in sockets:
                    sock.close()
        finally:
            process.terminate()
            process.wait(timeout=60)
    text = log.read_text()
    assert "Too many open files" not in text and len(text.splitlines()) < 5, text[:2000]


def test_running_out_of_descriptors_pauses_accepting_with_one_warning(caplog):
    """Where accept() fails (EMFILE), the server pauses accepting and warns once a minute,
    instead of one traceback per turn of its loop (467,000 in 75 s)."""

    class Exhausted(socket.socket):
        tries = 0

        def accept(self):  # type: ignore[override]
            Exhausted.tries += 1
            raise OSError(errno.EMFILE, "Too many open files")

    games = Games(["greedy"], ["small"])
    listener = Exhausted(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)

    async def main() -> None:
        server = connections.listen(handlers.make_app(games), [listener])
        client = socket.create_connection(listener.getsockname())
        await asyncio.sleep(2.0)
        server.stop_accepting()
        client.close()

    with caplog.at_level(logging.WARNING):
        asyncio.run(main())
    games.close()
    warnings = [r for r in caplog.records if "cannot accept" in r.getMessage()]
    assert len(warnings) == 1 and "EMFILE" in warnings[0].getMessage()
    assert 2 <= Exhausted.tries <= 10  # a try every half second, not a busy loop


# --------------------------------------------------------------------------- the fuzz
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
FIELDS = st.dictionaries(
    st.sampled_from(["board", "opponent", "seat", "seed", "action", "move", "colour"]),
    st.none()
    | st.booleans()
    | st.integers(-5, 1000)
    | st.floats(allow_nan=False)
    | st.sampled_from(["small", "petit_menec", "greedy", "mcts:sims=30", "random", "atlantis", "a1 Rns", "decline"])
    | st.text(max_size=40),
    max_size=4,
)
NASTY = [b"[" * 16000, b'{"seed": ' + b"9" * 5000 + b"}", b'{"seat": NaN}', b"\xff\xfe", b'{"action": 1e400}']
BODY = st.one_of(
    st.none(),
    FIELDS,
    JSON,
    st.binary(max_size=300).map(lambda b: ("raw", b)),
    st.sampled_from(NASTY).map(lambda b: ("raw", b)),
)
PATHS = st.sampled_from(["", "api/options", "api/games", "G", "G/move", "G/undo", "G/record", "G/preview", "X", "nope"])
ALLOWED = {200, 201, 400, 403, 404, 405, 409, 413, 415, 503}


@pytest.fixture(scope="module")
def fuzzed():
    agents = ["greedy", "random", "mcts:sims=30", "az:sims=4"]
    with Server(port=0, agents=agents, boards=["small", "petit_menec"], memory=64) as server:
        client = Client(server.url)
        game = new_game(client, board="petit_menec", opponent="greedy")["id"]
        yield server, client, game


def _request(server: Server, client: Client, game: str, data: Any) -> tuple[int, Any, dict]:
    import urllib.error
    import urllib.request

    method, path, body, content_type, origin, token, host, query = data
    path = {"G": f"api/games/{game}", "X": "api/games/zzzz"}.get(path.split("/")[0], path.split("/")[0]) + (
        "/" + path.split("/", 1)[1] if "/" in path else ""
    )
    if path.endswith("preview"):
        path += "?move=" + urllib.request.quote(query)
    raw = body[1] if isinstance(body, tuple) else (None if body is None else json.dumps(body).encode())
    if method in ("POST", "PUT") and raw is None:
        raw = b""
    headers = {}
    if content_type:
        headers["Content-Type"] = content_type
    if origin == "own":
        headers["Origin"] = client.url.rstrip("/")
    elif origin:
        headers["Origin"] = origin
    if token == "right":
        headers[limits.TOKEN_HEADER] = server.games.token
    elif token:
        headers[limits.TOKEN_HEADER] = token
    if host:
        headers["Host"] = host
    request = urllib.request.Request(client.url + path, method=method, data=raw, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read(), dict(answer.headers)
    except urllib.error.HTTPError as err:
        return err.code, err.read(), dict(err.headers)


REQUESTS = st.tuples(
    st.sampled_from(["GET", "POST", "PUT", "DELETE"]),
    PATHS,
    BODY,
    st.sampled_from(["application/json", "application/json; charset=utf-8", "text/plain", "", "APPLICATION/JSON"]),
    st.sampled_from(["own", "", "http://evil.example", "null"]),
    st.sampled_from(["", "right", "wrong"]),
    st.sampled_from(["", "", "", "attacker.example", "localhost", "127.0.0.5"]),
    st.text(max_size=20),
)


def _fuzz(fuzzed: Any, requests: list) -> None:
    server, client, game = fuzzed
    for data in requests:
        status, text, headers = _request(server, client, game, data)
        assert status in ALLOWED, (data, status, text[:300])
        if status >= 400:
            answer = json.loads(text)
            assert isinstance(answer["error"], str) and answer["error"] and answer["status"] == status
        assert headers.get("X-Frame-Options") == "DENY"
        if status in (200, 201) and data[0] not in ("GET",):  # a change got through: it was the page's kind
            assert data[3].split(";")[0].lower() == "application/json" and data[6] in ("", "localhost", "127.0.0.5")
            assert data[4] == "own" or (data[4] == "" and data[5] == "right")
        memory = server.games.memory()
        assert memory["kept"] + memory["running"] <= memory["limit"]
    # another client is still served: a new game, a move, the agent's answer
    other = Client(client.url)
    view = new_game(other, board="small", opponent="greedy", seat=1)
    view = other.wait(view["id"])
    assert len(view["moves"]) == 1 and view["your_turn"]
    status, view = other.call(f"api/games/{view['id']}/move", "POST", {"action": view["answers"][-1]["action"]})
    assert status == 200


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(requests=st.lists(REQUESTS, min_size=1, max_size=4))
def test_fuzzed_requests_get_clear_answers_and_the_server_goes_on(fuzzed, requests):
    _fuzz(fuzzed, requests)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(requests=st.lists(REQUESTS, min_size=1, max_size=12))
def test_fuzzed_requests_at_length(fuzzed, requests):
    _fuzz(fuzzed, requests)


def test_oversized_is_what_the_ledger_trims():
    agent = make("mcts:sims=100", seed=1)
    need = search_need(agent, make_board("small"))
    assert not oversized(agent, need)  # no search yet
    agent.choose(GameState("small"))
    assert not oversized(agent, need) and tree_bytes(agent) <= need.kept


def test_the_server_sizes_trees_with_the_searchs_own_function(monkeypatch):
    """What the server counts for a tree is :func:`carnac_env.search.tree.tree_bytes` of the
    room a move needs (no estimate of its own), and that room holds what a fresh search of the
    agent asks for on the first position (the most actions)."""
    from carnac_env.agents.memory import move_capacity
    from carnac_env.search import UCT, Playouts, Search
    from carnac_env.search import tree as search_tree

    for spec, name, lanes in (("mcts:sims=300", "le_menec", 1), ("az:sims=24:lanes=4", "small", 4)):
        board = make_board(name)
        need = search_need(make(spec), board)
        nodes, edges = move_capacity(300 if spec.startswith("mcts") else 24, board)
        assert need.kept == search_tree.tree_bytes(1, nodes, edges, 2 * board.megaliths + 2, lanes)
    board = make_board("le_menec")
    search = Search(board, Playouts(), UCT(), seed=0)
    search.set_games([GameState(board)])
    assert search.tree_bytes(300) <= search_need(make("mcts:sims=300"), board).kept
    monkeypatch.setattr(search_tree, "tree_bytes", lambda *sizes: 12345)
    assert search_need(make("mcts:sims=300"), board).kept == 12345
