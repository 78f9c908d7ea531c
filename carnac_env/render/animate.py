"""Animated replays of recorded games: ``.gif`` (Pillow, a core dependency) or ``.mp4``
(imageio-ffmpeg, the ``video`` extra, which ships its own ffmpeg).

One frame for the starting position, then one after each decision, captioned with the move
just made ("12. White: tilt N", its squares marked with a blue dot), as ``carnac replay``
prints it, with the dolmens outlined as they stand and each side's Board Game Arena score
beside its dolmens under the board; the last frame (held three times as long) adds the
result. ``carnac replay FILE --gif out.gif`` calls :func:`write_animation`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from carnac_env import _checks
from carnac_env._files import writing
from carnac_env.core.actions import decode
from carnac_env.core.game import PLAYER_NAMES, GameState
from carnac_env.core.notation import parse_action
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError, RecordError
from carnac_env.render.image import ImageRenderer
from carnac_env.render.style import CAPTION_BACKGROUND, FACE_COLOURS, FACE_EDGES, PANEL_LINE, TEXT_COLOUR

FORMATS = (".gif", ".mp4")


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
    caption_height = round(renderer.font_size * 1.9)
    caption_height += (height + caption_height) % 2  # even sizes suit video encoders
    for state, caption, last, mover in positions(record):
        yield _with_caption(renderer, state, last, caption, mover, caption_height, width, height), caption


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


def write_animation(record: GameRecord, path: str | Path, fps: float = 2.0, *, cell: int = 40) -> None:
    """Write an animation of ``record`` to ``path``: one frame per decision plus the final
    position (shown three times as long), each captioned with the move in notation.

    Args:
        record: the game (finished or not).
        path: ``.gif`` (Pillow) or ``.mp4`` (needs ``pip install 'carnac-env[video]'``).
        fps: decisions per second.
        cell: square size in pixels.

    Raises:
        CarnacError: an unknown file extension, a missing extra, or ``fps`` not positive.
        RecordError: a move of the record that does not replay.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.parent.is_dir():
        raise CarnacError(f"cannot write {path}: the folder {path.parent} does not exist")
    if suffix not in FORMATS:
        raise CarnacError(f"cannot write {path.name!r}: expected a file name ending in {' or '.join(FORMATS)}")
    fps = _checks.number("fps", fps, 0.0, 1000.0, low_open=True)
    if suffix == ".mp4":
        try:
            import imageio_ffmpeg
        except ImportError:
            raise CarnacError("writing .mp4 needs imageio-ffmpeg: pip install 'carnac-env[video]'") from None
    images = [image for image, _ in frames(record, cell)]
    # Atomic (carnac_env._files): a full disk or a failed encoder leaves no half file.
    if suffix == ".gif":
        with writing(path) as handle:
            _write_gif(images, handle, fps)
    else:
        _write_mp4(imageio_ffmpeg, images, path, fps)


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


def _write_mp4(imageio_ffmpeg: Any, images: list[Any], path: Path, fps: float) -> None:
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
