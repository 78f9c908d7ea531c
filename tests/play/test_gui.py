"""The mouse GUI and the render window, headless (SDL's dummy video driver).

The controller is driven by clicks at the pixels where things are drawn, and the pygame
loop (GuiApp) by synthetic pygame mouse events, through whole games on small boards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import numpy as np
import pytest

pygame = pytest.importorskip("pygame")  # the gui extra

from carnac_env.core.actions import orientation_for, tilt_colours  # noqa: E402
from carnac_env.core.boards import make_board  # noqa: E402
from carnac_env.core.game import OVER, PLACE, RESPOND, GameState  # noqa: E402
from carnac_env.core.record import GameRecord  # noqa: E402
from carnac_env.errors import CarnacError  # noqa: E402
from carnac_env.play.gui import GuiApp, GuiController, play_gui  # noqa: E402
from carnac_env.render.image import ImageRenderer  # noqa: E402
from carnac_env.render.style import DOLMEN_LINE  # noqa: E402
from carnac_env.render.window import Window  # noqa: E402


class StandIn:
    """A small seeded opponent: uniform over the legal actions (declines half the time)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.calls = 0

    def act(self, state) -> int:
        self.calls += 1
        legal = state.legal_actions()
        return int(legal[self.rng.integers(len(legal))])


def board_click(controller: GuiController, square: int, dx: float = 0.0, dy: float = 0.0) -> tuple[int, int]:
    """The pixel at the centre of ``square``, moved by (dx, dy) cells."""
    cx, cy = controller.renderer.layout.square_centre(square)
    cell = controller.renderer.layout.cell
    return round(cx + dx * cell), round(cy + dy * cell)


def computer_until_human(controller: GuiController) -> None:
    while not controller.is_over and not controller.human_to_act:
        assert controller.computer_turn() is not None


# --------------------------------------------------------------------------- the controller
def test_place_with_flip_and_turn_like_bga():
    controller = GuiController("petit_menec", StandIn(), seat=0)
    square = 14  # c3
    assert controller.click(*board_click(controller, square)) is None
    assert controller.tentative == (square, 0)  # own colour on top, N/S show it
    assert tilt_colours(0, controller.tentative[1]) == (1, 1, 2)
    controller.click(*board_click(controller, square))  # the top: upside down
    assert tilt_colours(0, controller.tentative[1]) == (2, 1, 2)
    controller.click(*board_click(controller, square, dx=0.33))  # a side: a quarter turn
    assert tilt_colours(0, controller.tentative[1]) == (2, 2, 1)
    # The large copy in the panel works the same way.
    x0, y0, x1, y1 = controller.widget_box
    controller.click((x0 + x1) // 2, (y0 + y1) // 2)
    assert tilt_colours(0, controller.tentative[1]) == (1, 2, 1)
    controller.click((x0 + x1) // 2, y0 + round((y1 - y0) * 0.12))  # its north side
    assert tilt_colours(0, controller.tentative[1]) == (1, 1, 2)
    controller.click(*board_click(controller, square))
    # The frame previews the tentative megalith; the board has not changed yet.
    assert controller.state.kinds[square] == 0
    action = controller.click(*controller.button("place").centre)
    assert action == square * 4 + controller.orientation
    assert controller.env.history == [action]
    assert controller.state.cells[square] == 2  # White on top, as chosen
    assert controller.tentative is None


def test_place_button_needs_a_square_and_occupied_squares_are_refused():
    controller = GuiController("petit_menec", StandIn(), seat=0)
    assert not controller.button("place").enabled
    assert controller.click(*controller.button("place").centre) is None
    controller.click(*board_click(controller, 0))
    controller.key("return")
    assert controller.env.history == [0]
    computer_until_human(controller)
    occupied = next(s for s in range(controller.board.squares) if controller.state.kinds[s])
    if controller.state.phase == PLACE:
        controller.click(*board_click(controller, occupied))
        assert controller.tentative is None
        assert "megalith" in controller.message


def find_respond_position(seed: int = 0) -> GuiController:
    """A controller where the human (White) must tilt or decline."""
    for attempt in range(50):
        controller = GuiController("petit_menec", StandIn(seed + attempt), seat=1)
        computer_until_human(controller)
        if controller.state.phase == RESPOND:
            return controller
    raise AssertionError("no position to respond to")


def test_tilt_by_clicking_a_landing_spot():
    controller = find_respond_position()
    targets = controller.state.tilt_targets()
    direction, (first, second, colour) = next(iter(targets.items()))
    frame = np.asarray(controller.frame())
    assert frame.shape == (controller.height, controller.width, 3)
    assert controller.button("decline").enabled
    action = controller.click(*board_click(controller, second))
    assert action == controller.board.squares * 4 + direction
    state = controller.state
    assert state.kinds[first] == state.kinds[second] == 2
    assert state.cells[first] == state.cells[second] == colour
    # The tilter places next.
    assert controller.human_to_act and state.phase == PLACE


def test_decline_button_and_arrow_keys():
    controller = find_respond_position()
    placer = 1 - controller.seat
    action = controller.click(*controller.button("decline").centre)
    assert action == controller.board.squares * 4 + 4
    assert controller.state.to_act == placer or controller.is_over
    controller = find_respond_position(seed=7)
    direction = next(iter(controller.state.tilt_targets()))
    assert controller.key(["up", "right", "down", "left"][direction]) == controller.board.squares * 4 + direction


def test_clicks_out_of_turn_do_nothing():
    controller = GuiController("petit_menec", StandIn(), seat=1)  # the computer begins
    assert not controller.human_to_act
    assert controller.click(*board_click(controller, 5)) is None
    assert controller.tentative is None
    assert controller.env.history == []


def test_undo_goes_back_to_the_previous_decision_and_further():
    controller = GuiController("petit_menec", StandIn(3), seat=0)
    assert not controller.button("undo").enabled
    positions = []
    for square in (0, 7, 21):
        if not controller.human_to_act:
            break
        positions.append(list(controller.env.history))
        if controller.state.phase == RESPOND:
            controller.click(*controller.button("decline").centre)
        else:
            free = next(s for s in range(square, controller.board.squares) if not controller.state.kinds[s])
            controller.click(*board_click(controller, free))
            controller.click(*controller.button("place").centre)
        computer_until_human(controller)
    assert len(positions) >= 2
    assert controller.button("undo").enabled
    for expected in reversed(positions):
        assert controller.click(*controller.button("undo").centre) is None
        assert controller.env.history == expected
        assert controller.human_to_act
        # The message numbers the move as the move list does (all decisions, both sides).
        assert controller.message.startswith(f"Back to move {len(expected) + 1}:")
        # The env was rebuilt from the moves: the same position as replaying them.
        replayed = GameState(controller.board)
        for action in expected:
            replayed.apply(action)
        assert controller.state == replayed
    assert not controller.undo()
    assert controller.env.history == []


class Gated:
    """An opponent that thinks until the test lets it answer: each call to ``act`` waits for
    its own gate (in the order of the calls) and answers with the first legal action."""

    def __init__(self) -> None:
        self.gates: list[threading.Event] = [threading.Event() for _ in range(8)]
        self.calls = 0

    def act(self, state) -> int:
        gate = self.gates[self.calls]
        self.calls += 1
        assert gate.wait(30), "the test never opened the gate"
        return min(state.legal_actions())


def _answer(controller: GuiController, gate: threading.Event) -> int | None:
    """Open ``gate``, wait (no polling) for the search in flight to finish, and let the
    controller take its answer."""
    future = controller._future
    gate.set()
    future.result(timeout=30)
    return controller.computer_turn()


def test_threaded_computer_and_undo_while_it_thinks():
    """Undo pressed while the computer thinks: the human's decision is taken back at once,
    and the computer's answer to the position that no longer exists is thrown away."""
    opponent = Gated()
    controller = GuiController("petit_menec", opponent, seat=1, threaded=True)
    try:
        assert controller.computer_turn() is None and controller.thinking  # Red opens, in the thread
        assert _answer(controller, opponent.gates[0]) is not None
        assert controller.human_to_act and len(controller.env.history) == 1
        opening = list(controller.env.history)
        decline_or_place(controller)
        decided = list(controller.env.history)
        assert len(decided) == 2 and not controller.human_to_act
        assert controller.computer_turn() is None and controller.thinking  # the computer's second search
        assert controller.undo()  # while it thinks
        assert controller.env.history == opening and controller.human_to_act and not controller.thinking
        assert _stale(controller, opponent.gates[1]) is None  # its answer comes, and is ignored
        assert controller.env.history == opening and controller.human_to_act
        decline_or_place(controller)
        assert controller.env.history == decided
        assert controller.computer_turn() is None and controller.thinking
        answer = _answer(controller, opponent.gates[2])
        assert answer is not None and controller.env.history == [*decided, answer]
        assert opponent.calls == 3
    finally:
        controller.close()


def _stale(controller: GuiController, gate: threading.Event) -> int | None:
    """Let the abandoned search finish (the worker is free again once a no-op submitted after
    it has run: one worker, in order), then ask the controller to play."""
    gate.set()
    controller._executor.submit(lambda: None).result(timeout=30)
    return controller.computer_turn()


def decline_or_place(controller: GuiController) -> None:
    """The human's decision: decline a pending megalith, or place on the first empty square."""
    if controller.state.phase == RESPOND:
        controller.click(*controller.button("decline").centre)
    else:
        free = next(s for s in range(controller.board.squares) if not controller.state.kinds[s])
        controller.click(*board_click(controller, free))
        controller.click(*controller.button("place").centre)


def test_bad_seat_is_refused():
    with pytest.raises(CarnacError, match="seat"):
        GuiController("petit_menec", StandIn(), seat=2)


# --------------------------------------------------------------------------- the pygame loop
def post_click(pos: tuple[int, int]) -> None:
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=1))


def human_clicks(controller: GuiController, rng: np.random.Generator) -> tuple[list[tuple[int, int]], int]:
    """The clicks a person would make for one decision (chosen at random), and the action
    they mean."""
    state = controller.state
    base = controller.board.squares * 4
    if state.phase == RESPOND:
        targets = list(state.tilt_targets().items())
        if rng.random() < 0.6:
            direction, (first, second, _) = targets[rng.integers(len(targets))]
            return [board_click(controller, (first, second)[rng.integers(2)])], base + direction
        return [controller.button("decline").centre], base + 4
    empty = [s for s in range(controller.board.squares) if not state.kinds[s]]
    square = empty[rng.integers(len(empty))]
    top, north_south, _ = tilt_colours(controller.seat, controller.orientation)  # kept from the last placement
    clicks = [board_click(controller, square)]
    if rng.random() < 0.5:
        clicks.append(board_click(controller, square))  # the top: swap the top colour
        top = 3 - top
    if rng.random() < 0.5:
        clicks.append(board_click(controller, square, dy=-0.33))  # the north side: a quarter turn
        north_south = 3 - north_south
    clicks.append(controller.button("place").centre)
    return clicks, square * 4 + orientation_for(controller.seat, top, north_south)


@pytest.mark.parametrize(("board", "seat", "seed"), [("petit_menec", 0, 1), ("petit_menec", 1, 2), ("small", 0, 3)])
def test_whole_game_through_pygame_events(board, seat, seed):
    rng = np.random.default_rng(seed)
    controller = GuiController(board, StandIn(seed), seat=seat, cell=32)
    app = GuiApp(controller, computer_delay=0)
    try:
        assert pygame.display.get_surface().get_size() == (controller.width, controller.height)
        undone = False
        for _ in range(2000):
            app.step()
            if controller.is_over:
                break
            if controller.human_to_act:
                before = len(controller.env.history)
                clicks, meant = human_clicks(controller, rng)
                for pos in clicks:
                    post_click(pos)
                app.step()
                # The clicks made the human's move (the computer may have answered in the same step).
                assert controller.env.history[before] == meant
                if not undone and before >= 4:  # once in the game: undo, then carry on
                    post_click(controller.button("undo").centre)
                    app.step()
                    assert len(controller.env.history) <= before
                    assert controller.human_to_act
                    undone = True
        assert controller.is_over and undone
        state = controller.state
        assert state.phase == OVER
        record = controller.record()
        assert record.meta["agents"][seat] == "you" and record.meta["seats"] == {"you": seat}
        final = GameRecord.from_json(record.to_json()).replay()
        assert final == state
        # The window shows the end: the result in words, the dolmens outlined.
        frame = np.asarray(controller.frame())
        if any(state.result().dolmens):
            assert (frame == DOLMEN_LINE).all(axis=2).any()
        screen = pygame.surfarray.array3d(pygame.display.get_surface()).transpose(1, 0, 2)
        assert np.array_equal(screen, frame)
        post_event = pygame.event.Event(pygame.QUIT)
        pygame.event.post(post_event)
        app.step()
        assert not app.running
    finally:
        app.close()


class QuitAfterFirstMove(StandIn):
    """Plays one move, then closes the window (as a person would) from the search thread."""

    def act(self, env) -> int:
        pygame.event.post(pygame.event.Event(pygame.QUIT))
        return super().act(env)


def test_play_gui_saves_the_record(tmp_path):
    path = tmp_path / "game.json"
    record = play_gui(board="petit_menec", opponent=QuitAfterFirstMove(), seat=1, save=str(path), seed=5)
    assert path.exists()
    loaded = GameRecord.load(path)
    assert loaded.moves == record.moves
    assert len(record.moves) <= 1
    assert loaded.meta["seed"] == 5 and loaded.meta["agents"] == ["QuitAfterFirstMove", "you"]
    loaded.replay()


def test_play_gui_with_a_named_agent_if_available(tmp_path):
    import carnac_env.agents as agents

    agent = agents.make("random", seed=1)

    class Quitting:
        def act(self, env):
            pygame.event.post(pygame.event.Event(pygame.QUIT))
            return agent.act(env)

    record = play_gui(board="petit_menec", opponent=Quitting(), seat=1, save=None, seed=1)
    assert len(record.moves) <= 1


# --------------------------------------------------------------------------- the render window
def test_window_shows_the_same_picture_and_closes():
    state = GameState("petit_menec")
    state.apply(14 * 4)
    window = Window(state.board, cell=40)
    assert not window.is_open
    window.show(state)
    assert window.is_open
    screen = pygame.surfarray.array3d(pygame.display.get_surface()).transpose(1, 0, 2)
    assert np.array_equal(screen, ImageRenderer(state.board, 40).draw(state))
    state.decline()
    window.show(state)  # redraws, stays open
    assert window.is_open
    window.close()
    window.close()
    assert not window.is_open


def test_window_closed_by_the_person_stays_closed():
    state = GameState("petit_menec")
    window = Window("petit_menec")
    window.show(state)
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    window.show(state)
    assert not window.is_open and window.closed_by_user
    window.show(state)  # no window pops up again
    assert not window.is_open


def test_placement_that_cannot_tilt_says_so():
    # On a 1 x 2 board no tilt ever fits (a tilt covers the two squares beyond the megalith).
    board = make_board("custom", rows=1, cols=2, megaliths=2, min_dolmen=1)
    controller = GuiController(board, StandIn(0), seat=0)
    controller.click(*board_click(controller, 0))
    controller.click(*controller.button("place").centre)
    assert "cannot be tilted" in controller.message
    assert controller.message.endswith(f"{controller.opponent_name} places next.")


def test_panels_show_the_live_score_and_who_leads():
    """Each player's panel gives their dolmens now and who leads by the tie-break."""
    controller = GuiController("petit_menec", StandIn(0), seat=0)
    assert controller.player_panel(0)[1] == "0 dolmens"
    # Red stands three megaliths in a row on row 1 (min_dolmen is 3 on petit_menec).
    moves = ["a1 Rns", "decline", "b1 Rns", "decline", "c1 Rns"]
    controller.env.reset(options={"moves": moves})
    state = controller.state
    sizes = state.score_now().dolmens[0]
    assert sizes, "the position should hold a red dolmen"
    head, count = controller.player_panel(0)
    assert head.startswith("Red: you")
    assert count.startswith(f"{len(sizes)} dolmen") and count.endswith("leads")
    assert not controller.player_panel(1)[1].endswith("leads")
    image = np.asarray(controller.frame())
    assert image.shape == (controller.height, controller.width, 3)


# --------------------------------------------------------------------------- no display
def test_display_problem_reads_the_environment():
    from carnac_env.render.window import display_problem

    assert "no display" in display_problem({}, "linux")
    assert display_problem({"DISPLAY": ":0"}, "linux") is None
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert display_problem({"SDL_VIDEODRIVER": "dummy"}, "linux") is None  # chosen on purpose
    assert display_problem({}, "darwin") is None and display_problem({}, "win32") is None


def test_a_window_without_a_display_fails_at_once(monkeypatch):
    """The env's window (render_mode="human", window=True) and the GUI's open through the same
    check: without a display, a CarnacError before pygame's display starts."""
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    with pytest.raises(CarnacError, match=r"no display here.*render_mode='ansi'"):
        Window("small").open()
    assert not pygame.display.get_init()
    import carnac_env

    env = carnac_env.env(board="small", render_mode="human", window=True)
    env.reset()
    with pytest.raises(CarnacError, match="no display here"):
        env.render()


def _play_gui_without(env_changes: dict[str, str]) -> subprocess.CompletedProcess:
    """``carnac play --gui`` with DISPLAY, WAYLAND_DISPLAY and SDL_VIDEODRIVER unset, then ``env_changes``."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}
    env.update(env_changes)
    return subprocess.run(
        [sys.executable, "-m", "carnac_env.cli", "play", "--gui", "--board", "small", "--opponent", "random"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,  # the bug this guards against waited forever
    )


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="a desktop session always has a display there")
def test_play_gui_without_a_display_says_what_to_do():
    done = _play_gui_without({})
    assert done.returncode == 2, (done.stdout, done.stderr)
    message = done.stderr.strip().splitlines()[-1]
    assert message.startswith("carnac: error: cannot open a window: there is no display here")
    for advice in ("carnac play, without --gui", "carnac serve", "where a display is"):
        assert advice in message
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="a desktop session always has a display there")
def test_play_gui_with_an_unreachable_display_fails_too():
    """A DISPLAY that names no server: SDL falls back to drawing off screen, which would be a
    window no one sees; that is refused the same way."""
    done = _play_gui_without({"DISPLAY": ":97"})
    if done.returncode == 0:
        pytest.skip("a display :97 answered here")
    assert done.returncode == 2, (done.stdout, done.stderr)
    message = done.stderr.strip().splitlines()[-1]
    assert "cannot open a window" in message and "carnac serve" in message, message
