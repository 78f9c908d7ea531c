"""The policy-value network in PyTorch, the twin of :class:`carnac_env.models.PolicyValueNet`.

The parameter names and layouts are PyTorch's and are exactly those of
:func:`carnac_env.models.parameter_shapes`, so :func:`to_numpy` is a plain copy of the
state dict; tests/agents/test_az.py checks that both networks give the same outputs. The ownership
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
from carnac_env.models.network import RULES_INPUTS, Architecture, rules_vector


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
        rules: with the rules inputs (:data:`~carnac_env.models.network.RULES_INPUTS`, constant
            planes after the 9 observation planes).
        dolmens: with the dolmen-count head (each side's final number of dolmens, from the
            pooled features; training only).
    """

    def __init__(
        self,
        channels: int = 32,
        blocks: int = 3,
        hidden: int = 64,
        megaliths: int = 28,
        ownership: bool = False,
        rules: bool = False,
        dolmens: bool = False,
    ) -> None:
        super().__init__()
        self.channels, self.hidden, self.megaliths = channels, hidden, megaliths
        self.has_ownership = bool(ownership)
        self.reads_rules = bool(rules)
        self.has_dolmens = bool(dolmens)
        self.stem = nn.Conv2d(NUM_PLANES + (len(RULES_INPUTS) if rules else 0), channels, 3, padding=1)
        self.blocks = nn.ModuleList(Block(channels) for _ in range(blocks))
        self.place = nn.Conv2d(channels, 4, 1)
        self.respond = nn.Linear(3 * channels, 5)
        self.value1 = nn.Linear(3 * channels, hidden)
        self.value2 = nn.Linear(hidden, 1)
        if self.has_ownership:
            self.ownership = nn.Conv2d(channels, 3, 1)
        if self.has_dolmens:
            self.dolmens = nn.Linear(3 * channels, 2)

    @property
    def architecture(self) -> Architecture:
        """The network's :class:`~carnac_env.models.network.Architecture`."""
        return Architecture(
            self.channels, len(self.blocks), self.hidden, self.has_ownership, self.reads_rules, self.has_dolmens
        )

    def forward(
        self, obs: torch.Tensor, rules: torch.Tensor | None = None, megaliths: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``obs`` ``(N, rows, cols, 9)`` (any number type) -> logits ``(N, A)`` and values ``(N,)``;
        see :meth:`forward_all` for ``rules`` and ``megaliths``."""
        out = self.forward_all(obs, rules, megaliths)
        return out[0], out[1]

    def forward_all(
        self, obs: torch.Tensor, rules: torch.Tensor | None = None, megaliths: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """:meth:`forward` plus the ownership logits ``(N, squares, 3)`` and the dolmen counts
        ``(N, 2)`` (each None without its head).

        Args:
            obs: ``(N, rows, cols, 9)`` observation planes.
            rules: ``(N, 6)`` values of the rules planes (:func:`rules_vector`), for a network that
                reads them; default: the network's own board's, as the numpy twin does.
            megaliths: ``(N,)`` what each position's supply plane is divided by (default: the
                network's ``megaliths``).
        """
        x = obs.float()
        n, rows, cols, _ = x.shape
        divisor = torch.full((n,), float(self.megaliths)) if megaliths is None else megaliths.float()
        x = torch.cat(
            [x[..., :SUPPLY], x[..., SUPPLY : SUPPLY + 1] / divisor[:, None, None, None], x[..., SUPPLY + 1 :]], 3
        )
        x = x.permute(0, 3, 1, 2)
        if self.reads_rules:
            if rules is None:
                raise ValueError("this network reads the rules: pass rules (N, 6)")
            planes = rules.float()[:, :, None, None].expand(n, rules.shape[1], rows, cols)
            x = torch.cat([x, planes], 1)
        h = functional.relu(self.stem(x))
        for block in self.blocks:
            h = block(h)
        place = self.place(h).permute(0, 2, 3, 1).reshape(n, rows * cols * 4)
        flat = h.flatten(2)  # (N, C, squares)
        awaiting = obs[..., AWAITING].float().reshape(n, 1, rows * cols)
        pooled = torch.cat([flat.mean(2), flat.amax(2), (flat * awaiting).sum(2)], dim=1)
        respond = self.respond(pooled)
        value = torch.tanh(self.value2(functional.relu(self.value1(pooled))))[:, 0]
        owned = self.ownership(h).permute(0, 2, 3, 1).reshape(n, rows * cols, 3) if self.has_ownership else None
        dolmens = self.dolmens(pooled) if self.has_dolmens else None
        return torch.cat([place, respond], dim=1), value, owned, dolmens


def board_rules(board: Board) -> torch.Tensor:
    """The rules planes' values of ``board`` as a ``(6,)`` tensor."""
    return torch.from_numpy(rules_vector(board.rows, board.cols, board.megaliths, board.min_dolmen, board.last_tilt))


def build(architecture: dict[str, Any], board: Board) -> TorchNet:
    """A fresh network for ``board`` with ``architecture`` (channels, blocks, hidden, and the
    flags ownership, rules, dolmens)."""
    return TorchNet(
        architecture["channels"],
        architecture["blocks"],
        architecture["hidden"],
        board.megaliths,
        bool(architecture.get("ownership", False)),
        bool(architecture.get("rules", False)),
        bool(architecture.get("dolmens", False)),
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


def to_numpy(
    net: TorchNet, board: Board, training: dict[str, Any] | None = None, boards: dict[str, Any] | None = None
) -> PolicyValueNet:
    """The numpy twin of ``net`` (a copy of its weights), with a header for ``board`` (for a
    model trained on several boards: the first, with ``boards`` describing them all)."""
    header: dict[str, Any] = {
        "board": board_header(board),
        "architecture": net.architecture.as_header(),
        "training": training or {},
    }
    if boards is not None:
        header["boards"] = boards
        header["board"]["name"] = "general"  # its numbers: the rules of a call without a board
    params = {name: value.detach().cpu().numpy().astype(np.float32) for name, value in net.state_dict().items()}
    return PolicyValueNet(header, params)
