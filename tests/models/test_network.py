"""The numpy policy-value network (:mod:`carnac_env.models.network`) against its definition.

``PolicyValueNet.forward`` is compiled and reorganised for speed (buffers reused per shape,
chunks of the batch, the column matrices written by compiled code with the activations fused
in); :func:`reference_forward` below is the plain numpy definition it replaced, kept here
verbatim as the specification. With the default convolution (``"im2col"``) the two must agree
within 1e-5 on the logits and the values, on real observations (positions from random games)
and random ones, on every board size the shipped models play and on other architectures.
The opt-in ``"winograd"`` convolution rounds differently: it is held to 1e-6 of the logits'
magnitude instead.
"""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

from carnac_env.core.boards import make_board
from carnac_env.core.game import GameState
from carnac_env.core.observation import AWAITING, NUM_PLANES, SUPPLY, observation_planes
from carnac_env.errors import CarnacError
from carnac_env.models import PolicyValueNet, blas_single_thread, load, parameter_shapes, shipped_models, specialists
from carnac_env.models.network import rules_vector

TOLERANCE = 1e-5
BOARDS = ("small", "medium", "large", "le_menec")


# ---------------------------------------------------------------- the definition
def _conv3x3(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """3x3 convolution, zero padding, ``(N, R, C, Cin)`` maps, ``(Cout, Cin, 3, 3)`` kernel."""
    n, rows, cols, cin = x.shape
    matrix = weight.transpose(2, 3, 1, 0).reshape(-1, weight.shape[0])
    padded = np.zeros((n, rows + 2, cols + 2, cin), dtype=np.float32)
    padded[:, 1:-1, 1:-1] = x
    columns = np.empty((n, rows, cols, 3, 3, cin), dtype=np.float32)
    for dy in range(3):
        for dx in range(3):
            columns[:, :, :, dy, dx] = padded[:, dy : dy + rows, dx : dx + cols]
    out = columns.reshape(n * rows * cols, 9 * cin) @ matrix
    out += bias
    return out.reshape(n, rows, cols, -1)


HEADS = ("place", "respond", "value1", "value2")


def reference_forward(net: PolicyValueNet, obs: np.ndarray, supply_scale: float | None = None, board=None):
    """The network's definition: the numpy forward pass before it was made fast. A network that
    reads the rules gets them as constant planes after the 9 observation planes (``board``'s, or
    the model header's on a board of the observations' size). Run on one BLAS thread, as the
    network's own forward is: OpenBLAS (0.3.31 at least) may sum a product in another order on
    several threads, about 1e-5 off on logits of 25."""
    with blas_single_thread():
        return _reference_forward(net, obs, supply_scale, board)


def _reference_forward(net: PolicyValueNet, obs: np.ndarray, supply_scale: float | None, board):
    p = net.params
    x = np.asarray(obs).astype(np.float32)
    x[..., SUPPLY] /= float(supply_scale or net.megaliths)
    n, rows, cols, _ = x.shape
    inputs = x
    if net.reads_rules:
        own = net.header["board"]
        rules = (
            rules_vector(rows, cols, board.megaliths, board.min_dolmen, board.last_tilt)
            if board is not None
            else rules_vector(rows, cols, own["megaliths"], own["min_dolmen"], own.get("last_tilt", True))
        )
        inputs = np.concatenate([x, np.broadcast_to(rules, (n, rows, cols, len(rules)))], axis=3)
    h = np.maximum(_conv3x3(inputs, p["stem.weight"], p["stem.bias"]), 0.0)
    for i in range(net.blocks):
        y = np.maximum(_conv3x3(h, p[f"blocks.{i}.conv1.weight"], p[f"blocks.{i}.conv1.bias"]), 0.0)
        y = _conv3x3(y, p[f"blocks.{i}.conv2.weight"], p[f"blocks.{i}.conv2.bias"])
        h = np.maximum(h + y, 0.0)
    matrix = {key: np.ascontiguousarray(p[f"{key}.weight"].reshape(p[f"{key}.weight"].shape[:2]).T) for key in HEADS}
    place = h.reshape(n * rows * cols, net.channels) @ matrix["place"] + p["place.bias"]
    flat = h.reshape(n, rows * cols, net.channels)
    awaiting = x[..., AWAITING].reshape(n, rows * cols, 1)
    pooled = np.concatenate([flat.mean(axis=1), flat.max(axis=1), (flat * awaiting).sum(axis=1)], axis=1)
    respond = pooled @ matrix["respond"] + p["respond.bias"]
    hidden = np.maximum(pooled @ matrix["value1"] + p["value1.bias"], 0.0)
    values = np.tanh(hidden @ matrix["value2"] + p["value2.bias"])[:, 0]
    logits = np.concatenate([place.reshape(n, rows * cols * 4), respond], axis=1)
    return logits.astype(np.float32), values.astype(np.float32)


# ---------------------------------------------------------------- inputs
def real_observations(board: str, count: int, seed: int = 0) -> np.ndarray:
    """``count`` int8 observations from uniformly random games, seen by the player to act."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        state = GameState(board)
        while not state.is_over and len(out) < count:
            out.append(observation_planes(state, state.to_act))
            legal = state.legal_actions()
            state.apply(legal[int(rng.random() * len(legal))])
    return np.stack(out)


def random_observations(rows: int, cols: int, count: int, seed: int = 0, density: float = 0.3) -> np.ndarray:
    """Random 0/1 planes (any square may await a tilt) and a random supply in 0..56."""
    rng = np.random.default_rng(seed)
    obs = (rng.random((count, rows, cols, NUM_PLANES)) < density).astype(np.int8)
    obs[..., SUPPLY] = rng.integers(0, 57, (count, 1, 1))
    return obs


def random_net(channels: int, blocks: int, hidden: int, ownership: bool = False, seed: int = 0) -> PolicyValueNet:
    rng = np.random.default_rng(seed)
    params = {
        name: (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)
        for name, shape in parameter_shapes(channels, blocks, hidden, ownership).items()
    }
    board = make_board("small")
    header = {
        "board": {**board.rules(), "name": board.name},
        "architecture": {"channels": channels, "blocks": blocks, "hidden": hidden, "ownership": ownership},
    }
    return PolicyValueNet(header, params)


def assert_close(got, want, tolerance: float = TOLERANCE) -> None:
    (logits, values), (ref_logits, ref_values) = got, want
    assert logits.dtype == np.float32 and values.dtype == np.float32
    assert logits.shape == ref_logits.shape and values.shape == ref_values.shape
    assert np.isfinite(logits).all() and np.isfinite(values).all()
    assert np.abs(logits - ref_logits).max(initial=0.0) <= tolerance
    assert np.abs(values - ref_values).max(initial=0.0) <= tolerance


def winograd(net: PolicyValueNet) -> PolicyValueNet:
    twin = PolicyValueNet(net.header, net.params, source=net.source)
    twin.convolution = "winograd"
    return twin


def relative(logits: np.ndarray, share: float = 1e-6) -> float:
    """A float32 bound: ``share`` of the largest logit (at least ``share``)."""
    return share * max(1.0, float(np.abs(logits).max(initial=0.0)))


#: Winograd's bound, as a share of the largest logit. Its transforms round a little more than the
#: definition's order in float32: general-g6 on large's random planes came to 1.1e-6 of logits of
#: 31 (a bug is off by far more: a wrong tile or transform moves logits by whole units).
WINOGRAD_SHARE = 2e-6


@pytest.fixture(scope="module")
def shipped() -> dict[str, PolicyValueNet]:
    return {name: load(path) for name, path in {**shipped_models(), **specialists()}.items()}


# ---------------------------------------------------------------- the definition holds
@pytest.mark.parametrize("board", BOARDS)
def test_shipped_models_match_the_definition_on_real_observations(shipped, board):
    obs = real_observations(board, 300, seed=1)  # 300: several chunks and a shorter last one
    b = make_board(board)
    for net in shipped.values():
        want = reference_forward(net, obs, b.megaliths, b)
        # as below: the definition up to float32 reassociation, a bound that scales with the logits
        # (the general network's reach 28 on large, 1.1e-5 off)
        assert_close(net.forward(obs, board=b), want, relative(want[0]))


@pytest.mark.parametrize("board", BOARDS)
def test_shipped_models_match_the_definition_on_random_observations(shipped, board):
    b = make_board(board)
    obs = random_observations(b.rows, b.cols, 100, seed=2)
    for net in shipped.values():
        want = reference_forward(net, obs)
        # the definition up to float32 reassociation, not bit for bit: a rules-reading network
        # adds the rules planes' response after the stem's product (a fixed map per board), and
        # BLAS's kernels block a product by its shape, which differs between the fast pass's
        # chunks and the definition's one product (random planes drive the specialists' logits
        # to 84 on medium, 1.1e-5 off with OpenBLAS 0.3.31)
        assert_close(net.forward(obs), want, relative(want[0]))


@pytest.mark.parametrize("batch", [1, 8, 64, 256])
def test_every_batch_size_matches_the_definition(shipped, batch):
    net = shipped["small"]
    for board in ("small", "large"):
        obs = real_observations(board, batch, seed=batch)
        assert_close(net.forward(obs), reference_forward(net, obs))


@pytest.mark.parametrize(
    ("channels", "blocks", "hidden", "ownership"),
    [(1, 0, 1, False), (5, 1, 7, True), (16, 2, 3, False), (48, 1, 64, False)],
)
@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (1, 4), (2, 3), (6, 6), (5, 20), (13, 9)])
def test_other_architectures_and_board_shapes_match_the_definition(channels, blocks, hidden, ownership, rows, cols):
    net = random_net(channels, blocks, hidden, ownership, seed=channels + rows)
    obs = random_observations(rows, cols, 30, seed=cols)
    assert_close(net.forward(obs), reference_forward(net, obs))


def test_each_position_is_evaluated_on_its_own(shipped):
    """A position's outputs do not depend on the batch around it (nor on its place in it)."""
    net = shipped["medium"]
    obs = real_observations("medium", 70, seed=3)
    logits, values = net.forward(obs)
    for i in (0, 33, 69):
        one_logits, one_values = net.forward(obs[i : i + 1])
        assert np.abs(one_logits[0] - logits[i]).max() <= TOLERANCE
        assert abs(float(one_values[0]) - float(values[i])) <= TOLERANCE


@pytest.mark.parametrize("board", BOARDS)
def test_winograd_stays_within_two_millionths_of_the_logits(shipped, board):
    b = make_board(board)
    batches = (real_observations(board, 100, seed=8), random_observations(b.rows, b.cols, 60, seed=9, density=0.5))
    for net in shipped.values():
        fast = winograd(net)
        for obs in batches:
            want = reference_forward(net, obs, b.megaliths)
            assert_close(fast.forward(obs, b.megaliths), want, relative(want[0], WINOGRAD_SHARE))


@pytest.mark.parametrize(
    ("rows", "cols", "channels", "blocks"), [(1, 1, 3, 1), (2, 5, 8, 2), (7, 3, 48, 1), (11, 12, 16, 0)]
)
def test_winograd_on_odd_boards_and_architectures(rows, cols, channels, blocks):
    net = random_net(channels, blocks, 9, seed=rows)
    obs = random_observations(rows, cols, 21, seed=cols)
    want = reference_forward(net, obs)
    assert_close(winograd(net).forward(obs), want, relative(want[0], WINOGRAD_SHARE))


def test_convolution_is_one_of_the_two(shipped):
    net = winograd(shipped["small"])
    assert net.convolution == "winograd"
    for bad in ("fft", "", None, 1, True):
        with pytest.raises(CarnacError, match="convolution"):
            net.convolution = bad
    assert net.convolution == "winograd"
    net.convolution = "im2col"
    obs = real_observations("small", 5)
    assert_close(net.forward(obs), reference_forward(net, obs))


# ---------------------------------------------------------------- inputs and outputs
def test_input_dtypes_and_layouts_give_the_same_outputs(shipped):
    net = shipped["small"]
    obs = real_observations("small", 20, seed=4)
    want = net.forward(obs)
    padded = np.zeros((20, 5, 8, 2 * NUM_PLANES), np.int8)
    padded[..., ::2] = obs
    for variant in (obs.astype(np.float32), obs.astype(np.float64), obs.astype(np.int64), padded[..., ::2]):
        got = net.forward(variant)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    binary = obs.copy()
    binary[..., SUPPLY] = 0
    np.testing.assert_array_equal(net.forward(binary.astype(bool))[0], net.forward(binary)[0])


def test_supply_scale_divides_the_supply_plane(shipped):
    net = shipped["small"]
    obs = real_observations("small", 10, seed=5)
    assert_close(net.forward(obs, supply_scale=14), reference_forward(net, obs, 14))
    assert not np.allclose(net.forward(obs, supply_scale=14)[0], net.forward(obs)[0])


@pytest.mark.parametrize("convolution", ["im2col", "winograd"])
def test_same_input_same_bits_and_fresh_outputs(shipped, convolution):
    """Buffers are reused per shape, but results are the caller's: a later call of another
    shape, or of the same one, changes neither what an earlier call returned nor what a
    repeated call gives."""
    net = PolicyValueNet(shipped["small"].header, shipped["small"].params)
    net.convolution = convolution
    a = real_observations("small", 40, seed=6)
    b = real_observations("large", 9, seed=7)
    first = net.forward(a)
    kept = (first[0].copy(), first[1].copy())
    net.forward(b)
    net.forward(a[::-1].copy())
    again = net.forward(a)
    for x, y, z in zip(first, kept, again):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(z, y)


@pytest.mark.parametrize("convolution", ["im2col", "winograd"])
def test_threads_share_a_network_safely(shipped, convolution):
    net = PolicyValueNet(shipped["small"].header, shipped["small"].params)
    net.convolution = convolution
    batches = [real_observations(board, 30, seed=i) for i, board in enumerate(("small", "medium", "small", "large"))]
    want = [net.forward(obs) for obs in batches]
    errors: list[str] = []

    def work(k: int) -> None:
        for _ in range(5):
            logits, values = net.forward(batches[k])
            if not (np.array_equal(logits, want[k][0]) and np.array_equal(values, want[k][1])):
                errors.append(f"thread {k} got other outputs")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(batches))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_empty_batch_and_bad_shapes(shipped):
    net = shipped["small"]
    logits, values = net.forward(np.zeros((0, 5, 8, NUM_PLANES), np.int8))
    assert logits.shape == (0, 5 * 8 * 4 + 5) and values.shape == (0,)
    for bad in (np.zeros((5, 8, NUM_PLANES)), np.zeros((1, 5, 8, NUM_PLANES + 1)), np.zeros((1, 5, 8, 3, 9))):
        with pytest.raises(CarnacError, match="expected"):
            net.forward(bad)


# ---------------------------------------------------------------- BLAS on one thread
def test_blas_single_thread_limits_and_restores():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads() -> list[int]:  # numpy's BLAS (another library's, loaded later, is not ours to hold)
        infos = [lib for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]
        return [lib["num_threads"] for lib in infos if "numpy" in lib["filepath"]] or [infos[0]["num_threads"]]

    if not [lib for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]:
        pytest.skip("no BLAS library that threadpoolctl controls")
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        with blas_single_thread():
            assert set(blas_threads()) == {1}
            with blas_single_thread():  # nested: still one, and the outer one restores
                assert set(blas_threads()) == {1}
            assert set(blas_threads()) == {1}
        assert blas_threads() == before
        with pytest.raises(ZeroDivisionError), blas_single_thread():
            1 / 0  # noqa: B018 - an error inside restores too
        assert blas_threads() == before
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"), blas_single_thread():
        assert set(blas_threads()) == {1}


def test_a_network_crosses_to_a_worker_process_and_computes_the_same(shipped):
    """The trainer sends networks to self-play workers by pickle: the buffers stay behind and
    the copy computes the same numbers."""
    import pickle

    net = shipped["small"]
    obs = real_observations("small", 20, seed=3)
    net.forward(obs)  # buffers made
    copy = pickle.loads(pickle.dumps(net))
    for a, b in zip(net.forward(obs), copy.forward(obs), strict=True):
        np.testing.assert_array_equal(a, b)
