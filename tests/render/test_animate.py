"""Animated replays: one frame per decision plus the final position, GIF and MP4."""

from __future__ import annotations

import itertools
import sys

import numpy as np
import pytest

pytest.importorskip("PIL")
from _games import random_game
from PIL import Image

from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError, RecordError
from carnac_env.render.animate import captions as animate_captions
from carnac_env.render.animate import frames, write_animation


def random_record(board: str = "petit_menec", seed: int = 4) -> GameRecord:
    record = random_game(board, seed)
    record.meta.clear()  # no agent names on the frames
    return record


def test_gif_has_one_frame_per_decision_plus_the_end(tmp_path):
    record = random_record()
    path = tmp_path / "game.gif"
    write_animation(record, path, fps=4)
    with Image.open(path) as gif:
        assert gif.format == "GIF"
        assert gif.n_frames == len(record.moves) + 1
        sizes = set()
        durations = []
        for index in range(gif.n_frames):
            gif.seek(index)
            sizes.add(gif.convert("RGB").size)
            durations.append(gif.info["duration"])
        assert len(sizes) == 1
        assert durations[0] == 250 and durations[-1] == 750  # the end is held longer
        assert gif.info.get("loop") == 0


def test_captions_name_each_move_and_the_result():
    record = random_record()
    captions = [caption for _, caption in frames(record)]
    assert len(captions) == len(record.moves) + 1
    assert captions[0] == "Start: petit_menec board"
    # Each frame names the move just made, as `carnac replay` prints it above the position.
    assert captions[1] == f"1. Red: {record.moves[0]}"
    for number, (caption, move) in enumerate(zip(captions[1:-1], record.moves), start=1):
        assert caption.startswith(f"{number}. ") and caption.endswith(move)
    assert captions[-1].startswith(f"{len(record.moves)}. ") and "Game over" in captions[-1]
    assert captions == animate_captions(record)


def test_frames_differ_as_the_game_goes_on():
    record = random_record(seed=9)
    images = [np.asarray(image) for image, _ in frames(record, cell=24)]
    assert all(not np.array_equal(a, b) for a, b in itertools.pairwise(images))


def test_unfinished_record_ends_with_its_last_position(tmp_path):
    record = random_record()
    record = GameRecord(record.board, record.moves[:5])
    write_animation(record, tmp_path / "part.gif")
    with Image.open(tmp_path / "part.gif") as gif:
        assert gif.n_frames == 6
    assert list(frames(record))[-1][1].endswith(f"{record.moves[4]}. (unfinished)")


def test_mp4(tmp_path):
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    record = random_record()
    path = tmp_path / "game.mp4"
    write_animation(record, path, fps=2)
    frames_written, _seconds = imageio_ffmpeg.count_frames_and_secs(str(path))
    assert frames_written == len(record.moves) + 3  # the final position is held three frames


def test_errors(tmp_path, monkeypatch):
    record = random_record()
    with pytest.raises(CarnacError, match=r"\.gif or \.mp4"):
        write_animation(record, tmp_path / "game.avi")
    with pytest.raises(CarnacError, match="fps"):
        write_animation(record, tmp_path / "game.gif", fps=0)
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # as if the video extra were missing
    with pytest.raises(CarnacError, match=r"carnac-env\[video\]"):
        write_animation(record, tmp_path / "game.mp4")
    bad = GameRecord(record.board, [*record.moves[:2], "zz9 Rns"])
    with pytest.raises(RecordError, match="move 3"):
        write_animation(bad, tmp_path / "bad.gif")
    assert not (tmp_path / "bad.gif").exists()


def test_missing_folder_is_a_clean_error(tmp_path):
    with pytest.raises(CarnacError, match="does not exist"):
        write_animation(random_record(), tmp_path / "nowhere" / "game.gif")
