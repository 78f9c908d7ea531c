"""The compiled rules of Carnac (numba): one re-expression of the core for many games at once.

Every function takes the :class:`~carnac_env.batch.state.KernelState` of a batch and a game
index ``i``. The rules are written once, in small functions named for them:

* :func:`tilt_fits`: may a megalith standing on a square tilt one way (the core's tilt rule);
* :func:`place`, :func:`tilt`, :func:`decline` (and :func:`play`, which decodes an action
  number and calls one of them), each returning whether the game ended, by the core's one
  end-of-game rule (:func:`~carnac_env.core.arithmetic.game_ends`). :func:`play` keeps the
  slot's views (:mod:`carnac_env.batch.views`) up to date for an observation;
  :func:`play_unobserved` plays the same move in a slot that is never observed (a playout, a
  lookahead) and leaves its views alone;
* legality, once: :func:`is_legal` (one action), :func:`legal_actions` (the list, in the
  core's order), :func:`pick` (the legal action of a given rank); the mask of an observation
  is the views' :func:`~carnac_env.batch.views.write_mask`, from the same rule;
* :func:`copy_rules_state`, :func:`copy_game` and :func:`same_game`: copying a game between
  slots and comparing two;
* :func:`winner_of` and :func:`value_for`: the result of a finished game;
* :func:`load_game` and :func:`reset_game`: a core position, or a fresh game, in one slot;
* the batched loops the engine calls: :func:`step_all` (which also writes the next
  observations and masks, in the same pass over the games), :func:`count_illegal`,
  :func:`find_illegal`, :func:`sample_all`, :func:`reset_all`, :func:`restart`.

The scorer of finished games (dolmens and the tie-break chain) is
:mod:`carnac_env.batch.scoring`; random moves and playouts are :mod:`carnac_env.search.playouts`.

Nothing here declares a rule constant or derives geometry: phases, kinds and plane indices
come from :mod:`carnac_env.core`, the tilt squares and neighbours from
:attr:`Board.arrays <carnac_env.core.boards.Board.arrays>`, the action numbers and the
rules arithmetic (colours, the response, the end of the game) from
:mod:`carnac_env.core.actions` and :mod:`carnac_env.core.arithmetic`, compiled from the same
Python functions. The differential tests (tests/batch/test_batch.py) play tens of thousands of
games against the core.

Everything is compiled with ``cache=True``: the first import on a machine compiles once (see
docs/performance.md for the time) and later processes load the machine code from numba's
on-disk cache. The kernels take any board size without recompiling.
"""

from __future__ import annotations

from numba import njit

from carnac_env.batch.scoring import winner_into
from carnac_env.batch.views import decline_number, fresh_views, show_square, write_mask, write_observation
from carnac_env.core import actions as _actions
from carnac_env.core import arithmetic as _arithmetic
from carnac_env.core.game import EMPTY, LYING, OVER, PLACE, RESPOND, STANDING

_JIT = {"cache": True, "nogil": True}
_INLINE = {"inline": "always", **_JIT}

# The core's action-number helpers and rules arithmetic, compiled from the very same functions.
place_number = njit(**_INLINE)(_actions.place_number)
place_square = njit(**_INLINE)(_actions.place_square)
place_orientation = njit(**_INLINE)(_actions.place_orientation)
tilt_base = njit(**_INLINE)(_actions.tilt_base)
tilt_colours = njit(**_INLINE)(_arithmetic.tilt_colours)
tilt_colour = njit(**_INLINE)(_arithmetic.tilt_colour)
gets_response = njit(**_INLINE)(_arithmetic.gets_response)
game_ends = njit(**_INLINE)(_arithmetic.game_ends)


# --------------------------------------------------------------------- the rules of one game
@njit(**_INLINE)
def tilt_fits(st, i, square, direction):  # pragma: no cover - compiled
    """Whether a megalith standing on ``square`` in game ``i`` may tilt towards
    ``direction``: both squares it would cover are on the board and empty."""
    first = st.tilt_squares[square, direction, 0]
    second = st.tilt_squares[square, direction, 1]
    # Without branches (``&``; off the board both squares are -1, read as square 0 and ignored):
    # whether a tilt fits is a coin toss to the branch predictor (the place loop measured 1.2x
    # faster so).
    return (first >= 0) & (st.kinds[i, max(first, 0)] == EMPTY) & (st.kinds[i, max(second, 0)] == EMPTY)


@njit(**_INLINE)
def _next_placement(st, i, placer):  # pragma: no cover - compiled
    """After a move that leaves nothing pending: the end of the game (the core's one rule;
    the last to act stays ``to_act``), or ``placer`` places next. True if the game ended."""
    if game_ends(st.pending[i], st.supply[i], st.empty[i]):
        st.phase[i] = OVER
        return True
    st.phase[i] = PLACE
    st.to_act[i] = placer
    return False


@njit(**_INLINE)
def _take(st, i, square):  # pragma: no cover - compiled
    """Remove ``square`` from game ``i``'s list of empty squares (before ``empty`` drops)."""
    free, where = st.free, st.where
    at = where[i, square]
    last = free[i, st.empty[i] - 1]
    free[i, at] = last
    where[i, last] = at


@njit(**_INLINE)
def _give_back(st, i, square):  # pragma: no cover - compiled
    """Add ``square`` to game ``i``'s list of empty squares, as entry number ``empty``."""
    at = st.empty[i]
    st.free[i, at] = square
    st.where[i, square] = at


@njit(**_INLINE)
def place(st, i, square, orientation, observed):  # pragma: no cover - compiled
    """The player to act in game ``i`` places on ``square``; True if the game ended. With
    ``observed`` the slot's views follow (:func:`~carnac_env.batch.views.show_square`)."""
    mover = st.to_act[i]
    top, north_south, _ = tilt_colours(mover, orientation)
    st.cells[i, square] = top
    st.kinds[i, square] = STANDING
    if observed:
        show_square(st, i, square)
    _take(st, i, square)
    st.supply[i] -= 1
    st.empty[i] -= 1
    can_tilt = False
    tilt_ok = st.tilt_ok
    for direction in range(4):
        fits = tilt_fits(st, i, square, direction)
        tilt_ok[i, direction] = fits
        can_tilt |= fits
    if gets_response(can_tilt, st.supply[i], st.last_tilt):
        st.phase[i] = RESPOND
        st.pending[i] = square
        st.pending_colour[i] = north_south
        st.to_act[i] = 1 - mover
        return False
    for d in range(4):
        tilt_ok[i, d] = False
    return _next_placement(st, i, 1 - mover)


@njit(**_INLINE)
def _clear_pending(st, i):  # pragma: no cover - compiled
    st.pending[i] = -1
    st.pending_colour[i] = 0
    for d in range(4):
        st.tilt_ok[i, d] = False


@njit(**_INLINE)
def tilt(st, i, direction, observed):  # pragma: no cover - compiled
    """Game ``i``'s responder tilts the pending megalith (a legal direction); True if it ended.
    With ``observed`` the slot's views follow."""
    origin = st.pending[i]
    first = st.tilt_squares[origin, direction, 0]
    second = st.tilt_squares[origin, direction, 1]
    colour = tilt_colour(st.pending_colour[i], direction)
    cells = st.cells
    kinds = st.kinds
    cells[i, origin] = 0
    kinds[i, origin] = EMPTY
    if observed:
        show_square(st, i, origin)
    for square in (first, second):
        cells[i, square] = colour
        kinds[i, square] = LYING
        if observed:
            show_square(st, i, square)
    count = st.num_lying[i]
    st.lying[i, count, 0] = first
    st.lying[i, count, 1] = second
    st.num_lying[i] = count + 1
    _give_back(st, i, origin)
    st.empty[i] += 1
    _take(st, i, first)
    st.empty[i] -= 1
    _take(st, i, second)
    st.empty[i] -= 1
    _clear_pending(st, i)
    return _next_placement(st, i, st.to_act[i])  # the tilter places next


@njit(**_INLINE)
def decline(st, i):  # pragma: no cover - compiled
    """Game ``i``'s responder declines; the placer places again. True if the game ended."""
    _clear_pending(st, i)
    st.to_act[i] = 1 - st.to_act[i]
    return _next_placement(st, i, st.to_act[i])


@njit(**_INLINE)
def _play(st, i, action, observed):  # pragma: no cover - compiled
    squares = st.cells.shape[1]
    base = tilt_base(squares)
    if action < base:
        return place(st, i, place_square(action), place_orientation(action), observed)
    if action < decline_number(squares):
        return tilt(st, i, action - base, observed)
    return decline(st, i)


@njit(**_INLINE)
def play(st, i, action):  # pragma: no cover - compiled
    """Play the (legal) action number ``action`` in game ``i``, keeping its views up to date
    for an observation; True if the game ended."""
    return _play(st, i, action, True)


@njit(**_INLINE)
def play_unobserved(st, i, action):  # pragma: no cover - compiled
    """:func:`play` in a slot whose observation is never written (a playout, a lookahead): the
    same move, without the views' bookkeeping, which goes stale (:func:`copy_game` or
    :func:`~carnac_env.batch.views.refresh_views` from an observed slot brings it back)."""
    return _play(st, i, action, False)


# --------------------------------------------------------------------- legality
@njit(**_INLINE)
def is_legal(st, i, action):  # pragma: no cover - compiled
    """Whether ``action`` is legal for the player to act in game ``i``: a placement on an empty
    square while placing; a legal tilt (``tilt_ok``, by :func:`tilt_fits`) or the decline while
    responding."""
    squares = st.cells.shape[1]
    base = tilt_base(squares)
    decline_action = decline_number(squares)
    if action < 0 or action > decline_action:
        return False
    if action < base:
        return st.phase[i] == PLACE and st.kinds[i, place_square(action)] == EMPTY
    return st.phase[i] == RESPOND and (action == decline_action or st.tilt_ok[i, action - base])


@njit(**_JIT)
def legal_actions(st, i, out):  # pragma: no cover - compiled
    """Write game ``i``'s legal action numbers (those :func:`is_legal` accepts) into ``out`` in
    increasing order; return how many (0 once the game is over). The same list as the core's
    ``legal_actions()``."""
    phase = st.phase[i]
    count = 0
    if phase == PLACE:
        kinds = st.kinds
        for s in range(kinds.shape[1]):
            if kinds[i, s] == EMPTY:
                for o in range(4):
                    out[count] = place_number(s, o)
                    count += 1
    elif phase == RESPOND:
        squares = st.cells.shape[1]
        base = tilt_base(squares)
        for d in range(4):
            if st.tilt_ok[i, d]:
                out[count] = base + d
                count += 1
        out[count] = decline_number(squares)
        count += 1
    return count


@njit(**_INLINE)
def pick(st, i, u):  # pragma: no cover - compiled
    """The legal action number of rank ``floor(u * count)`` among game ``i``'s ``count`` legal
    actions, ``u`` in [0, 1): with ``u`` uniform, a uniformly random legal move, as
    :meth:`BatchGame.sample_actions <carnac_env.batch.BatchGame.sample_actions>` draws them
    (the playouts' own draw, :func:`~carnac_env.search.playouts.random_action`, uses it for
    responses). Placements are ranked in the order of the ``free`` list (no search: the square
    is ``free[i, rank]``), responses as the legal tilts, then decline."""
    squares = st.kinds.shape[1]
    if st.phase[i] == PLACE:
        k = int(u * (4 * st.empty[i]))
        return place_number(st.free[i, k // 4], k % 4)
    count = 1
    for d in range(4):
        count += st.tilt_ok[i, d]
    k = int(u * count)
    for d in range(4):
        if st.tilt_ok[i, d]:
            if k == 0:
                return tilt_base(squares) + d
            k -= 1
    return decline_number(squares)


# --------------------------------------------------------------------- copies and comparison
@njit(**_JIT)
def copy_rules_state(src, i, dst, j):  # pragma: no cover - compiled
    """Copy what the rules read of game ``i`` of ``src`` into slot ``j`` of ``dst``: the squares,
    the counts, the phase, the pending megalith and the empty-square list, not the views or the
    lying pairs (written by the rules, never read by them). For a slot that only plays on,
    unobserved (:func:`play_unobserved`)."""
    for s in range(src.cells.shape[1]):
        dst.cells[j, s] = src.cells[i, s]
        dst.kinds[j, s] = src.kinds[i, s]
        dst.free[j, s] = src.free[i, s]  # the empty-square list that placements update
        dst.where[j, s] = src.where[i, s]
    dst.num_lying[j] = src.num_lying[i]
    dst.supply[j] = src.supply[i]
    dst.empty[j] = src.empty[i]
    dst.phase[j] = src.phase[i]
    dst.to_act[j] = src.to_act[i]
    dst.pending[j] = src.pending[i]
    dst.pending_colour[j] = src.pending_colour[i]
    for d in range(4):
        dst.tilt_ok[j, d] = src.tilt_ok[i, d]


@njit(**_JIT)
def copy_game(src, i, dst, j):  # pragma: no cover - compiled
    """Copy game ``i`` of ``src`` into slot ``j`` of ``dst`` (two KernelStates on one board):
    :func:`copy_rules_state`, then the lying pairs and the views (the observation planes and
    the place bits)."""
    copy_rules_state(src, i, dst, j)
    for k in range(src.num_lying[i]):
        dst.lying[j, k, 0] = src.lying[i, k, 0]
        dst.lying[j, k, 1] = src.lying[i, k, 1]
    src_planes = src.planes
    dst_planes = dst.planes
    for player in range(2):
        for k in range(src_planes.shape[2]):
            dst_planes[player, j, k] = src_planes[player, i, k]
    for a in range(src.place_bits.shape[1]):
        dst.place_bits[j, a] = src.place_bits[i, a]


@njit(**_JIT)
def same_game(a, i, b, j):  # pragma: no cover - compiled
    """Whether game ``i`` of ``a`` and game ``j`` of ``b`` are the same position for play: the
    same squares, supply, phase, player to act and pending megalith (the order in which the
    megaliths fell does not change the game)."""
    if (
        a.phase[i] != b.phase[j]
        or a.to_act[i] != b.to_act[j]
        or a.supply[i] != b.supply[j]
        or a.pending[i] != b.pending[j]
        or a.pending_colour[i] != b.pending_colour[j]
    ):
        return False
    for s in range(a.cells.shape[1]):  # noqa: SIM110 (a loop numba compiles)
        if a.cells[i, s] != b.cells[j, s] or a.kinds[i, s] != b.kinds[j, s]:
            return False
    return True


# --------------------------------------------------------------------- the result
#: ``winner`` of a game not over yet (0 Red, 1 White, -1 a draw otherwise).
NOT_OVER = -2


@njit(**_JIT)
def winner_of(st, i):  # pragma: no cover - compiled
    """The winner of finished game ``i`` (0 Red, 1 White, -1 a draw; the scorer's
    :func:`~carnac_env.batch.scoring.winner_into`, in the state's scratch arrays);
    :data:`NOT_OVER` before the end."""
    if st.phase[i] != OVER:
        return NOT_OVER
    return winner_into(st.cells[i], st.neighbours, st.min_dolmen, st.seen, st.stack, st.balance)


@njit(**_INLINE)
def value_for(winner, player):  # pragma: no cover - compiled
    """A finished game's result for ``player``: +1 won, -1 lost, 0 a draw."""
    if winner < 0:
        return 0.0
    return 1.0 if winner == player else -1.0


# --------------------------------------------------------------------- slots
@njit(**_JIT)
def reset_game(st, i):  # pragma: no cover - compiled
    """A fresh game in slot ``i``: empty board, full supply, Red to place."""
    cells = st.cells[i]
    kinds = st.kinds[i]
    free = st.free[i]
    where = st.where[i]
    for square in range(cells.shape[0]):
        cells[square] = 0
        kinds[square] = EMPTY
        free[square] = square
        where[square] = square
    st.num_lying[i] = 0
    st.supply[i] = st.megaliths
    st.empty[i] = cells.shape[0]
    st.phase[i] = PLACE
    st.to_act[i] = 0
    _clear_pending(st, i)
    fresh_views(st, i)


@njit(**_JIT)
def load_game(  # pragma: no cover - compiled
    st, i, cells, kinds, lying, num_lying, supply, empty, phase, to_act, pending, pending_colour
):
    """Put a position (checked beforehand by the core's ``validate``) into slot ``i``: its
    fields and its legal tilts (the tilt rule, :func:`tilt_fits`); the views are left to the
    caller (:func:`~carnac_env.batch.views.refresh_views`), which may not need them. The
    arguments after ``i`` come from a core state by
    :func:`~carnac_env.batch.state.game_fields`: ``lying`` may hold no pairs for a slot that
    never reads them, ``num_lying`` still counting them (later tilts append after them)."""
    count = 0
    for square in range(cells.shape[0]):
        st.cells[i, square] = cells[square]
        st.kinds[i, square] = kinds[square]
        if kinds[square] == EMPTY:
            st.free[i, count] = square
            st.where[i, square] = count
            count += 1
    for k in range(lying.shape[0]):  # the caller may pass no pairs if it never reads them
        st.lying[i, k, 0] = lying[k, 0]
        st.lying[i, k, 1] = lying[k, 1]
    st.num_lying[i] = num_lying
    st.supply[i] = supply
    st.empty[i] = empty
    st.phase[i] = phase
    st.to_act[i] = to_act
    st.pending[i] = pending
    st.pending_colour[i] = pending_colour
    for d in range(4):
        st.tilt_ok[i, d] = phase == RESPOND and tilt_fits(st, i, pending, d)


# --------------------------------------------------------------------- the batched loops
@njit(**_JIT)
def reset_all(st):  # pragma: no cover - compiled
    """A fresh game in every slot."""
    for i in range(st.cells.shape[0]):
        reset_game(st, i)


@njit(**_JIT)
def restart(st, which):  # pragma: no cover - compiled
    """A fresh game in every slot that ``which`` marks."""
    for i in range(st.cells.shape[0]):
        if which[i]:
            reset_game(st, i)


@njit(**_JIT)
def count_illegal(st, actions, active):  # pragma: no cover - compiled
    """How many of the active games' actions are illegal (0: all legal)."""
    bad = 0
    for i in range(actions.shape[0]):
        if active[i] and not is_legal(st, i, actions[i]):
            bad += 1
    return bad


@njit(**_JIT)
def find_illegal(st, actions, active, out):  # pragma: no cover - compiled
    """Mark in ``out`` the active games whose action is illegal."""
    for i in range(actions.shape[0]):
        out[i] = active[i] and not is_legal(st, i, actions[i])


@njit(**_JIT)
def step_all(st, actions, active, rewards, terminated, final, observer, obs, mask):  # pragma: no cover - compiled
    """Play the actions of the active games; score, report and reset the games that end; and
    write every game's next observation and mask, all in one pass over the games. Returns 0,
    or (changing nothing) the number of illegal actions among the active games'.

    ``final`` is ``(N, S * NUM_PLANES)`` (or ``(0, 0)`` when not wanted): the finished games
    seen by ``observer[i]``. ``obs`` ``(N, S * NUM_PLANES)`` and ``mask`` ``(N, actions)``
    receive the observations and masks (pass ``(0, 0)`` arrays to skip them).
    """
    bad = count_illegal(st, actions, active)
    if bad:
        return bad  # nothing played: the caller reports the illegal actions
    want_final = final.shape[0] > 0
    want_views = obs.shape[0] > 0
    for i in range(actions.shape[0]):
        if active[i] and play(st, i, actions[i]):
            winner = winner_into(st.cells[i], st.neighbours, st.min_dolmen, st.seen, st.stack, st.balance)
            if winner >= 0:
                rewards[i, winner] = 1.0
                rewards[i, 1 - winner] = -1.0
            terminated[i] = True
            if want_final:
                write_observation(st, i, observer[i], final[i])
            reset_game(st, i)
        if want_views:
            write_observation(st, i, st.to_act[i], obs[i])
            write_mask(st, i, mask[i])
    return 0


@njit(**_JIT)
def sample_all(st, uniform, actions):  # pragma: no cover - compiled
    """One uniformly random legal action per game, from one uniform number per game."""
    for i in range(uniform.shape[0]):
        actions[i] = pick(st, i, uniform[i])
