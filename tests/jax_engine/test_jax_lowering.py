"""The JAX engine is ready for an accelerator: its jitted functions lower to XLA with no host
callbacks, no loops and no shapes that depend on data (issue 53, item 4).

Each public function of :class:`carnac_env.jax.Carnac` is lowered with ``jax.jit(...).lower``
(one game and a vmapped batch) and the StableHLO text is read: a host callback
(``pure_callback``, ``io_callback``, ``jax.debug``) shows as a ``custom_call`` to a Python
callback target; a loop as ``stablehlo.while``; a shape that depends on data as a ``?``
dimension or a dynamic-shape op. The checker is itself checked on functions that have each
fault, so these tests can fail. Lowering compiles nothing, so the file takes seconds.

The sampler of the benchmark and the PPO example (``carnac_env.jax.uniform_legal_action``) is
checked in tests/jax_engine/test_jax_sampling.py.
"""

from __future__ import annotations

import re

import pytest
from _frameworks import require

jax = require("jax")
jnp = require("jax.numpy")

from carnac_env.jax import Carnac  # noqa: E402

#: Dynamic-shape ops of StableHLO (their result shape is computed from data).
DYNAMIC_SHAPE_OPS = (
    "dynamic_broadcast_in_dim",
    "dynamic_conv",
    "dynamic_gather",
    "dynamic_iota",
    "dynamic_pad",
    "dynamic_reshape",
    "real_dynamic_slice",
    "get_dimension_size",
    "set_dimension_size",
)


def accelerator_faults(text: str) -> list[str]:
    """What in lowered StableHLO ``text`` would keep a function off an accelerator's fast path."""
    faults = [f"custom_call @{target}" for target in re.findall(r"custom_call\s*@(\w+)", text)]
    faults += ["a host callback"] * ("callback" in text.lower())
    faults += ["a while loop"] * ("stablehlo.while" in text)
    faults += [f"a dynamic shape: {shape}" for shape in re.findall(r"tensor<[^>]*\?[^>]*>", text)]
    faults += [f"dynamic-shape op {op}" for op in DYNAMIC_SHAPE_OPS if f"stablehlo.{op}" in text]
    return faults


def lowered_functions(env: Carnac, batch: int | None) -> dict[str, str]:
    """The lowered text of init, step, observe, the observation property and the game's scoring."""
    state = jax.eval_shape(env.init, jax.random.PRNGKey(0))
    action = jax.ShapeDtypeStruct((), jnp.int32)
    functions = {
        "init": (env.init, (jax.random.PRNGKey(0),)),
        "step": (env.step, (state, action)),
        "observe": (env.observe, (state, jnp.int32(1))),
        "state.observation": (lambda s: s.observation, (state,)),
        "returns": (env.game.returns, (state._x,)),
    }
    texts = {}
    for name, (function, args) in functions.items():
        if batch is not None:
            function = jax.vmap(function)
            args = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct((batch, *jnp.shape(a)), a.dtype), args)
        texts[name] = jax.jit(function).lower(*args).as_text()
    return texts


@pytest.mark.parametrize("board", ["medium", "le_menec"])
@pytest.mark.parametrize("batch", [None, 1024])
def test_the_jitted_engine_lowers_without_callbacks_loops_or_dynamic_shapes(board: str, batch: int | None) -> None:
    for name, text in lowered_functions(Carnac(board), batch).items():
        assert accelerator_faults(text) == [], f"{board} {name} (batch {batch})"


def test_the_step_lowers_to_static_shapes_only() -> None:
    """Every tensor of the batched step has the batch's static size and the board's."""
    env = Carnac("medium")
    text = lowered_functions(env, 1024)["step"]
    shapes = set(re.findall(r"tensor<([^>]*)>", text))
    assert shapes and all("?" not in shape for shape in shapes)
    assert "1024x70xi8" in shapes and f"1024x{env.num_actions}xi1" in shapes


def test_the_checker_finds_each_fault() -> None:
    """The checks above can fail: each fault, lowered, is reported."""
    scalar = jax.ShapeDtypeStruct((), jnp.int32)

    def lowered(function, *args) -> str:
        return jax.jit(function).lower(*args).as_text()

    callback = lowered(lambda x: jax.pure_callback(lambda v: v, scalar, x), scalar)
    assert any("callback" in fault for fault in accelerator_faults(callback))
    debug = lowered(lambda x: (jax.debug.print("{}", x), x)[1], scalar)
    assert "a host callback" in accelerator_faults(debug)
    loop = lowered(lambda x: jax.lax.while_loop(lambda v: v < 10, lambda v: v + 1, x), scalar)
    assert accelerator_faults(loop) == ["a while loop"]
    assert accelerator_faults(lowered(lambda x: x + 1, scalar)) == []
    assert accelerator_faults("%0 = stablehlo.dynamic_reshape %a, %b : (tensor<?xi8>, tensor<1xi64>) -> tensor<?xi8>")
