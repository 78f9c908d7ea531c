"""A run's checkpoints: written atomically, read without running code, checked field by field.

Two files, both tensors and plain values only (``torch.save``), read back with
``torch.load(weights_only=True)``:

* ``checkpoint.pt``: everything a run needs to continue bit for bit (network, optimiser, replay
  buffer, random generators, counters, curve);
* ``resume.pt``: the same without the replay buffer: a few MB, small enough to keep in version
  control, from which a run continues on a new machine with an empty buffer (which the next
  iterations fill again). It continues the run, not bit for bit as ``checkpoint.pt`` does.

A run started on a folder that holds ``checkpoint.pt`` resumes from it; else from
``resume.pt`` if that is there.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

from carnac_env import _files
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
    if len(curve) != trainer.iteration or not all(_plain_row(row) for row in curve):
        raise CarnacError(
            f"{source}: field 'curve' must hold one row per iteration ({trainer.iteration}), each a mapping of "
            "names to numbers or text with an 'iteration'"
        )
    trainer.curve = curve


def _plain_row(row: Any) -> bool:
    """A curve row: names to numbers or text, with a whole 'iteration'."""
    return (
        isinstance(row, dict)
        and isinstance(row.get("iteration"), int)
        and all(isinstance(k, str) and isinstance(v, (int, float, str)) for k, v in row.items())
    )


def _check_optimizer(state: dict[str, Any], net: torch.nn.Module, source: str) -> None:
    """AdamW's state of ``net``'s parameters: each moment a float32 tensor of its parameter's
    shape, each step a non-negative count, each learning rate a finite number."""
    shapes = [p.shape for p in net.parameters()]
    groups = state.get("param_groups")
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        raise CarnacError(f"{source}: field optimizer.param_groups must be a list of mappings")
    for g in groups:
        for key in ("lr", "weight_decay"):
            value = g.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise CarnacError(
                    f"{source}: field optimizer.param_groups {key}={value!r}; expected a finite number >= 0"
                )
    per_param = state.get("state")
    if not isinstance(per_param, dict):
        raise CarnacError(f"{source}: field optimizer.state must be a mapping")
    for index, entry in per_param.items():
        if not isinstance(index, int) or not 0 <= index < len(shapes) or not isinstance(entry, dict):
            raise CarnacError(f"{source}: field optimizer.state has an entry {index!r} for no parameter")
        for key, value in entry.items():
            if not isinstance(value, torch.Tensor) or value.layout != torch.strided or value.requires_grad:
                raise CarnacError(f"{source}: field optimizer.state[{index}].{key} is not a plain tensor")
            if key == "step":
                if value.numel() != 1 or not math.isfinite(float(value)) or float(value) < 0:
                    raise CarnacError(f"{source}: field optimizer.state[{index}].step={value!r}; expected a count >= 0")
            elif value.dtype != torch.float32 or value.shape != shapes[index]:
                raise CarnacError(
                    f"{source}: field optimizer.state[{index}].{key} is {value.dtype} {tuple(value.shape)}, expected "
                    f"float32 {tuple(shapes[index])}"
                )


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
        torch.save(data, out)
