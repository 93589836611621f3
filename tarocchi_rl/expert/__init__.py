"""Expert iteration: the network learns what the search decides, then guides a stronger search (AlphaZero-style
distillation for imperfect information).

``tarocchi-rl expert --config configs/expert_VARIANT.yaml --out runs/NAME [--carry runs-carry/NAME]``, top to
bottom:

- :mod:`~.config`  the run's typed config (search budgets per kind of decision, learning, the gate)
- :mod:`~.labels`  one worker's self-play: the search decides, each searched decision a sample (search targets)
- :mod:`~.shards`  the samples as compressed, checked NumPy archives (the field table)
- :mod:`~.workers` the labelling workers: in process or Ray actors (a cluster adds cores)
- :mod:`~.learn`   the replay buffer and the loss (cross-entropy to the visits, value to outcome and search value)
- :mod:`~.gate`    each round's network against the previous one and against plain search, on fixed gate deals
- :mod:`~.run`     the rounds, the checkpoints, and a run that outlives its machine (``runs-carry/NAME``)
"""

from .config import ExpertConfig, load_expert_config
from .run import load_resumable, resume, start

__all__ = ["ExpertConfig", "load_expert_config", "load_resumable", "resume", "start"]
