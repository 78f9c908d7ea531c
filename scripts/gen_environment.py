"""Generate docs/environment.md, the environment's documentation page, from the real code.

This script lives beside scripts/make_images.py and is not part of the installed package (it
writes into docs/, which only a clone has).

The numbers on the page (action-space sizes, observation shapes and bounds per board, the
action numbers in the worked examples, the infos of a finished game) are computed here by
instantiating the environment and calling the move notation, so the page cannot drift from
the code; ``tests/docs/test_docs.py`` checks that docs/environment.md equals
:func:`environment_page`. After changing the environment, rewrite the page with

    python scripts/gen_environment.py            # writes docs/environment.md
    python scripts/gen_environment.py OUT.md     # or another path
"""

from __future__ import annotations

import sys
from pathlib import Path

import carnac_env
from carnac_env._files import write_text
from carnac_env.core import BOARDS, PLANE_NAMES, make_board
from carnac_env.core.notation import action_to_text, parse_action
from carnac_env.envs.aec import AGENTS, RENDER_MODES, raw_env
from carnac_env.envs.infos import AECInfo, GymInfo, VectorInfo

#: What each observation plane means, keyed by its name in ``PLANE_NAMES``.
PLANE_MEANINGS = {
    "own colour": "1 where the square shows the observing agent's colour from above (a standing megalith's "
    "top end, or either square of a lying megalith's upper face). Fixed by the rules contract.",
    "opponent colour": "1 where the square shows the opponent's colour. Fixed by the rules contract.",
    "standing": "1 where a standing megalith is. Fixed by the rules contract.",
    "lying": "1 on both squares of every lying megalith. Fixed by the rules contract.",
    "awaiting tilt": "1 on the megalith that waits for the tilt-or-decline decision (only while a decision is "
    "pending; all zeros otherwise).",
    "tilt shows own": "1 on the two squares each legal tilt would cover, where that tilt would show the observing "
    "agent's colour. The landing squares identify the direction (north and south cover different squares).",
    "tilt shows opponent": "the same for the legal tilts that would show the opponent's colour.",
    "to act": "all ones when the observing agent is the one to act now, all zeros otherwise (and once the game "
    "is over).",
    "supply": "every square holds the number of megaliths left in the supply (0 to the board's megaliths).",
}

_EXAMPLE_SQUARE = "c4"


def _describe_observation_space(space) -> str:
    """A one-line description of the Dict observation space, read from the space itself."""
    parts = []
    for key in ("observation", "action_mask"):
        box = space[key]
        low, high = int(box.low.min()), int(box.high.max())
        parts.append(f"`{key}`: `Box({box.dtype}, shape {tuple(box.shape)})`, values {low} to {high}")
    return "`Dict` of " + "; ".join(parts)


def _board_table() -> list[str]:
    lines = [
        "| board | rows x cols | megaliths | min dolmen | action space | observation shape | action mask shape |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in BOARDS:
        env = raw_env(board=name)
        board = env.board
        obs_space = env.observation_space(AGENTS[0])
        act_space = env.action_space(AGENTS[0])
        lines.append(
            f"| `{name}` | {board.rows} x {board.cols} | {board.megaliths} | {board.min_dolmen} | "
            f"`Discrete({act_space.n})` | `{tuple(obs_space['observation'].shape)}` | "
            f"`{tuple(obs_space['action_mask'].shape)}` |"
        )
        env.close()
    return lines


def _plane_table() -> list[str]:
    missing = [name for name in PLANE_NAMES if name not in PLANE_MEANINGS]
    if missing:
        raise KeyError(f"observation plane(s) {missing} have no documented meaning in PLANE_MEANINGS")
    lines = ["| plane | name | meaning |", "|---|---|---|"]
    for index, name in enumerate(PLANE_NAMES):
        lines.append(f"| {index} | {name} | {PLANE_MEANINGS[name]} |")
    return lines


def _example_table() -> list[str]:
    board = make_board("medium")
    rows = ["| mover | move | action | how it is computed |", "|---|---|---|---|"]
    square = parse_action(board, f"{_EXAMPLE_SQUARE} Rns", 0) // 4
    r, c = divmod(square, board.cols)
    for mover, agent in enumerate(AGENTS):
        for orientation in range(4):
            action = square * 4 + orientation
            text = action_to_text(board, action, mover)
            assert parse_action(board, text, mover) == action
            rows.append(f"| `{agent}` | `{text}` | {action} | ({r}*{board.cols} + {c})*4 + {orientation} |")
    base = board.squares * 4
    for offset in range(5):
        text = action_to_text(board, base + offset, 0)
        rows.append(f"| either | `{text}` | {base + offset} | {board.rows}*{board.cols}*4 + {offset} |")
    return rows


def _final_infos() -> tuple[list[str], dict]:
    """A three-move game on a 1 x 3 board, played through the env, and its final infos."""
    moves = ["a1 Rns", "decline", "b1 Rns", "c1 Rns"]
    env = carnac_env.env(board="custom", rows=1, cols=3, megaliths=3)
    env.reset(options={"moves": moves[:-1]})
    env.last()
    env.step(env.unwrapped.parse_action(moves[-1]))
    infos = {agent: dict(env.infos[agent]) for agent in AGENTS}
    rewards = {agent: env.rewards[agent] for agent in AGENTS}
    env.close()
    return moves, {"infos": infos, "rewards": rewards}


def environment_page() -> str:
    """The text of docs/environment.md, computed from the real environment."""
    medium = raw_env(board="medium")
    obs_space = medium.observation_space(AGENTS[0])
    act_space = medium.action_space(AGENTS[0])
    moves, final = _final_infos()
    out: list[str] = []
    add = out.append
    add("# The Carnac environment (`carnac_v0`)")
    add("")
    add("<!-- Generated by `python scripts/gen_environment.py` from the real spaces; do not edit by hand. -->")
    add("")
    add("Carnac is a two-player abstract game of placing and tilting megaliths; the rules are in")
    add("[rules.md](rules.md). This page describes the PettingZoo AEC environment.")
    add("")
    add("| | |")
    add("|---|---|")
    add(
        '| Import | `import carnac_env; env = carnac_env.env(board="medium")`; or, as PettingZoo\'s classic envs, '
        '`from carnac_env import carnac_v0; env = carnac_v0.env(board="medium")` |'
    )
    add("| Bare environment | `carnac_env.raw_env(board=..., render_mode=None, **rules)` |")
    add(f"| Metadata name | `{medium.metadata['name']}` |")
    add("| API | AEC (agent-environment cycle); not parallelizable |")
    add(f"| Agents | `agents = {list(AGENTS)}` (Red moves first, then White) |")
    add("| Number of agents | 2 |")
    add(f"| Action space (medium) | `{act_space}` |")
    add(f"| Observation space (medium) | {_describe_observation_space(obs_space)} |")
    add("| Observation values | planes 0-7 are 0 or 1; plane 8 runs from 0 to the board's megaliths |")
    modes = {
        "human": "`human` (a pygame window with the `gui` extra and a display, otherwise text printed)",
        "ansi": "`ansi` (the board as text)",
        "rgb_array": "`rgb_array` (an (H, W, 3) uint8 image; the `render` extra)",
    }
    add(f"| Render modes | {'; '.join(modes[m] for m in RENDER_MODES)} |")
    add("")
    add("## Boards and spaces")
    add("")
    add("Every named board, instantiated; any custom board works too")
    add('(`carnac_env.env(board="custom", rows=4, cols=6, megaliths=10, min_dolmen=3, last_tilt=True)`).')
    add("Both agents share one observation space object and one action space object, and")
    add("`observation_space(agent)` / `action_space(agent)` return the same object on every call.")
    add("")
    out.extend(_board_table())
    add("")
    add("## Observation")
    add("")
    add("`observation` is an int8 array of shape `(rows, cols, 9)`, seen by one agent: colours are")
    add("relative to the observing agent, so one policy can play both seats. Row 0 is the north")
    add("edge and column 0 the west edge. The observation alone (with the board's fixed rules)")
    add("determines the legal actions and the rest of the game.")
    add("")
    out.extend(_plane_table())
    add("")
    add("## Legal action mask")
    add("")
    add("`action_mask` is an int8 vector with a 1 for each legal action of the agent to act, and")
    add("all zeros for the agent that waits. While placing: the 4 orientations of every empty")
    add("square. While responding: each legal tilt direction, and decline (always legal).")
    add("Every mask the package's envs hand out has this dtype, the one Gymnasium's")
    add("`Discrete.sample(mask=...)` requires: the AEC observation, the Gymnasium env's")
    add("`info['action_mask']`, `action_masks()` and `mask_in_observation` observation, and the")
    add("vector env's infos, `action_masks()` and observations.")
    add("")
    add("Once the game is over the mask is **all ones**, for both agents (Pgx's convention). No")
    add("action is legal any more (the AEC env takes only `None` from a finished agent, the")
    add("Gymnasium env asks for `reset()`, and the vector env ignores the action of a game it is")
    add("about to reset), but a policy that is fed the final observation, as Gymnasium's next-step")
    add("autoreset does, never meets an all-zero mask, whose masked logits would be NaN. The same")
    add("holds everywhere: the AEC env, `gymnasium.make` (`info['action_mask']`, `action_masks()`,")
    add("`mask_in_observation`), every mode of `gymnasium.make_vec`, and the JAX engine")
    add("(`legal_action_mask` once `terminated`); `BatchGame` restarts a finished game at once, so")
    add("the masks it returns always belong to a game in progress.")
    add("")
    add("## Actions")
    add("")
    add("With R rows and C columns there are `R*C*4 + 5` actions:")
    add("")
    add("- place on square (row, col) with orientation o: `(row*C + col)*4 + o`, where bit 0 of o")
    add("  is 0 for the mover's own colour on top and 1 for the opponent's, and bit 1 is 0 when")
    add("  the north/south long faces share the top colour (a tilt north or south then shows the")
    add("  top colour) and 1 when the east/west ones do;")
    add("- tilt the waiting megalith: `R*C*4 + d`, d = 0 north, 1 east, 2 south, 3 west;")
    add("- decline to tilt: `R*C*4 + 4`.")
    add("")
    add("The move notation names squares with a column letter from the west and a row number from")
    add("the north (`a1` is the north-west corner), then the absolute colour on top and the axis")
    add("whose faces share it. `env.unwrapped.action_to_text(a)` and `env.unwrapped.parse_action(text)`")
    add(f"convert for the agent to act. Worked examples on the medium board, square `{_EXAMPLE_SQUARE}`:")
    add("")
    out.extend(_example_table())
    add("")
    add("## Turn order")
    add("")
    add("The agent to act follows the game, not strict alternation:")
    add("")
    add("- after a placement that can be tilted, the other agent responds (tilt or decline);")
    add("- after a tilt, the same agent acts again: it places the next megalith;")
    add("- after a decline, the agent who placed acts again and places another megalith;")
    add("- a placement that cannot be tilted passes straight to the other agent's placement.")
    add("")
    add("## Rewards")
    add("")
    add("All rewards are 0 until the game ends. Then the winner gets +1 and the loser -1, or both")
    add("0 for a draw. An illegal action through `carnac_env.env` ends the game with -1 for the")
    add("offender and 0 for the other agent; `raw_env.step` raises `IllegalActionError` (a")
    add("`ValueError`) instead, naming")
    add("the action, its notation and the reason, and changes nothing.")
    add("")
    add("## Infos")
    add("")
    add("`infos[agent]` has the same keys and shapes at every step, so that frameworks which stack")
    add("infos (Tianshou's replay buffer, TorchRL) can store them: `dolmens` (that agent's dolmen")
    add("sizes, largest first, as an int16 array zero-padded to a fixed length), `score` (the Board")
    add("Game Arena score: 100 per dolmen plus the largest one's size) and `winner` (0 for `player_0`,")
    add("1 for `player_1`, -1 for a draw or a game not over). They are zeros (winner -1) until the")
    add("game ends. A forfeit (an illegal action through `carnac_env.env`) names its winner, the")
    add("other agent, in both infos, as the Gymnasium and vector envs do on the learner's forfeit;")
    add("dolmens and score stay zeros there, since the game did not reach its end. For example,")
    add(f"on a custom 1 x 3 board with 3 megaliths after the moves {', '.join(f'`{m}`' for m in moves)}:")
    add("")
    add("```python")
    add(f"rewards = {final['rewards']}")
    add(f"infos = {final['infos']}")
    add("```")
    add("")
    gym_only = [key for key in GymInfo.__annotations__ if key not in AECInfo.__annotations__]
    vector_only = [key for key in VectorInfo.__annotations__ if key.startswith("final")]
    add("Each env's infos have a `TypedDict` in `carnac_env.envs.infos`, so that IDEs and type checkers")
    add(f"know the keys: `AECInfo` ({_keys(AECInfo)}) for `infos[agent]`; `GymInfo` for the info of")
    add(f"`gymnasium.make`, the same with {_keys(gym_only)}; and `VectorInfo` for `gymnasium.make_vec`,")
    add("the single env's keys stacked over the envs, each beside its `_key` mask, and under same-step")
    add(f"autoreset {_keys(vector_only)} for the games that ended.")
    add("")
    add("## Copies, search and records")
    add("")
    add("`copy.deepcopy(env)` and `pickle` keep the game in progress, and copies are independent.")
    add("`env.unwrapped.game` is the live rules-core state (`GameState`, cheap `.copy()`),")
    add("`env.unwrapped.record()` the game so far as a `GameRecord`, and")
    add('`env.reset(options={"moves": [...]})` starts from the position after the given moves.')
    add("")
    add("## Version history")
    add("")
    add(f"- `carnac_v0` (carnac_env {carnac_env.__version__}): first release.")
    medium.close()
    return "\n".join(out) + "\n"


def _keys(keys) -> str:
    """``keys`` (a TypedDict or a list) as the page lists them: `a`, `b` and `c`."""
    names = [f"`{key}`" for key in (keys.__annotations__ if isinstance(keys, type) else keys)]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def main(argv: list[str] | None = None) -> int:
    """Write the page to ``argv[0]`` (default: environment.md beside this script)."""
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else Path(__file__).resolve().parent.parent / "docs" / "environment.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_text(target, environment_page())
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
