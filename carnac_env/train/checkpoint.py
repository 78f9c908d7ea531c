"""A run's checkpoints: written atomically, read without running code, checked field by field.

Two files, both tensors and plain values only (``torch.save``), read back with
``torch.load(weights_only=True)``:

* ``checkpoint.pt``: everything a run needs to continue bit for bit (network, optimiser, replay
  buffer, random generators, counters, curve);
* ``resume.pt``: the same without the replay buffer: a few MB, small enough to keep in version
  control, from which a run continues on a new machine with an empty buffer (which the next
  iterations fill again). It continues the run, not bit for bit as ``checkpoint.pt`` does.

A run started on a folder that holds ``checkpoint.pt`` resumes from it; else from
``resume.pt`` if that is there. Every number read is checked finite (weights, optimiser state,
counters, settings, curve rows), and every text bounded (:data:`TEXT_CHARS` in a curve row,
:data:`~carnac_env.train.config.SETTING_CHARS` in a setting); an error names the file and the
field. A write that fails (a full disk) is ``cannot write PATH: REASON``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import IO, Any

import torch

from carnac_env import _checks, _files
from carnac_env.errors import CarnacError
from carnac_env.train.config import config_from

__all__ = ["CHECKPOINT_FORMAT", "CHECKPOINT_VERSION", "COUNTERS", "read", "restore", "write"]

#: What a checkpoint says it is.
CHECKPOINT_FORMAT = "carnac-train-checkpoint"
#: Version 3: the replay buffer in chunks of one board each, the board mix's counters.
CHECKPOINT_VERSION = 3
#: The counters a checkpoint holds.
COUNTERS = ("iteration", "games_played", "positions", "steps", "groups")
#: The numbers a checkpoint holds (finite).
NUMBERS = ("wall", "cpu", "best_score")
#: The most fields of a curve row, and the most characters of a text in one (its names and
#: values): a checkpoint's rows are copied into curve.csv, curve.json and log.txt.
ROW_FIELDS = 1_000
TEXT_CHARS = 1_000
#: The most a whole number in a curve row may be (the counters stay below 2**62).
ROW_INTEGERS = 2**63
#: The numbers of an AdamW parameter group: (first, last) of the range of each (finite), and
#: whether a group must hold it; ``betas`` is a pair. Any other number in a group is checked finite.
GROUP_NUMBERS: dict[str, tuple[float, float | None, bool]] = {
    "lr": (0.0, None, True),
    "weight_decay": (0.0, None, True),
    "eps": (0.0, None, False),
    "betas": (0.0, 1.0, False),
}


def read(path: Path) -> dict[str, Any]:
    """The data of the checkpoint at ``path``, read without running code, its format, version
    and settings checked.

    Raises:
        CarnacError: naming the file: not a checkpoint, another version, bad settings.
    """
    source = str(path)
    try:
        # opened through _files.reading: a FIFO, a device or a folder there is refused at once
        # (never a read that waits forever while the run holds its folder's lock)
        with _files.reading(path, "checkpoint") as handle:
            data = torch.load(handle, map_location="cpu", weights_only=True)
    except CarnacError:
        raise
    except Exception as err:  # torch raises many kinds for a bad file (UnpicklingError, RuntimeError, ...)
        raise CarnacError(
            f"{source} is not a checkpoint this carnac_env can read ({type(err).__name__}: "
            f"{str(err).splitlines()[0][:200] if str(err) else 'no detail'}); expected a file written by "
            "carnac train (a run from an older version cannot be resumed: start it in a new --out)"
        ) from None
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise CarnacError(f"{source} is not a carnac training checkpoint (no format {CHECKPOINT_FORMAT!r})")
    if data.get("version") != CHECKPOINT_VERSION or isinstance(data.get("version"), bool):
        raise CarnacError(
            f"{source} has checkpoint version {data.get('version')!r}; this carnac_env reads {CHECKPOINT_VERSION} "
            "(a run from an older version cannot be resumed: start it in a new --out, with --init MODEL to keep "
            "its network)"
        )
    if not isinstance(data.get("config"), dict):
        raise CarnacError(f"{source}: field 'config' is missing or not a mapping")
    try:
        config_from(data["config"])
    except CarnacError as err:
        raise CarnacError(f"{source}: field 'config': {err}") from None
    return data


def restore(trainer: Any, data: dict[str, Any], source: str) -> None:
    """Load checkpoint ``data`` (from :func:`read`) into ``trainer``, field by field; a file
    without a replay buffer (``resume.pt``) leaves the trainer's buffer empty.

    Raises:
        CarnacError: naming ``source`` and the field that does not fit.
    """

    def field(name: str, kind: type | tuple[type, ...]) -> Any:
        value = data.get(name)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise CarnacError(f"{source}: field {name!r} is {type(value).__name__}, expected {kind}")
        return value

    net_state = field("net", dict)
    for name, value in net_state.items():
        if not isinstance(value, torch.Tensor) or value.layout != torch.strided or value.dtype != torch.float32:
            raise CarnacError(f"{source}: field net.{name} is not a dense float32 tensor")
        if not bool(torch.isfinite(value).all()):
            raise CarnacError(f"{source}: field net.{name} holds NaN or infinite weights")
    try:
        trainer.net.load_state_dict(net_state, strict=True)
    except RuntimeError as err:
        detail = str(err).splitlines()[0]
        raise CarnacError(f"{source}: field 'net' does not fit the run's network ({detail})") from None
    _check_optimizer(field("optimizer", dict), trainer.net, source)
    try:
        trainer.optimizer.load_state_dict(data["optimizer"])
    except (ValueError, KeyError, TypeError, RuntimeError) as err:
        raise CarnacError(f"{source}: field 'optimizer' does not fit the network ({err})") from None
    if "replay" in data:
        trainer.replay.load(data["replay"], source)
    try:
        trainer.rng.bit_generator.state = field("rng", dict)
    except (ValueError, KeyError, TypeError, OverflowError) as err:
        raise CarnacError(f"{source}: field 'rng' is not a PCG64 generator state ({err})") from None
    torch_rng = field("torch_rng", torch.Tensor)
    if torch_rng.dtype != torch.uint8 or torch_rng.dim() != 1:
        raise CarnacError(f"{source}: field 'torch_rng' is not a PyTorch generator state (a uint8 vector)")
    try:
        torch.set_rng_state(torch_rng)
    except (RuntimeError, TypeError) as err:
        raise CarnacError(f"{source}: field 'torch_rng' is not a PyTorch generator state ({err})") from None
    for name in COUNTERS:
        value = field(name, int)
        if not 0 <= value < 2**62:
            raise CarnacError(f"{source}: field {name!r}={value}; expected a whole number >= 0")
        setattr(trainer, name, value)
    for name in NUMBERS:
        value = field(name, (int, float))
        if not math.isfinite(value):
            raise CarnacError(f"{source}: field {name!r}={value!r}; expected a finite number")
        setattr(trainer, name, float(value))
    curve = field("curve", list)
    check_curve(curve, trainer.iteration, source)
    trainer.curve = curve


def _shown(value: Any) -> str:
    """``value``'s repr, cut to 60 characters (a hostile file's text is never copied whole)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:50]}... ({len(text)} characters)"


def _plain_value(value: Any) -> bool:
    """A curve row's value: a finite number (a whole one within :data:`ROW_INTEGERS`) or a
    text of at most :data:`TEXT_CHARS` characters; never a bool, NaN or an infinity."""
    if isinstance(value, str):
        return len(value) <= TEXT_CHARS
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -ROW_INTEGERS < value < ROW_INTEGERS
    return isinstance(value, float) and math.isfinite(value)


def check_curve(curve: list[Any], iterations: int, source: str) -> None:
    """A checkpoint's curve: one row per iteration, row N a mapping with ``'iteration': N`` of at
    most :data:`ROW_FIELDS` names (texts of at most :data:`TEXT_CHARS` characters) to values
    :func:`_plain_value` accepts.

    Raises:
        CarnacError: naming ``source``, the row and the field that does not fit.
    """
    if len(curve) != iterations:
        raise CarnacError(
            f"{source}: field 'curve' holds {len(curve)} rows; expected one row per iteration ({iterations}), each a "
            "mapping of names to numbers or text with an 'iteration'"
        )
    for n, row in enumerate(curve, 1):
        where = f"{source}: field 'curve' row {n}"
        if not isinstance(row, dict) or not 0 < len(row) <= ROW_FIELDS:
            raise CarnacError(f"{where} is not a mapping of 1 to {ROW_FIELDS} names to numbers or text")
        number = row.get("iteration")
        if isinstance(number, bool) or number != n:
            raise CarnacError(f"{where}: 'iteration'={_shown(number)}; expected {n} (the rows in order)")
        for key, value in row.items():
            if not isinstance(key, str) or len(key) > TEXT_CHARS:
                raise CarnacError(
                    f"{where} has the name {_shown(key)}; expected a text of at most {TEXT_CHARS} characters"
                )
            if not _plain_value(value):
                raise CarnacError(
                    f"{where}: {key!r}={_shown(value)}; expected a finite number or a text of at most "
                    f"{TEXT_CHARS} characters"
                )


def _check_optimizer(state: dict[str, Any], net: torch.nn.Module, source: str) -> None:
    """AdamW's state of ``net``'s parameters: each moment a float32 tensor of its parameter's
    shape, each step a non-negative count, each learning rate a finite number."""
    shapes = [p.shape for p in net.parameters()]
    groups = state.get("param_groups")
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        raise CarnacError(f"{source}: field optimizer.param_groups must be a list of mappings")
    for g in groups:
        _check_group(g, source)
    per_param = state.get("state")
    if not isinstance(per_param, dict):
        raise CarnacError(f"{source}: field optimizer.state must be a mapping")
    for index, entry in per_param.items():
        if not isinstance(index, int) or not 0 <= index < len(shapes) or not isinstance(entry, dict):
            raise CarnacError(f"{source}: field optimizer.state has an entry {index!r} for no parameter")
        for key, value in entry.items():
            _check_moment(f"{source}: field optimizer.state[{index}].{key}", key, value, shapes[index])


def _check_moment(where: str, key: str, value: Any, shape: torch.Size) -> None:
    """One tensor of a parameter's AdamW state: ``step`` a count >= 0, a moment a finite float32
    tensor of its parameter's ``shape``; CarnacError naming ``where`` otherwise."""
    if not isinstance(value, torch.Tensor) or value.layout != torch.strided or value.requires_grad:
        raise CarnacError(f"{where} is not a plain tensor")
    if key == "step":
        if value.numel() != 1 or not math.isfinite(float(value)) or float(value) < 0:
            raise CarnacError(f"{where}={value!r}; expected a count >= 0")
    elif value.dtype != torch.float32 or value.shape != shape:
        raise CarnacError(f"{where} is {value.dtype} {tuple(value.shape)}, expected float32 {tuple(shape)}")
    elif not bool(torch.isfinite(value).all()):
        raise CarnacError(f"{where} holds NaN or infinite values")


def _check_group(group: dict[str, Any], source: str) -> None:
    """An AdamW parameter group: the numbers of :data:`GROUP_NUMBERS` in range (``betas`` a
    pair), those it requires there, and every other number (alone or in a list) finite.

    Raises:
        CarnacError: naming ``source`` and the group's field.
    """
    for key, (_, _, required) in GROUP_NUMBERS.items():
        if key not in group and required:
            raise CarnacError(f"{source}: field optimizer.param_groups {key} is missing; expected a finite number >= 0")
        if key == "betas" and key in group and not (isinstance(group[key], (list, tuple)) and len(group[key]) == 2):
            raise CarnacError(f"{source}: field optimizer.param_groups betas={_shown(group[key])}; expected a pair")
    for key, value in group.items():
        low, high, _ = GROUP_NUMBERS.get(key, (None, None, False))
        spread = isinstance(value, (list, tuple)) and (key == "betas" or key not in GROUP_NUMBERS)
        for item in value if spread else [value]:
            if key in GROUP_NUMBERS or (isinstance(item, (int, float)) and not isinstance(item, bool)):
                _checks.number(f"{source}: field optimizer.param_groups {key}", item, low, high)


def write(trainer: Any, path: Path, replay: bool = True) -> None:
    """Write ``trainer``'s checkpoint to ``path`` atomically (a temporary file, then a rename);
    ``replay=False`` leaves the replay buffer out (``resume.pt``)."""
    data: dict[str, Any] = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "config": trainer.config.as_dict(),
        "net": trainer.net.state_dict(),
        "optimizer": trainer.optimizer.state_dict(),
        "rng": trainer.rng.bit_generator.state,
        "torch_rng": torch.get_rng_state(),
        "curve": trainer.curve,
        **{name: getattr(trainer, name) for name in (*COUNTERS, *NUMBERS)},
    }
    if replay:
        data["replay"] = trainer.replay.state()
    with _files.writing(path) as out:
        kept = _KeptErrors(out)
        try:
            torch.save(data, kept)
        except RuntimeError:
            # torch reports a failed write (a full disk) as its own "unexpected pos": the
            # OS's error, raised again here, becomes _files' "cannot write PATH: REASON"
            if kept.error is None:
                raise
            raise kept.error from None


class _KeptErrors:
    """A binary file handle that keeps the ``OSError`` of a failed write (for :func:`write`)."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.error: OSError | None = None

    def write(self, data: Any) -> int:
        try:
            return self.handle.write(data)
        except OSError as err:
            self.error = err
            raise

    def flush(self) -> None:
        self.handle.flush()
