"""The policy-value network in PyTorch, the twin of :class:`carnac_env.models.PolicyValueNet`.

The parameter names and layouts are PyTorch's and are exactly those of
:func:`carnac_env.models.parameter_shapes`, so :func:`to_numpy` is a plain copy of the
state dict; tests/test_az.py checks that both networks give the same outputs. The ownership
head (when the run trains one) is used only by the loss.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional

from carnac_env.core.boards import Board
from carnac_env.core.observation import AWAITING, NUM_PLANES, SUPPLY
from carnac_env.models import PolicyValueNet


class Block(nn.Module):
    """A residual block: two 3x3 convolutions and a skip connection."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return functional.relu(h + self.conv2(functional.relu(self.conv1(h))))


class TorchNet(nn.Module):
    """See :mod:`carnac_env.models.network` for the architecture.

    Args:
        channels: feature maps per layer.
        blocks: residual blocks.
        hidden: units of the value head's hidden layer.
        megaliths: what the supply plane is divided by.
        ownership: with the ownership head (3 maps: the square's final colour is the player's,
            the opponent's, or it stays empty).
    """

    def __init__(
        self, channels: int = 32, blocks: int = 3, hidden: int = 64, megaliths: int = 28, ownership: bool = False
    ) -> None:
        super().__init__()
        self.channels, self.hidden, self.megaliths = channels, hidden, megaliths
        self.has_ownership = bool(ownership)
        self.stem = nn.Conv2d(NUM_PLANES, channels, 3, padding=1)
        self.blocks = nn.ModuleList(Block(channels) for _ in range(blocks))
        self.place = nn.Conv2d(channels, 4, 1)
        self.respond = nn.Linear(3 * channels, 5)
        self.value1 = nn.Linear(3 * channels, hidden)
        self.value2 = nn.Linear(hidden, 1)
        if self.has_ownership:
            self.ownership = nn.Conv2d(channels, 3, 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``obs`` ``(N, rows, cols, 9)`` (any number type) -> logits ``(N, A)`` and values ``(N,)``."""
        logits, value, _ = self.forward_all(obs)
        return logits, value

    def forward_all(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """:meth:`forward` plus the ownership logits ``(N, squares, 3)`` (None without the head)."""
        x = obs.float()
        scale = torch.ones(NUM_PLANES, dtype=x.dtype)
        scale[SUPPLY] = 1.0 / self.megaliths
        x = x * scale
        n, rows, cols, _ = x.shape
        h = functional.relu(self.stem(x.permute(0, 3, 1, 2)))
        for block in self.blocks:
            h = block(h)
        place = self.place(h).permute(0, 2, 3, 1).reshape(n, rows * cols * 4)
        flat = h.flatten(2)  # (N, C, squares)
        awaiting = x[..., AWAITING].reshape(n, 1, rows * cols)
        pooled = torch.cat([flat.mean(2), flat.amax(2), (flat * awaiting).sum(2)], dim=1)
        respond = self.respond(pooled)
        value = torch.tanh(self.value2(functional.relu(self.value1(pooled))))[:, 0]
        owned = None
        if self.has_ownership:
            owned = self.ownership(h).permute(0, 2, 3, 1).reshape(n, rows * cols, 3)
        return torch.cat([place, respond], dim=1), value, owned


def build(architecture: dict[str, Any], board: Board) -> TorchNet:
    """A fresh network for ``board`` with ``architecture`` (channels, blocks, hidden, ownership)."""
    return TorchNet(
        architecture["channels"],
        architecture["blocks"],
        architecture["hidden"],
        board.megaliths,
        bool(architecture.get("ownership", False)),
    )


def board_header(board: Board) -> dict[str, Any]:
    """The ``board`` field of a model header."""
    return {
        "name": board.name,
        "rows": board.rows,
        "cols": board.cols,
        "megaliths": board.megaliths,
        "min_dolmen": board.min_dolmen,
        "last_tilt": bool(board.last_tilt),
    }


def to_numpy(net: TorchNet, board: Board, training: dict[str, Any] | None = None) -> PolicyValueNet:
    """The numpy twin of ``net`` (a copy of its weights), with a header for ``board``."""
    header = {
        "board": board_header(board),
        "architecture": {
            "channels": net.channels,
            "blocks": len(net.blocks),
            "hidden": net.hidden,
            "ownership": net.has_ownership,
        },
        "training": training or {},
    }
    params = {name: value.detach().cpu().numpy().astype(np.float32) for name, value in net.state_dict().items()}
    return PolicyValueNet(header, params)
