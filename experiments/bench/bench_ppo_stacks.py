"""End-to-end PPO training throughput of standard RL stacks on ``mineo``, for comparison with our trainer.

What is measured: agent decisions per second of wall clock during PPO training, rollouts and learning
included -- the number of environment steps taken by *learning* agents, divided by the wall time of whole
training iterations (collect a batch, then several epochs of minibatch SGD). A warm-up iteration (Numba
JIT, Ray start-up, first allocation) is run and excluded first; then each repeat runs whole iterations
until ``--seconds`` have passed and reports decisions / elapsed. The median of the repeats is the number to
quote (the machine may be shared and noisy). Every stack uses the same network size as ours: an MLP
obs -> 256 -> 256 (ReLU, as configs/ppo_mineo.yaml) trunk shared by a policy head (131 logits, illegal
actions masked) and a value head.

Stacks:

* ``openspiel``: OpenSpiel's PyTorch PPO (``open_spiel.python.pytorch.ppo.PPO``, single agent) on our pyspiel
  game ``python_tarocchi_mineo`` (``import tarocchi_rl.envs.openspiel``), run as in OpenSpiel's own
  ``examples/ppo_example.py``: a ``SyncVectorEnv`` of ``rl_environment.Environment`` (observation tensors).
  ONE learning seat (seat 0); the other three seats are our ``heuristic`` bot, played inside the
  environment (with the chance nodes of the deal) so the learner only sees its own decisions. Only seat
  0's decisions count; the opponents' moves and the deal are part of the measured wall time.
* ``rllib``: Ray RLlib PPO (new API stack: RLModule / Learner / EnvRunner) on our PettingZoo AEC env
  (``tarocchi_rl.envs.pettingzoo.mineo_v0``) through RLlib's ``PettingZooEnv`` wrapper, self-play: one
  shared module for all four seats, so every decision is a learning decision. Action masking: RLlib's
  example ``ActionMaskingTorchRLModule``; it expects the observation key ``observations`` where our env
  has ``observation``, so a two-line env wrapper renames the key (and gives the mask as float32).
  Decisions = RLlib's own counter ``env_runners/num_env_steps_sampled_lifetime`` (one AEC step = one
  agent's decision; the agent-step counters are printed as a check).
* ``tarocchi``: our own trainer, :func:`bench_tarocchi`: ``tarocchi-rl train`` with ``configs/ppo_mineo.yaml``
  (PPO only: the warm start, evaluations and checkpoints off), timed after its first update; decisions =
  every seat's (learner, snapshots, heuristic), the learner's own reported as ``learner_decisions``.

Environments (two virtualenvs: RLlib 2.x pins ``gymnasium==1.2.2``, which conflicts with our main venv):

* ``openspiel`` and ``tarocchi``: the project venv ``.venv`` (``pip install -e .[envs]``; torch CPU).
* ``rllib``: a separate venv ``.venv-stacks/`` at the repo root (git-ignored), built with::

      python3.11 -m venv .venv-stacks
      .venv-stacks/bin/pip install torch==2.13.0          # FIRST: the CPU wheel (never a CUDA torch)
      .venv-stacks/bin/pip install -r experiments/bench/requirements-stacks.txt
      .venv-stacks/bin/pip install --no-deps -e .           # our package (deps are in the requirements)

Commands (2 CPU cores; each prints per-repeat and median decisions/s, then one JSON line)::

    .venv/bin/python experiments/bench/bench_ppo_stacks.py --stack openspiel --seconds 120 --repeats 3
    .venv-stacks/bin/python experiments/bench/bench_ppo_stacks.py --stack rllib --seconds 120 --repeats 3
    .venv/bin/python experiments/bench/bench_ppo_stacks.py --stack tarocchi --seconds 120 --repeats 3

``--set KEY=VALUE`` (tarocchi only, repeatable) adds trainer config overrides after the bench's own: e.g.
``--set num_workers=0 --set max_updates=3 --set network.hidden=[32]`` is a smoke run of a few seconds
(tests/experiments). A stack whose modules do not import in this Python is a one-line error (exit status 2).

Settings (defaults; see ``--help``): batch ~4096 decisions per iteration, minibatch 512, 4 epochs, Adam
lr 2.5e-4, gamma 0.99, GAE lambda 0.95, clip 0.2, torch threads 2. OpenSpiel: 16 envs x 256 steps.
RLlib: ``ray.init(num_cpus=2)``, ``num_env_runners=0`` (sampling in the driver process; on 2 cores a remote
runner, ``--env-runners 1``, was several times slower in a short test) x 4 envs, 1 local learner, train
batch 4096.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

from tarocchi_rl.provenance import machine_stamp

HIDDEN = 256
VARIANT = "mineo"


# ----------------------------------------------------------------------------------------------------------
# our own trainer


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository
CONFIG = os.path.join(ROOT, "configs", "ppo_mineo.yaml")


def bench_tarocchi(seconds: float, config: str = CONFIG, overrides: list[str] | None = None) -> dict:
    """Our trainer with the default mineo config (Ray rollout worker, async rollouts, MLP 256x256), PPO only
    (the imitation warm start, evaluations and checkpoints off): ``seconds`` of training after its first
    update. Decisions = every seat's decisions in the self-play deals (learner, snapshots, heuristic);
    ``learner_decisions`` = the learner's samples (the ones trained on) are reported too. ``overrides``
    (``--set``): more config overrides, after these (e.g. ``max_updates=3 num_workers=0`` for a smoke run)."""
    import tempfile

    from tarocchi_rl.rl.config import load_config
    from tarocchi_rl.rl.trainer import train

    cfg = load_config(config, ["imitation.decisions=0", "eval.every=0", "eval.final_deals=0",
                               "checkpoint_every=1000000", f"max_minutes={(seconds + 20) / 60}", *(overrides or [])])
    with tempfile.TemporaryDirectory() as d:
        r = train(cfg, f"{d}/run", progress=False)
    if "timed_seconds" not in r:
        raise SystemExit(f"error: the tarocchi run stopped after {r.get('updates')} update(s): nothing was timed "
                         "(the timing starts after the first update)")
    return {"decisions": r["timed_decisions"], "seconds": r["timed_seconds"], "iterations": r["updates"] - 1,
            "learner_decisions": r["timed_samples"],
            "learner_decisions_per_s": round(r["timed_samples"] / r["timed_seconds"], 1)}


# ----------------------------------------------------------------------------------------------------------
# OpenSpiel


def make_openspiel(args):
    """Build OpenSpiel's PPO and its vector env; returns a ``run(seconds) -> dict`` (whole updates)."""
    import pyspiel
    import torch
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch.ppo import INVALID_ACTION_PENALTY, PPO, CategoricalMasked, layer_init
    from open_spiel.python.vector_env import SyncVectorEnv
    from torch import nn

    import tarocchi_rl.envs.openspiel  # noqa: F401  (registers python_tarocchi_mineo)
    from tarocchi_rl.policies.heuristic import HeuristicAgent

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    class MLPAgent(nn.Module):
        """OpenSpiel's PPOAgent interface with our network size: a shared obs -> 256 -> 256 ReLU trunk,
        policy head (masked logits) and value head (PPOAgent itself is two separate 64x64 MLPs)."""

        def __init__(self, num_actions, observation_shape, device):
            super().__init__()
            d = int(np.prod(observation_shape))
            self.trunk = nn.Sequential(layer_init(nn.Linear(d, HIDDEN)), nn.ReLU(),
                                       layer_init(nn.Linear(HIDDEN, HIDDEN)), nn.ReLU())
            self.actor = layer_init(nn.Linear(HIDDEN, num_actions), std=0.01)
            self.critic = layer_init(nn.Linear(HIDDEN, 1), std=1.0)
            self.device = device
            self.num_actions = num_actions
            self.register_buffer("mask_value", torch.tensor(INVALID_ACTION_PENALTY))

        def get_value(self, x):
            return self.critic(self.trunk(x))

        def get_action_and_value(self, x, legal_actions_mask=None, action=None):
            if legal_actions_mask is None:
                legal_actions_mask = torch.ones((len(x), self.num_actions)).bool()
            h = self.trunk(x)
            probs = CategoricalMasked(logits=self.actor(h), masks=legal_actions_mask, mask_value=self.mask_value)
            if action is None:
                action = probs.sample()
            return action, probs.log_prob(action), probs.entropy(), self.critic(h), probs.probs

    heuristic = HeuristicAgent()
    row = np.zeros(1, np.int64)

    class HeuristicOpponentsEnv(rl_environment.Environment):
        """rl_environment.Environment where seats 1..3 are the heuristic: after the deal (chance nodes) and
        after every learner action, the opponents' turns are played inside the env, so every time step
        returned is seat 0 to act or the end of the deal (whose rewards are then the payoffs)."""

        def _sample_external_events(self):
            while True:
                super()._sample_external_events()
                s = self._state
                if s.is_terminal() or s.current_player() == 0:
                    return
                # the pyspiel state keeps its game on a core BatchEnv of one row (its Views)
                s.apply_action(int(heuristic.act(None, None, s._views.state._env, row)[0]))

    game = pyspiel.load_game(tarocchi_rl.envs.openspiel.GAME_NAMES[VARIANT])
    envs = SyncVectorEnv([
        HeuristicOpponentsEnv(game, chance_event_sampler=rl_environment.ChanceEventSampler(seed=args.seed + i),
                              observation_type=rl_environment.ObservationType.OBSERVATION)
        for i in range(args.num_envs)
    ])
    steps = max(1, args.batch // args.num_envs)
    agent = PPO(
        input_shape=tuple(game.observation_tensor_shape()),
        num_actions=game.num_distinct_actions(),
        num_players=game.num_players(),
        player_id=0,
        num_envs=args.num_envs,
        steps_per_batch=steps,
        num_minibatches=max(1, (args.num_envs * steps) // args.minibatch),
        update_epochs=args.epochs,
        learning_rate=args.lr,
        gae=True, gamma=0.99, gae_lambda=0.95, normalize_advantages=True,
        clip_coef=0.2, clip_vloss=True, entropy_coef=0.01, value_coef=0.5, max_grad_norm=0.5,
        device="cpu", writer=None, agent_fn=MLPAgent,
    )
    state = {"ts": envs.reset(), "episodes": 0}
    settings = {"num_envs": args.num_envs, "steps_per_batch": steps, "batch": args.num_envs * steps,
                "minibatch": agent.minibatch_size, "epochs": args.epochs, "lr": args.lr,
                "torch_threads": torch.get_num_threads(), "observation": "observation_tensor",
                "obs_dim": int(np.prod(game.observation_tensor_shape())), "opponents": "heuristic x3"}

    def update():
        ts = state["ts"]
        for _ in range(steps):
            out = agent.step(ts)
            ts, reward, done, _ = envs.step(out, reset_if_done=True)
            agent.post_step([r[0] for r in reward], done)  # seat 0's reward (post_step takes one per env)
            state["episodes"] += sum(done)
        agent.learn(ts)
        state["ts"] = ts

    def run(seconds):
        n0, t0, it = agent.total_steps_done, time.perf_counter(), 0
        while True:
            update()
            it += 1
            dt = time.perf_counter() - t0
            if dt >= seconds:
                return {"decisions": agent.total_steps_done - n0, "seconds": dt, "iterations": it}

    return update, run, settings


# ----------------------------------------------------------------------------------------------------------
# RLlib


def make_rllib(args):
    """Build RLlib's PPO (new API stack) on the PettingZoo env; returns (warmup, run, settings)."""
    import ray
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    torch.set_num_threads(args.threads)
    register_env("tarocchi_mineo_pz", _rllib_env_creator)
    ray.init(num_cpus=args.threads, include_dashboard=False, log_to_driver=False)

    probe = _rllib_env_creator({})
    obs_space, act_space = probe.observation_spaces["player_0"], probe.action_spaces["player_0"]
    model = DefaultModelConfig(fcnet_hiddens=[HIDDEN, HIDDEN], fcnet_activation="relu", vf_share_layers=True,
                               head_fcnet_hiddens=[])
    config = (
        PPOConfig()
        .environment("tarocchi_mineo_pz", disable_env_checking=True)  # its check steps unmasked random actions
        .framework("torch")
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            "shared": RLModuleSpec(module_class=ActionMaskingTorchRLModule, observation_space=obs_space,
                                   action_space=act_space, model_config=model)}))
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=args.envs_per_runner,
                     rollout_fragment_length="auto", num_cpus_per_env_runner=1)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=args.batch, minibatch_size=args.minibatch,
                  num_epochs=args.epochs, lr=args.lr, gamma=0.99, lambda_=0.95, clip_param=0.2,
                  vf_loss_coeff=0.5, entropy_coeff=0.01, grad_clip=0.5)
        .reporting(metrics_num_episodes_for_smoothing=100)
        .debugging(seed=args.seed, log_level="ERROR")
    )
    algo = config.build_algo() if hasattr(config, "build_algo") else config.build()
    last = {}

    def counters(result):
        er = result.get("env_runners", {})
        env = er.get("num_env_steps_sampled_lifetime", result.get("num_env_steps_sampled_lifetime"))
        agents = er.get("num_agent_steps_sampled_lifetime", {})
        module = er.get("num_module_steps_sampled_lifetime", {})
        return env, agents, module

    def warmup():
        last["result"] = algo.train()

    def run(seconds):
        env0, ag0, _ = counters(last["result"])
        t0, it = time.perf_counter(), 0
        while True:
            last["result"] = algo.train()
            it += 1
            dt = time.perf_counter() - t0
            if dt >= seconds:
                env1, ag1, mod1 = counters(last["result"])
                agent_steps = {k: ag1.get(k, 0) - ag0.get(k, 0) for k in ag1}
                return {"decisions": int(env1 - env0), "seconds": dt, "iterations": it,
                        "agent_steps": agent_steps, "module_steps_lifetime": mod1}

    settings = {"api_stack": "new (RLModule/Learner/EnvRunner)", "ray": ray.__version__,
                "env_runners": args.env_runners, "envs_per_runner": args.envs_per_runner,
                "train_batch": args.batch, "minibatch": args.minibatch, "epochs": args.epochs, "lr": args.lr,
                "learners": "1 local", "ray_num_cpus": args.threads, "torch_threads": torch.get_num_threads(),
                "policy": "one shared module, 4 seats (self-play)", "masking": "ActionMaskingTorchRLModule"}
    return warmup, run, settings


def _rllib_env_creator(env_config):
    """Our PettingZoo AEC env in RLlib's PettingZooEnv, with observations renamed for RLlib's masking module
    ({"observation", "action_mask" int8} -> {"observations", "action_mask" float32})."""
    from gymnasium import spaces
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from tarocchi_rl.envs.pettingzoo import mineo_v0

    def rename(o):
        return {"observations": o["observation"], "action_mask": o["action_mask"].astype(np.float32)}

    class MaskedPettingZooEnv(PettingZooEnv):
        def __init__(self, env):
            super().__init__(env)
            for aid, sp in list(self.observation_spaces.items()):
                self.observation_spaces[aid] = spaces.Dict({
                    "observations": sp["observation"],
                    "action_mask": spaces.Box(0.0, 1.0, sp["action_mask"].shape, np.float32)})
            self.observation_space = spaces.Dict(self.observation_spaces)

        def reset(self, *, seed=None, options=None):
            obs, info = super().reset(seed=seed, options=options)
            return {k: rename(v) for k, v in obs.items()}, info

        def step(self, action):
            obs, rew, term, trunc, info = super().step(action)
            return {k: rename(v) for k, v in obs.items()}, rew, term, trunc, info

    return MaskedPettingZooEnv(mineo_v0.env())


# ----------------------------------------------------------------------------------------------------------
# driver

STACK_MODULES = {  # what each stack imports first (their own venvs: the module docstring)
    "openspiel": ("pyspiel", "open_spiel.python.pytorch.ppo"),
    "rllib": ("ray.rllib.algorithms.ppo", "pettingzoo"),
    "tarocchi": (),
}


def missing_stack(stack: str) -> str | None:
    """Why ``stack`` cannot be imported in this Python (the ImportError, with where to install it), or None."""
    import importlib

    for name in STACK_MODULES[stack]:
        try:
            importlib.import_module(name)
        except ImportError as e:
            venv = ".venv-stacks" if stack == "rllib" else ".venv (pip install -e .[envs])"
            return f"{name} does not import ({e}); {stack} runs in {venv}, see this script's docstring"
    return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stack", required=True, choices=["openspiel", "rllib", "tarocchi"])
    p.add_argument("--seconds", type=float, default=120.0, help="timed seconds per repeat (whole iterations)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1, help="untimed training iterations first")
    p.add_argument("--json", action="store_true", help="print only the JSON line")
    p.add_argument("--threads", type=int, default=2, help="torch threads (and ray num_cpus)")
    p.add_argument("--batch", type=int, default=4096, help="decisions per training iteration")
    p.add_argument("--minibatch", type=int, default=512)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=2.5e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-envs", type=int, default=16, help="openspiel: envs in the SyncVectorEnv")
    p.add_argument("--env-runners", type=int, default=0, help="rllib: remote env runners (0: the driver)")
    p.add_argument("--envs-per-runner", type=int, default=4, help="rllib: envs per env runner")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                   help="tarocchi: a trainer config override, after the bench's own (repeatable)")
    a = p.parse_args(argv)
    if a.overrides and a.stack != "tarocchi":
        p.error("--set is for --stack tarocchi only")
    missing = missing_stack(a.stack)
    if missing:
        p.exit(2, f"error: --stack {a.stack} cannot run in {sys.executable}: {missing}\n")

    def say(*x):
        if not a.json:
            print(*x, flush=True)

    t_build = time.perf_counter()
    if a.stack == "tarocchi":
        warmup, settings = (lambda: None), ({"overrides": a.overrides} if a.overrides else {})

        def run(seconds):
            return bench_tarocchi(seconds, overrides=a.overrides)
    elif a.stack == "openspiel":
        warmup, run, settings = make_openspiel(a)
    else:
        warmup, run, settings = make_rllib(a)
    for _ in range(a.warmup):
        warmup()
    say(f"[{a.stack}] built + {a.warmup} warm-up iteration(s) in {time.perf_counter() - t_build:.1f} s; "
        f"settings: {settings}")

    reps = []
    for k in range(a.repeats):
        c0, load0 = time.process_time(), os.getloadavg()[0]
        r = run(a.seconds)
        r["decisions_per_s"] = r["decisions"] / r["seconds"]
        # contention diagnostics: CPU seconds of this (driver) process per wall second, 1-min load average
        r["driver_cpu_per_wall"] = (time.process_time() - c0) / r["seconds"]
        r["loadavg"] = [load0, os.getloadavg()[0]]
        reps.append(r)
        extra = f", {r['iterations']} iterations" if r.get("iterations") else ""
        say(f"[{a.stack}] repeat {k + 1}/{a.repeats}: {r['decisions']} decisions in {r['seconds']:.1f} s"
            f"{extra} -> {r['decisions_per_s']:.0f} decisions/s (driver CPU/wall {r['driver_cpu_per_wall']:.2f}, "
            f"load {r['loadavg'][0]:.1f}->{r['loadavg'][1]:.1f})"
            + (f"  (agent steps: {r['agent_steps']})" if r.get("agent_steps") else ""))
    med = statistics.median(r["decisions_per_s"] for r in reps)
    say(f"[{a.stack}] median: {med:.0f} decisions/s")
    out = {"stack": a.stack, "variant": VARIANT, "median_decisions_per_s": round(med, 1),
           "repeats": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()
                        if k not in ("agent_steps", "module_steps_lifetime")} for r in reps],
           "settings": settings, "seconds": a.seconds, "warmup_iterations": a.warmup,
           "machine": machine_stamp(),
           "argv": sys.argv[1:]}
    print(json.dumps(out), flush=True)
    if a.stack == "rllib":
        import ray
        ray.shutdown()


if __name__ == "__main__":
    main()
