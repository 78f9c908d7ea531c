"""Write the golden learner episodes (``episodes.json``): seeded games of the two learner envs.

The single-agent Gymnasium env (``gymnasium.make("carnac_env/Carnac-v0", ...)``,
:mod:`carnac_env.envs.gym`) and the self-play env (:mod:`carnac_env.envs.selfplay`) share the
learner's step: the learner's move, the opponent's replies while it is the opponent's turn,
the reward, the end, the observation and the info. Each case here builds one of them with a
set of options (board, seat, opponent, illegal-action mode, observation layout), plays a few
whole episodes with a seeded learner that draws its action from the mask (and, in the
illegal-action cases, sometimes an action the mask forbids), and keeps, for every reset and
step: the action, the moves it played (the learner's and the opponent's), the observation's
sha256 (per key for a dict), the reward, terminated, truncated and the info, each with its
type. The scenarios keep what the envs do at their edges: the error type and message of a bad
step, an opponent that fails, a failed reset, and the state afterwards.

``tests/envs/test_learner_step.py`` replays every case and scenario and compares; it never writes
the file.

    python tests/golden_learner/regenerate.py          # rewrite episodes.json
    python tests/golden_learner/regenerate.py --check  # only report which cases differ

**A changed episode must be reviewed before it is committed.** The learner envs are meant to
stay the same bit for bit (trained policies and the examples depend on them); rewrite the file
only for a change that is meant to change them, and say so in the commit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

GOLDEN = Path(__file__).resolve().parent / "episodes.json"


def case(kind: str, resets: list[int | None], /, illegal: int = 0, reset_options: Any = None, **options: Any) -> dict:
    """A case: the env ``kind`` (``"gym"`` or ``"selfplay"``) and its options, the seeds of its resets
    (``None``: an unseeded reset, which goes on with the env's generator), how often (in percent)
    the learner picks an action the mask forbids, and the options of every reset."""
    out = {"env": kind, "options": options, "resets": resets}
    if illegal:
        out["illegal"] = illegal
    if reset_options is not None:
        out["reset_options"] = reset_options
    return out


CASES: dict[str, dict[str, Any]] = {
    "gym-small-random-seat0": case("gym", [0, None, None], board="small"),
    "gym-small-random-seat1": case("gym", [1, None], board="small", seat=1),
    "gym-small-random-seatrandom": case("gym", [2, None, None, 3], board="small", seat="random"),
    "gym-medium-greedy-seatrandom": case("gym", [4, None], board="medium", opponent="greedy", seat="random"),
    "gym-small-mcts-seat1": case("gym", [5], board="small", opponent="mcts:sims=12", seat=1),
    "gym-small-lose": case("gym", [6, None, None, None], 15, board="small", seat="random"),
    "gym-small-raise": case("gym", [7, None], 20, board="small", opponent="greedy", illegal_action="raise"),
    "gym-small-image-mask": case("gym", [8], board="small", observation="image", mask_in_observation=True, seat=1),
    "gym-petit-planes-mask-rules": case(
        "gym", [9, None], board="petit_menec", mask_in_observation=True, megaliths=10, seat="random"
    ),
    "gym-medium-image-scale": case("gym", [10], board="medium", observation="image", image_scale=2, opponent="greedy"),
    "gym-small-moves": case("gym", [11], reset_options={"moves": ["c3 Rns"], "seat": 0}, board="small", seat=1),
    "selfplay-small-alternate": case("selfplay", [0, None, None, None], env="small"),
    "selfplay-small-random-seat": case("selfplay", [1, None, None], env="small", seat="random", opponent="greedy"),
    "selfplay-medium-seat1-mcts": case("selfplay", [2], env="medium", seat=1, opponent="mcts:sims=8"),
    "selfplay-wrapped-aec-seat0": case("selfplay", [3, None], env="wrapped:small", seat=0),
    "selfplay-raw-aec-policy": case("selfplay", [4, None], env="raw:small", opponent="policy:last"),
    "selfplay-pool": case("selfplay", [5, None, None, None, None], env="small", opponent="pool", seat="random"),
    "selfplay-lose": case("selfplay", [6, None, None, None], 15, env="small"),
    "selfplay-raise": case("selfplay", [7, None], 20, env="small", illegal_action="raise", opponent="greedy"),
    "selfplay-image-mask-policy": case(
        "selfplay", [8, None], env="small", observation="image", mask_in_observation=True, opponent="policy:first"
    ),
    "selfplay-petit-planes-mask-rules": case(
        "selfplay", [9, None], env="petit_menec", mask_in_observation=True, megaliths=10, seat="random"
    ),
    "selfplay-moves": case("selfplay", [10, None], reset_options={"moves": ["c3 Rns"], "seat": 1}, env="small"),
}


# ----------------------------------------------------------------- opponents
def policy(which: str) -> Callable[[Any, np.ndarray], Any]:
    """A policy opponent: the first or the last legal action of the mask it is given
    (``"last"`` answers a one-element array, as a model's ``predict`` does)."""

    def first(observation: Any, mask: np.ndarray) -> Any:
        return int(np.flatnonzero(mask)[0])

    def last(observation: Any, mask: np.ndarray) -> Any:
        return np.array([np.flatnonzero(mask)[-1]])

    return {"first": first, "last": last}[which]


class Misstep:
    """An agent opponent that plays its first legal action until call ``bad``, when it answers
    ``answer`` (an illegal action, or an exception it raises)."""

    def __init__(self, bad: int, answer: Any) -> None:
        self.bad, self.answer, self.calls = bad, answer, 0

    def act(self, state: Any) -> Any:
        self.calls += 1
        if self.calls == self.bad:
            if isinstance(self.answer, BaseException):
                raise self.answer
            return self.answer
        return state.legal_actions()[0]

    def __repr__(self) -> str:
        return f"Misstep(bad={self.bad}, answer={self.answer!r})"


# ----------------------------------------------------------------- building the envs
def build(kind: str, options: dict[str, Any]) -> Any:
    """The env of a case: ``gymnasium.make`` for ``"gym"``; a :class:`SelfPlayEnv` for
    ``"selfplay"`` (``env`` ``"wrapped:<board>"`` or ``"raw:<board>"`` gives it an AEC env,
    ``opponent`` ``"policy:first|last"`` a policy and ``"pool"`` a pool)."""
    import gymnasium

    import carnac_env

    options = dict(options)
    if kind == "gym":
        return gymnasium.make("carnac_env/Carnac-v0", **options)
    from carnac_env.envs.aec import raw_env
    from carnac_env.envs.selfplay import OpponentPool, SelfPlayEnv

    env = options.pop("env", "medium")
    if env.startswith("wrapped:"):
        env = carnac_env.env(board=env.split(":")[1])
    elif env.startswith("raw:"):
        env = raw_env(board=env.split(":")[1])
    opponent = options.pop("opponent", "random")
    if opponent == "pool":
        opponent = OpponentPool(["random", policy("first")], size=2)
        opponent.add("greedy")
        opponent.add(policy("last"))
        opponent.add("mcts:sims=4")  # the oldest added member (greedy) goes
    elif opponent.startswith("policy:"):
        opponent = policy(opponent.split(":")[1])
    return SelfPlayEnv(env, opponent=opponent, **options)


# ----------------------------------------------------------------- what is kept
def digest(array: np.ndarray) -> list[Any]:
    """An array as ``[dtype, shape, sha256 of its bytes]`` (the first 16 hex digits)."""
    array = np.ascontiguousarray(array)
    return [str(array.dtype), list(array.shape), hashlib.sha256(array.tobytes()).hexdigest()[:16]]


def observation_digest(observation: Any) -> Any:
    """The observation's digest, per key for a dict observation."""
    if isinstance(observation, dict):
        return {key: digest(value) for key, value in observation.items()}
    return digest(observation)


def typed(value: Any) -> Any:
    """A value as JSON with its type: arrays by :func:`digest`, scalars as ``[type, value]``."""
    if isinstance(value, np.ndarray):
        return digest(value)
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, float | np.floating):
        return [type(value).__name__, repr(float(value))]
    if isinstance(value, bool | int | np.integer | np.bool_):
        return [type(value).__name__, int(value)]
    return [type(value).__name__, repr(value)]


def history(env: Any) -> list[int]:
    return env.unwrapped.aec.unwrapped.history


def error(err: BaseException) -> list[str]:
    return [type(err).__name__, str(err)]


def attempt(call: Callable[[], Any]) -> tuple[Any, list[str] | None]:
    """``call()``'s result, or ``None`` and the error it raised (type and message)."""
    try:
        return call(), None
    except Exception as err:
        return None, error(err)


def step_record(env: Any, action: Any) -> tuple[dict[str, Any], Any]:
    """One step: what it played and returned (or raised), and its info (``None`` on an error)."""
    before = len(history(env))
    result, failed = attempt(lambda: env.step(action))
    record: dict[str, Any] = {"action": typed(action), "moves": list(history(env)[before:])}
    if failed is not None:
        record["error"] = failed
        return record, None
    observation, reward, terminated, truncated, info = result
    record.update(
        observation=observation_digest(observation),
        reward=typed(reward),
        terminated=typed(terminated),
        truncated=typed(truncated),
        info=typed(info),
    )
    return record, info


def learner_action(rng: np.random.Generator, mask: np.ndarray, illegal: int) -> Any:
    """The seeded learner's action: legal, or ``illegal`` percent of the time a forbidden one;
    as an int, a numpy integer or a 0-d array in turn."""
    allowed = np.flatnonzero(mask if rng.integers(100) >= illegal else mask == 0)
    if not len(allowed):
        allowed = np.flatnonzero(mask)
    action = int(rng.choice(allowed))
    return [action, np.int64(action), np.array(action)][int(rng.integers(3))]


def play_case(case: dict[str, Any]) -> list[dict[str, Any]]:
    """Every reset and step of ``case``, as kept in the golden file."""
    env = build(case["env"], case["options"])
    rng = np.random.default_rng(case.get("learner", 0))
    illegal = case.get("illegal", 0)
    events: list[dict[str, Any]] = []
    for seed in case["resets"]:
        observation, info = env.reset(seed=seed, options=case.get("reset_options"))
        events.append(
            {
                "reset": seed,
                "moves": list(history(env)),
                "observation": observation_digest(observation),
                "info": typed(info),
            }
        )
        done = False
        while not done:
            record, next_info = step_record(env, learner_action(rng, info["action_mask"], illegal))
            events.append(record)
            if next_info is not None:
                info = next_info
                done = record["terminated"][1] or record["truncated"][1]
    env.close()
    return events


# ----------------------------------------------------------------- the edges
def scenario_events(kind: str) -> dict[str, list[Any]]:
    """What ``kind``'s env does at its edges (errors, failed opponents and resets), each as a
    list of events."""
    from carnac_env.envs.gym import CarnacEnv
    from carnac_env.envs.selfplay import SelfPlayEnv

    direct = CarnacEnv if kind == "gym" else (lambda **kw: SelfPlayEnv(kw.pop("board"), **kw))
    out: dict[str, list[Any]] = {}

    env = direct(board="small", seat=1)
    out["step before reset"] = [step_record(env, 3)[0], step_record(env, 0)[0]]

    env = direct(board="small", seat=0)
    env.reset(seed=0)
    out["actions outside the space"] = [
        step_record(env, action)[0]
        for action in (-1, env.unwrapped.board.num_actions, True, 1.0, "3", None, np.array([0, 1]))
    ]
    legal = int(np.flatnonzero(env.action_masks())[0])
    out["a one-element array"] = [step_record(env, np.array([legal]))[0]]

    events: list[Any] = []
    env = direct(board="small", seat=0)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    done = False
    while not done:
        record, info = step_record(env, int(rng.choice(np.flatnonzero(env.action_masks()))))
        done = record["terminated"][1]
    events.append(record)
    events.append(step_record(env, 0)[0])
    events.append(step_record(env, legal)[0])
    out["step after the end"] = events

    env = direct(board="small", seat=0, illegal_action="lose")
    env.reset(seed=2)
    forbidden = int(np.flatnonzero(env.action_masks() == 0)[0])
    out["forfeit, then a step"] = [
        step_record(env, forbidden)[0],
        [env.forfeit],
        step_record(env, 0)[0],
        [typed(env.action_masks())],
    ]

    env = direct(board="small", seat=0, illegal_action="raise")
    env.reset(seed=3)
    forbidden = int(np.flatnonzero(env.action_masks() == 0)[-1])
    out["raise, then a legal step"] = [
        step_record(env, forbidden)[0],
        [env.forfeit],
        step_record(env, int(np.flatnonzero(env.action_masks())[0]))[0],
    ]

    for name, answer in (
        ("an illegal opponent move", 0),
        ("an opponent answering a bool", True),
        ("an opponent answering None", None),
        ("an opponent that raises", ValueError("the opponent broke")),
    ):
        events = []
        env = direct(board="small", seat=0, opponent=Misstep(bad=3, answer=answer))
        obs, info = env.reset(seed=4)
        events.append(list(history(env)))
        for _ in range(6):
            record, _info = step_record(env, int(np.flatnonzero(env.action_masks())[-1]))
            events.append(record)
            events.append([list(history(env)), typed(env.action_masks())])
        out[name] = events

    misstep = Misstep(bad=1, answer=0)
    env = direct(board="small", seat=1, opponent=misstep)
    events = [attempt(lambda: env.reset(seed=5))[1], step_record(env, 0)[0]]
    misstep.bad = 0  # it plays on from now
    obs, info = env.reset(seed=5)
    events.append([observation_digest(obs), typed(info)])
    out["an opponent failing during reset"] = events

    env = direct(board="small", seat=0)
    env.reset(seed=6)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    events = [list(history(env))]
    for options in ({"moves": ["z9 Rns"]}, {"moves": "c3 Rns"}, {"seat": 7}, {"colour": 1}, 3):
        events.append(attempt(lambda options=options: env.reset(options=options))[1])
        events.append(step_record(env, int(np.flatnonzero(env.action_masks())[0]))[0])
    events.append(attempt(lambda: env.reset(seed=-1))[1])
    out["failed resets"] = events
    return out


def regenerate() -> dict[str, Any]:
    """The golden file's content, from the envs as they are now."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Gymnasium's checker warns about the forfeited steps
        return {
            "cases": {name: play_case(case) for name, case in CASES.items()},
            "scenarios": {kind: scenario_events(kind) for kind in ("gym", "selfplay")},
        }


def as_json(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples as lists)."""
    return json.loads(json.dumps(value))


def dumps(golden: dict[str, Any]) -> str:
    """The golden file's text: one event a line, so that a diff shows the steps that changed."""
    lines = ["{"]
    for p, part in enumerate(("cases", "scenarios")):
        lines.append(f" {json.dumps(part)}: {{")
        names = sorted(golden[part])
        for n, name in enumerate(names):
            lines.append(f"  {json.dumps(name)}: " + ("[" if part == "cases" else "{"))
            items = golden[part][name]
            if part == "cases":
                rows = [json.dumps(event, sort_keys=True) for event in items]
            else:
                rows = [f"{json.dumps(key)}: {json.dumps(items[key], sort_keys=True)}" for key in sorted(items)]
            lines.extend(f"   {row}{',' if i < len(rows) - 1 else ''}" for i, row in enumerate(rows))
            lines.append("  " + ("]" if part == "cases" else "}") + ("," if n < len(names) - 1 else ""))
        lines.append(" }" + ("," if p == 0 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report which cases differ")
    args = parser.parse_args(argv)
    now = as_json(regenerate())
    if args.check:
        stored = json.loads(GOLDEN.read_text(encoding="utf-8"))
        differ = [
            f"{part}/{name}"
            for part in ("cases", "scenarios")
            for name in sorted(set(now[part]) | set(stored[part]))
            if now[part].get(name) != stored[part].get(name)
        ]
        print("\n".join(differ) or "all cases match")
        return 1 if differ else 0
    GOLDEN.write_text(dumps(now), encoding="utf-8")
    print(f"wrote {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
