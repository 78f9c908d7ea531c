"""Animated replays of recorded games: ``.gif`` (Pillow, a core dependency) or ``.mp4``
(imageio-ffmpeg, the ``video`` extra, which ships its own ffmpeg).

One frame for the starting position, then one after each decision, captioned with the move
just made ("12. White: tilt N", its squares marked with a blue dot), as ``carnac replay``
prints it, with the dolmens outlined as they stand and each side's Board Game Arena score
beside its dolmens under the board; the last frame (held three times as long) adds the
result. ``carnac replay FILE --gif out.gif`` calls :func:`write_animation`.

Every frame is held in memory before the file is encoded, so the size of an animation is
decided before anything is drawn: a frame above
:data:`~carnac_env.render.image.MAX_FRAME_PIXELS` pixels, or frames that would take more
than :data:`MAX_ANIMATION_BYTES` together (frames x width x height x 3 bytes), are refused
with a :class:`~carnac_env.errors.CarnacError` that gives the size, the cap and the largest
``cell`` that fits. A legal record is at most a few kilobytes, but on a 64 x 64 custom board
its frames at the default cell would take gigabytes.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from carnac_env import _checks
from carnac_env._files import check_output, is_stdout, writing
from carnac_env.core.actions import decode
from carnac_env.core.game import PLAYER_NAMES, GameState
from carnac_env.core.notation import parse_action
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError, RecordError
from carnac_env.render.image import MAX_FRAME_PIXELS, ImageRenderer, font_size, picture_layout
from carnac_env.render.style import CAPTION_BACKGROUND, FACE_COLOURS, FACE_EDGES, PANEL_LINE, TEXT_COLOUR

FORMATS = (".gif", ".mp4")

#: The most memory the frames of one animation may take, in bytes, as estimated before any is
#: drawn: frames x width x height x 3 (RGB). 512 MiB holds every game on the shipped boards
#: at the default cell (a large-board game of 127 megaliths takes about 230 MB); a bigger
#: custom board needs a smaller ``cell``.
MAX_ANIMATION_BYTES = 512 * 2**20


def captions(record: GameRecord) -> list[str]:
    """The caption of each frame of a replay: ``"Start: medium board"``, then one per move,
    naming the move **just made** (``"12. White: tilt N"``), as ``carnac replay`` prints it
    above each position. The last caption adds the result (``"... Game over: Red wins"``) or
    ``"(unfinished)"``.

    Raises:
        RecordError: a move that does not parse or is illegal.
    """
    return [caption for _, caption, _, _ in positions(record)]


def positions(record: GameRecord) -> Iterator[tuple[GameState, str, tuple[int, ...], int | None]]:
    """Each position of the replay with its caption, the squares of the move just made and
    who made it (``None`` for the start)."""
    board = record.board
    state = GameState(board)
    total = len(record.moves)
    yield state.copy(), f"Start: {board.name} board" + (" (no moves)" if not total else ""), (), None
    for number, text in enumerate(record.moves, start=1):
        mover = state.to_act
        try:
            action = parse_action(board, text, mover)
            reason = state.why_illegal(action)
        except CarnacError as err:
            raise RecordError(f"move {number} ({text!r}): {err}") from None
        if reason is not None:
            raise RecordError(f"move {number} ({text!r}) is illegal: {reason}")
        last = move_squares(state, action)
        state.apply_unchecked(action)
        caption = f"{number}. {PLAYER_NAMES[mover]}: {text}"
        if number == total:
            caption += ". " + (_game_over(state) if state.is_over else "(unfinished)")
        yield state.copy(), caption, last, mover


def _game_over(state: GameState) -> str:
    result = state.result()
    return "Game over: a draw" if result.winner is None else f"Game over: {PLAYER_NAMES[result.winner]} wins"


def move_squares(state: GameState, action: int) -> tuple[int, ...]:
    """The squares that ``action`` (legal in ``state``, not yet played) puts a megalith on:
    the square of a placement, the two squares of a tilt, none for a decline."""
    move = decode(state.board, action)
    if move.kind == "place":
        return (move.square,)
    if move.kind == "tilt":
        return state.tilt_targets()[move.direction][:2]
    return ()


def frames(record: GameRecord, cell: int = 40) -> Iterator[tuple[Any, str]]:
    """The pictures of a replay: ``(Pillow RGB image, caption)`` for the starting position,
    then for the position after each move (the move's squares marked with a blue dot), with
    the captions of :func:`captions`. Every image has the same size.

    Raises:
        RecordError: a move that does not parse or is illegal.
    """
    renderer = ImageRenderer(record.board, cell)
    width, height = renderer.layout.width, renderer.layout.height
    caption_height = _caption_height(renderer.font_size, height)
    for state, caption, last, mover in positions(record):
        yield _with_caption(renderer, state, last, caption, mover, caption_height, width, height), caption


def _caption_height(size: int, height: int) -> int:
    """The height of the caption strip above a picture ``height`` pixels high."""
    caption_height = round(size * 1.9)
    return caption_height + (height + caption_height) % 2  # even sizes suit video encoders


def frame_size(record: GameRecord, cell: int = 40) -> tuple[int, int]:
    """``(width, height)`` in pixels of every frame of :func:`frames`, worked out without
    drawing.

    Raises:
        CarnacError: ``cell`` is not a whole number of at least 8.
    """
    layout = picture_layout(record.board, cell)
    return layout.width, layout.height + _caption_height(font_size(layout.cell), layout.height)


def animation_bytes(record: GameRecord, cell: int = 40) -> int:
    """The memory the frames of ``record``'s animation take (frames x width x height x 3),
    which :func:`write_animation` holds to :data:`MAX_ANIMATION_BYTES`; nothing is drawn."""
    width, height = frame_size(record, cell)
    return (len(record.moves) + 1) * width * height * 3


def check_animation_size(record: GameRecord, cell: int = 40) -> None:
    """Refuse an animation of ``record`` whose frames would be bigger than
    :data:`~carnac_env.render.image.MAX_FRAME_PIXELS` or take more than
    :data:`MAX_ANIMATION_BYTES`, before anything is drawn.

    Raises:
        CarnacError: naming the size, the cap and the largest ``cell`` that fits (or, if none
            does, that the game is too long to animate; ``carnac replay --html`` has no such cap).
    """
    width, height = frame_size(record, cell)
    total = animation_bytes(record, cell)
    if width * height <= MAX_FRAME_PIXELS and total <= MAX_ANIMATION_BYTES:
        return
    fits = next((smaller for smaller in range(int(cell) - 1, 7, -1) if _fits(record, smaller)), None)
    way = (
        f"a cell of {fits} pixels or less fits (write_animation(..., cell={fits}))"
        if fits is not None
        else "no cell fits: the game has too many moves to animate"
    )
    way += "; a web replay (carnac replay FILE --html PAGE.html) has no such cap"
    board = f"{record.board.rows} x {record.board.cols} board"
    if width * height > MAX_FRAME_PIXELS:
        raise CarnacError(
            f"a frame of the animation of this {board} would be {width} x {height} pixels (cell {cell}), above the "
            f"cap of {MAX_FRAME_PIXELS:,} pixels (carnac_env.render.image.MAX_FRAME_PIXELS); {way}"
        )
    raise CarnacError(
        f"the animation of this game ({len(record.moves)} moves on a {board}) would take {total / 2**20:,.0f} MiB "
        f"({len(record.moves) + 1} frames of {width} x {height} pixels, cell {cell}), above the cap of "
        f"{MAX_ANIMATION_BYTES / 2**20:,.0f} MiB (carnac_env.render.animate.MAX_ANIMATION_BYTES); {way}"
    )


def _fits(record: GameRecord, cell: int) -> bool:
    width, height = frame_size(record, cell)
    return width * height <= MAX_FRAME_PIXELS and animation_bytes(record, cell) <= MAX_ANIMATION_BYTES


def _with_caption(
    renderer: ImageRenderer,
    state: GameState,
    marks: tuple[int, ...],
    caption: str,
    player: int | None,
    caption_height: int,
    width: int,
    height: int,
) -> Any:
    image = renderer.new_image(width, height + caption_height, CAPTION_BACKGROUND)
    image.paste(renderer.draw_image(state, marks=marks, dolmens=True), (0, caption_height))
    draw = renderer.drawing(image)
    size = renderer.font_size
    x = renderer.layout.left
    y = (caption_height - size) // 2
    if player is not None:
        draw.rectangle(
            (x, y + 1, x + size - 2, y + size - 1), fill=FACE_COLOURS[player + 1], outline=FACE_EDGES[player + 1]
        )
        x += size + size // 3
    sprite = renderer.text_sprite(caption, round(size * 1.1), TEXT_COLOUR)
    image.paste(sprite, (x, y - size // 10), sprite)
    draw.line((0, caption_height - 1, width, caption_height - 1), fill=PANEL_LINE)
    return image


def write_animation(
    record: GameRecord, path: str | Path, fps: float = 2.0, *, cell: int = 40, suffix: str | None = None
) -> None:
    """Write an animation of ``record`` to ``path``: one frame per decision plus the final
    position (shown three times as long), each captioned with the move in notation.

    Args:
        record: the game (finished or not).
        path: ``.gif`` (Pillow) or ``.mp4`` (needs ``pip install 'carnac-env[video]'``), or
            ``-`` for standard output (with ``suffix``).
        fps: decisions per second.
        cell: square size in pixels.
        suffix: the format, ``".gif"`` or ``".mp4"``, when ``path`` is ``-`` (by default, the
            file name's ending).

    Raises:
        CarnacError: an unknown file extension, a missing extra, ``fps`` not positive, an
            output that is not a regular file (see :mod:`carnac_env._files`), or frames too
            big to hold (see :func:`check_animation_size`; refused before any is drawn).
        RecordError: a move of the record that does not replay.
    """
    to_stdout = is_stdout(path)
    path = Path(path)
    if to_stdout:
        if suffix is None or suffix.lower() not in FORMATS:
            raise CarnacError(f"writing an animation to standard output needs its format: {' or '.join(FORMATS)}")
        suffix = suffix.lower()
    else:
        suffix = path.suffix.lower()
        if not path.parent.is_dir():
            raise CarnacError(f"cannot write {path}: the folder {path.parent} does not exist")
        if suffix not in FORMATS:
            raise CarnacError(f"cannot write {path.name!r}: expected a file name ending in {' or '.join(FORMATS)}")
    target: str | Path = "-" if to_stdout else path
    check_output(target)  # a device, a FIFO or a folder there: refused before any drawing
    fps = _checks.number("fps", fps, 0.0, 1000.0, low_open=True)
    if suffix == ".mp4":
        try:
            import imageio_ffmpeg
        except ImportError:
            raise CarnacError("writing .mp4 needs imageio-ffmpeg: pip install 'carnac-env[video]'") from None
    check_animation_size(record, cell)
    images = [image for image, _ in frames(record, cell)]
    # Atomic (carnac_env._files): a full disk or a failed encoder leaves no half file.
    if suffix == ".gif":
        with writing(target) as handle:
            _write_gif(images, handle, fps)
    else:
        _write_mp4(imageio_ffmpeg, images, target, fps)


def _write_gif(images: list[Any], handle: BinaryIO, fps: float) -> None:
    from PIL import Image

    # One shared palette, no dithering: small files, no flicker. The palette is made from a
    # strip of up to 12 frames spread over the game (the pieces, previews, rings, outlines).
    step = max(1, len(images) // 11)
    sample = [*images[:-1:step], images[-1]]
    width, height = images[0].size
    strip = Image.new("RGB", (width, height * len(sample)))
    for index, image in enumerate(sample):
        strip.paste(image, (0, index * height))
    palette = strip.quantize(colors=255, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    paletted = [image.quantize(palette=palette, dither=Image.Dither.NONE) for image in images]
    duration = round(1000 / fps)
    durations = [duration] * (len(paletted) - 1) + [3 * duration]
    paletted[0].save(
        handle,
        format="GIF",
        save_all=True,
        append_images=paletted[1:],
        duration=durations,
        loop=0,
        optimize=False,
        disposal=1,
    )


def _write_mp4(imageio_ffmpeg: Any, images: list[Any], path: str | Path, fps: float) -> None:
    """Encode with ffmpeg into a private temporary folder (ffmpeg writes by name), then copy
    the finished video into place through :func:`~carnac_env._files.writing`."""
    with tempfile.TemporaryDirectory(prefix="carnac-mp4-") as private:
        encoded = Path(private) / "replay.mp4"
        try:
            _encode_mp4(imageio_ffmpeg, images, encoded, fps)
        except (OSError, RuntimeError) as err:
            raise CarnacError(f"cannot write {path}: the video encoder failed ({err})") from None
        with open(encoded, "rb") as source, writing(path) as handle:
            shutil.copyfileobj(source, handle)


def _encode_mp4(imageio_ffmpeg: Any, images: list[Any], path: Path, fps: float) -> None:
    width, height = images[0].size
    writer = imageio_ffmpeg.write_frames(
        str(path),
        (width, height),
        fps=fps,
        pix_fmt_out="yuv420p",  # plays everywhere; needs even sizes, which the renderer keeps
        quality=8,
        macro_block_size=2,
    )
    writer.send(None)  # start the encoder
    try:
        for image in [*images, images[-1], images[-1]]:
            writer.send(np.ascontiguousarray(np.asarray(image)))
    finally:
        writer.close()
