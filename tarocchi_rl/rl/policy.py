"""A policy network as an agent of the arena protocol (greedy by default): used by the trainer's evaluations
and, one layer up, by the ``ppo:PATH`` agent spec (:mod:`tarocchi_rl.agents.ppo`).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from ..policies import Agent
from .network import load_network


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Torch's intra-op threads set to ``n`` inside the block and restored after it (None: left alone). A
    toggle costs well under a microsecond."""
    if n is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class PPOAgent(Agent):
    """Plays the policy head's argmax over legal actions (``greedy``) or samples from it.

    ``threads``: torch's intra-op threads for this agent's forward passes (None: torch's default, every core).
    A search that calls the network once a decision under a time budget wants 1, as its ONNX models have: on a
    busy machine torch's pool waits for cores (measured on 2 cores beside two busy processes, one french4
    belief forward pass: 8 ms with 2 threads, 0.11 ms with 1)."""

    needs_obs = True
    needs_mask = True
    legal_by_construction = False  # masked logits make illegal actions impossible, but the arena checks anyway

    def __init__(self, path: str | None = None, net: torch.nn.Module | None = None, variant: str | None = None,
                 greedy: bool = True, seed: int = 0, label: str | None = None,
                 threads: int | None = None) -> None:
        if threads is not None and int(threads) < 1:
            raise ValueError(f"PPOAgent: threads must be >= 1, got {threads}")
        self.threads = None if threads is None else int(threads)
        if (path is None) == (net is None):
            raise ValueError("PPOAgent needs a checkpoint path or a network (exactly one)")
        if path is not None:
            net, cfg, _ = load_network(path)
            variant = cfg.variant
        assert net is not None  # exactly one of path / net, and a path gave a network
        self.net = net.eval()
        self.variant = variant
        self.greedy = greedy
        self.gen = torch.Generator().manual_seed(seed)
        self.name = label or (f"ppo:{path}" if path is not None else "ppo")

    def _logits(self, obs: NDArray[Any] | None, mask: NDArray[Any] | None, env: Any) -> torch.Tensor:
        inputs = self._inputs(obs, mask, env)
        with torch_threads(self.threads):
            return self.net(*inputs)[0]

    def _inputs(self, obs: NDArray[Any] | None, mask: NDArray[Any] | None,
                env: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """The checked network inputs (a ValueError naming what does not fit)."""
        if env is not None and self.variant is not None and env.variant != self.variant:
            raise ValueError(f"{self.name} was trained on {self.variant}, not {env.variant}")
        obs = np.asarray(obs, np.float32)
        mask = np.asarray(mask, bool)
        if obs.shape[1] != self.net.obs_dim or mask.shape[1] != self.net.n_actions:
            raise ValueError(f"{self.name}: observations/masks of width {obs.shape[1]}/{mask.shape[1]}, "
                             f"the network expects {self.net.obs_dim}/{self.net.n_actions}")
        if not mask.any(axis=1).all():
            raise ValueError(f"{self.name}: a row of the mask has no legal action")
        return torch.from_numpy(obs), torch.from_numpy(mask)

    @torch.no_grad()
    def probabilities(self, obs: NDArray[Any] | None, mask: NDArray[Any] | None, env: Any = None) -> np.ndarray:
        """float32[k, n_actions]: the policy's action probabilities (0 on illegal actions)."""
        return torch.softmax(self._logits(obs, mask, env), dim=1).numpy()

    @torch.no_grad()
    def run(self, obs: NDArray[Any] | None, mask: NDArray[Any] | None,
            env: Any = None) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """(probabilities float32[k, n_actions], values float32[k]) of k positions: one forward pass (the same
        call as :meth:`tarocchi_rl.policies.onnx_policy.OnnxAgent.run`)."""
        inputs = self._inputs(obs, mask, env)
        with torch_threads(self.threads):
            logits, value = self.net(*inputs)[:2]
        return torch.softmax(logits, dim=1).numpy(), value.numpy()

    @property
    def has_beliefs(self) -> bool:
        """The network has a belief head (trained with ``belief_loss > 0``): :meth:`beliefs` answers."""
        return bool(getattr(self.net, "has_beliefs", False))

    @torch.no_grad()
    def beliefs(self, obs: NDArray[Any]) -> NDArray[np.float32]:
        """float32[k, C, L]: where each card lies, from the seat's observations alone (the interface and the
        location order: :mod:`tarocchi_rl.policies.belief`); a ValueError without a belief head."""
        if not self.has_beliefs:
            raise ValueError(f"{self.name} has no belief head (trained with belief_loss: 0)")
        o = np.asarray(obs, np.float32)
        if o.ndim != 2 or o.shape[1] != self.net.obs_dim:
            raise ValueError(f"{self.name}: observations of shape {list(o.shape)}, the network expects "
                             f"[k, {self.net.obs_dim}]")
        with torch_threads(self.threads):
            out: NDArray[np.float32] = self.net.beliefs(torch.from_numpy(o)).numpy()
        return out

    @torch.no_grad()
    def value(self, obs: NDArray[Any] | None, mask: NDArray[Any] | None, env: Any = None) -> np.ndarray:
        """float32[k]: the value head's estimate of the seat's payoff (in units of the variant's payoff scale)."""
        obs_t = torch.from_numpy(np.asarray(obs, np.float32))
        mask_t = torch.from_numpy(np.asarray(mask, bool))
        with torch_threads(self.threads):
            return self.net(obs_t, mask_t)[1].numpy()

    @torch.no_grad()
    def act(self, obs: NDArray[np.float32] | None, mask: NDArray[np.bool_] | None, env: Any = None,
            idx: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
        logits = self._logits(obs, mask, env)
        if self.greedy:
            return logits.argmax(dim=1).numpy().astype(np.int64)
        return torch.multinomial(torch.softmax(logits, dim=1), 1, generator=self.gen).squeeze(1).numpy()
