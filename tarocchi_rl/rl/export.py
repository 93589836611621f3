"""Export a trained PPO policy as a self-describing bot directory (``tarocchi-rl export``).

    tarocchi-rl export --agent ppo:runs/mineo-... --out bots/mineo-v1 [--eval-deals 500] [--golden 256]

writes, in ``--out`` (format ``tarocchi-policy/1``, defined with its checks in
:mod:`tarocchi_rl.policies.onnx_policy`):

- ``policy.onnx``: the network with the mask applied and the softmax taken: inputs ``obs`` float32[N, obs_dim]
  and ``mask`` bool[N, num_actions], outputs ``probs`` (0 on illegal actions) and ``value`` float32[N]; the
  batch axis is dynamic; ``onnx.checker`` (full check) passes.
- ``manifest.json``: variant and options, the observation layout and its fingerprint, the action table, the
  inputs and outputs, the network, the provenance (config, update, samples, versions, git commit) and the
  evaluation of the exported model itself (duplicate arena against ``heuristic`` and ``random``).
- ``golden.jsonl``: reference positions from every phase that occurs in play (policy, heuristic and random
  seats), stratified by phase: observation, mask, the torch network's probabilities and value, the greedy
  action (id and string), the phase. A runtime that reproduces them plays like the network.
- ``README.md``: the model card.
- ``belief.onnx`` (only when the checkpoint's network has a belief head: ``belief_loss > 0``): the trunk and the
  belief head alone, input ``obs`` float32[N, obs_dim] (nothing else: the seat's view), output ``beliefs``
  float32[N, C, L] (each card's probability of lying in each location: :mod:`tarocchi_rl.policies.belief`); the
  manifest's ``belief`` lists it (null without one) and every golden position carries its ``beliefs`` (flattened
  C x L), checked like the probabilities.

Before anything is written to ``--out`` the exported model is checked against torch on the golden positions
(probabilities, and beliefs when there are, within 1e-5); everything is first written to a staging directory
beside ``--out``, which then replaces it, so ``--out`` never holds a half-written bot. An existing ``--out`` is
replaced only when it holds a previous export (a ``manifest.json`` and only the files above).
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.metadata
import json
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from .. import bounded
from ..arena import MAX_DEALS, run_arena
from ..batch import BatchEnv
from ..core.state import PHASE
from ..policies import HeuristicAgent, RandomAgent
from ..policies.belief import location_names
from ..policies.onnx_policy import (
    BELIEF_FILE,
    BELIEF_INPUT_NAMES,
    BELIEF_OUTPUT_NAMES,
    GOLDEN_FILE,
    INPUT_NAMES,
    MANIFEST_FILE,
    MANIFEST_FORMAT,
    MODEL_FILE,
    OUTPUT_NAMES,
    README_FILE,
    OnnxAgent,
    engine_facts,
    make_session,
)
from ..provenance import git_state
from ..variants import VariantSpec
from ..variants.phases import PHASE_NAMES
from .config import TrainConfig
from .model_card import model_card
from .network import PolicyValueNet, load_network
from .policy import PPOAgent

OPSET = 18  # onnxruntime >= 1.17 runs it; torch's exporter writes it without a version conversion
TOLERANCE = 1e-5  # largest |probability difference| between onnxruntime and torch accepted on the golden positions
BOT_FILES = (MODEL_FILE, MANIFEST_FILE, GOLDEN_FILE, README_FILE, BELIEF_FILE)  # belief.onnx: only with a head
EVAL_OPPONENTS = ("heuristic", "random")
# --golden: reference positions (a line of golden.jsonl is under 4 kB; under 10 kB with the beliefs of 78 x 6)
MAX_GOLDEN_POSITIONS = 10_000
MAX_GOLDEN_BYTES = 1 << 27  # bytes of golden.jsonl read back: MAX_GOLDEN_POSITIONS lines fit with room


class ExportError(ValueError):
    """A bad agent spec, an unusable output directory or an export that failed its checks (one line)."""


def checkpoint_of_spec(spec: str) -> str:
    """The checkpoint path of a ``ppo:PATH`` agent spec (PATH: a checkpoint file or a run directory)."""
    kind, _, path = spec.strip().partition(":")
    if kind.lower() != "ppo" or not path.strip():
        raise ExportError(f"export takes a trained policy as ppo:PATH (a checkpoint or run directory), got {spec!r}")
    path = path.strip()
    if "," in path:
        raise ExportError(f"export takes ppo:PATH without options (greedy, seed: the bot's own spec), got {spec!r}")
    return path


class _Masked(torch.nn.Module):
    """The exported function: (obs, mask) -> (masked probabilities, value)."""

    def __init__(self, net: PolicyValueNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits, value = self.net(obs, mask)
        return torch.softmax(logits, dim=1), value


class _Beliefs(torch.nn.Module):
    """The exported belief model: obs -> beliefs [N, C, L] (the seat's observation is its only input)."""

    def __init__(self, net: PolicyValueNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net.beliefs(obs)


@contextmanager
def _quiet_exporter() -> Iterator[None]:
    """torch's ONNX exporter logs and warns about things that do not concern this model (torchvision ops, ...)."""
    loggers = [logging.getLogger(n) for n in ("torch.onnx", "torch.export", "torch._dynamo", "onnxscript")]
    levels = [lg.level for lg in loggers]
    try:
        for lg in loggers:
            lg.setLevel(logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def export_onnx(net: PolicyValueNet, path: str | Path, metadata: dict[str, str] | None = None) -> None:
    """Write ``net`` as an ONNX model (opset :data:`OPSET`, dynamic batch) to ``path`` and check it."""
    net = net.eval()
    obs = torch.zeros(2, net.obs_dim)
    mask = torch.ones(2, net.n_actions, dtype=torch.bool)
    _write_onnx(_Masked(net), (obs, mask), INPUT_NAMES, OUTPUT_NAMES, path, metadata,
                "tarocchi-rl policy: (obs, mask) -> (masked action probabilities, value); see manifest.json")


def export_belief_onnx(net: PolicyValueNet, path: str | Path, metadata: dict[str, str] | None = None) -> None:
    """Write ``net``'s belief model (trunk and belief head: obs -> beliefs) as an ONNX model to ``path``."""
    if not net.has_beliefs:
        raise ExportError("the network has no belief head (trained with belief_loss: 0)")
    _write_onnx(_Beliefs(net.eval()), (torch.zeros(2, net.obs_dim),), BELIEF_INPUT_NAMES, BELIEF_OUTPUT_NAMES,
                path, metadata, "tarocchi-rl beliefs: obs -> where each card lies [N, C, L]; see manifest.json")


def _write_onnx(module: torch.nn.Module, args: tuple[torch.Tensor, ...], inputs: tuple[str, ...],
                outputs: tuple[str, ...], path: str | Path, metadata: dict[str, str] | None, doc: str) -> None:
    """Export ``module`` (inputs ``args``, batch axis dynamic) with these names and metadata; checked, saved."""
    import onnx  # the export-side dependency (the ``train`` extra), not needed to run a bot

    batch = torch.export.Dim("batch")
    with _quiet_exporter(), torch.no_grad():
        program = torch.onnx.export(
            module, args, None, dynamo=True, opset_version=OPSET, input_names=list(inputs),
            output_names=list(outputs), dynamic_shapes={name: {0: batch} for name in inputs},
            external_data=False, verbose=False,
        )
    if program is None:  # pragma: no cover - dynamo=True returns the program
        raise ExportError("torch.onnx.export returned no program")
    model = program.model_proto
    model.producer_name = "tarocchi-rl"
    model.doc_string = doc
    for k, v in (metadata or {}).items():
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v
    onnx.checker.check_model(model, full_check=True)
    onnx.save_model(model, str(path))


# -- golden positions -----------------------------------------------------------------------------------------
class _Reservoir:
    """A uniform sample of at most ``cap`` rows from a stream (Algorithm R, batched)."""

    def __init__(self, cap: int, obs_dim: int, n_actions: int, rng: np.random.Generator) -> None:
        self.obs = np.zeros((cap, obs_dim), np.float32)
        self.mask = np.zeros((cap, n_actions), bool)
        self.cap, self.seen, self.rng = cap, 0, rng

    def add(self, obs: NDArray[np.float32], mask: NDArray[np.bool_]) -> None:
        m = len(obs)
        fill = max(0, min(m, self.cap - self.seen))
        self.obs[self.seen : self.seen + fill] = obs[:fill]
        self.mask[self.seen : self.seen + fill] = mask[:fill]
        rest = np.arange(fill, m)
        if len(rest):
            slots = self.rng.integers(0, self.seen + rest + 1)  # row j replaces a slot with probability cap / seen_j
            keep = slots < self.cap
            self.obs[slots[keep]] = obs[rest[keep]]  # in stream order: a later row wins a shared slot, as in R
            self.mask[slots[keep]] = mask[rest[keep]]
        self.seen += m

    def rows(self) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        k = min(self.seen, self.cap)
        return self.obs[:k], self.mask[:k]


def collect_positions(net: PolicyValueNet, variant: str, options: dict[str, Any], n: int, seed: int = 0,
                      games: int | None = None) -> tuple[NDArray[np.float32], NDArray[np.bool_], NDArray[np.int64]]:
    """``n`` decision positions (obs, mask, phase code) from games where each seat is the policy (sampling),
    the heuristic or a random bot, stratified by phase: every phase that occurs gets an equal share (or all
    of its positions when it has fewer), so rare phases (bids, discards, announcements) are not drowned by play.
    """
    rng = np.random.default_rng(seed)
    env = BatchEnv(variant, games or max(128, n), seed=seed, **options)
    kinds = rng.integers(0, 3, size=(env.batch_size, env.num_players))  # 0 policy, 1 heuristic, 2 random
    agents = [PPOAgent(net=net, variant=variant, greedy=False, seed=seed), HeuristicAgent(seed), RandomAgent(seed)]
    res: dict[int, _Reservoir] = {}
    rows = np.arange(env.batch_size)
    actions = np.zeros(env.batch_size, np.int64)
    while not env.all_done():
        cur = env.current_player().astype(np.int64)
        live = cur >= 0
        mask = env.legal_mask()
        obs = env.observe()
        phase = env.state.meta[:, PHASE].copy()
        for ph in np.unique(phase[live]):
            sel = np.nonzero(live & (phase == ph))[0]
            if int(ph) not in res:
                res[int(ph)] = _Reservoir(n, env.obs_dim, env.num_actions, rng)
            res[int(ph)].add(obs[sel], mask[sel])
        who = np.where(live, kinds[rows, np.maximum(cur, 0)], -1)
        actions[:] = -1
        for k, agent in enumerate(agents):
            idx = np.nonzero(who == k)[0]
            if len(idx):
                actions[idx] = agent.act(obs[idx], mask[idx], env, idx)
        env.step(actions)
    phases = sorted(res, key=lambda p: res[p].seen)
    remaining = min(n, sum(min(r.seen, r.cap) for r in res.values()))
    out_obs, out_mask, out_phase = [], [], []
    take: dict[int, int] = {}
    for k, ph in enumerate(phases):  # water-filling: equal shares, the rare phases' leftovers go to the others
        take[ph] = min(min(res[ph].seen, n), remaining // (len(phases) - k))
        remaining -= take[ph]
    for ph in sorted(res):
        o, m = res[ph].rows()
        pick = np.sort(rng.choice(len(o), take[ph], replace=False))
        out_obs.append(o[pick])
        out_mask.append(m[pick])
        out_phase.append(np.full(len(pick), ph, np.int64))
    return np.concatenate(out_obs), np.concatenate(out_mask), np.concatenate(out_phase)


def _num(x: float) -> float | int:
    """A float32 as the shortest JSON number that reads back to the same float32 (integers as integers)."""
    f = float(x)
    return int(f) if f.is_integer() else float(str(np.float32(f)))


def golden_records(net: PolicyValueNet, spec: VariantSpec, obs: NDArray[np.float32], mask: NDArray[np.bool_],
                   phase: NDArray[np.int64]) -> list[dict[str, Any]]:
    """The golden lines: each position with the torch network's probabilities, value and greedy action (and, with a
    belief head, its beliefs flattened C x L)."""
    rules = spec.rules
    with torch.no_grad():
        logits, value = net.eval()(torch.from_numpy(obs), torch.from_numpy(mask))
        probs = torch.softmax(logits, dim=1).numpy()
        greedy = logits.argmax(dim=1).numpy()
        values = value.numpy()
        beliefs = net.beliefs(torch.from_numpy(obs)).numpy().reshape(len(obs), -1) if net.has_beliefs else None
    out = []
    for i in range(len(obs)):
        a = int(greedy[i])
        out.append({
            "phase": PHASE_NAMES[int(phase[i])], "obs": [_num(x) for x in obs[i]], "mask": mask[i].astype(int).tolist(),
            "probs": [_num(x) for x in probs[i]], "value": _num(values[i]), "greedy_id": a,
            "greedy_action": rules.action_to_string(a, int(phase[i])),
        })
        if beliefs is not None:
            out[-1]["beliefs"] = [_num(x) for x in beliefs[i]]
    return out


def read_golden(path: str | Path) -> tuple[NDArray[np.float32], NDArray[np.bool_], NDArray[np.float32],
                                            list[dict[str, Any]]]:
    """(obs, mask, probs, records) of a golden.jsonl file (an :class:`ExportError` naming the file and the line when
    it is over :data:`MAX_GOLDEN_BYTES`, not UTF-8 or a line is not JSON)."""
    try:
        text = bounded.read_text(path, MAX_GOLDEN_BYTES)
        recs = [bounded.loads(line, what=f"{path} line {k}") for k, line in enumerate(text.splitlines(), 1)
                if line.strip()]
    except bounded.BoundedInputError as e:
        raise ExportError(str(e)) from None
    obs = np.array([r["obs"] for r in recs], np.float32)
    mask = np.array([r["mask"] for r in recs], bool)
    probs = np.array([r["probs"] for r in recs], np.float32)
    return obs, mask, probs, recs


# -- provenance and evaluation --------------------------------------------------------------------------------
def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _package_version() -> str | None:
    try:
        return importlib.metadata.version("tarocchi-rl")
    except importlib.metadata.PackageNotFoundError:
        return None


def evaluate(agent: OnnxAgent, spec: VariantSpec, options: dict[str, Any], deals: int, seed: int = 0,
             progress: bool = False) -> dict[str, Any]:
    """The exported agent (greedy) in the duplicate arena against each of :data:`EVAL_OPPONENTS`."""
    out: dict[str, Any] = {
        "method": "Duplicate arena (tarocchi_rl.arena.run_arena): the same deals with the seats rotated, the bot "
                  "(onnxruntime, greedy) against copies of the opponent; 95% CI: bootstrap over deals",
        "payoff_unit": spec.rules.BONUS_UNIT, "seed": seed, "deals": deals, "opponents": {},
    }
    for opp in EVAL_OPPONENTS:
        r = run_arena(spec.name, [agent, opp], deals=deals, seed=seed, options=options, progress=progress)
        row = r["table"][0]
        out["opponents"][opp] = {
            "mean_payoff_per_deal": row["mean_payoff_per_deal"], "ci95": row["ci95"], "deals": r["deals"],
            "games": r["games"], "win_rate": row["win_rate"],
        }
    return out


# -- the directory --------------------------------------------------------------------------------------------
def _check_out(out: Path) -> None:
    """``out`` may be written: a new directory under a writable one, an empty directory or a previous export."""
    if out.exists():
        if not out.is_dir():
            raise ExportError(f"--out {out} exists and is not a directory")
        present = {p.name for p in out.iterdir()}
        if present and (MANIFEST_FILE not in present or not present <= set(BOT_FILES)):
            raise ExportError(f"--out {out} exists and is not empty (only a previous export is replaced)")
    for parent in out.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise ExportError(f"cannot write to {out}: {parent} is not a directory")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise ExportError(f"cannot write to {out}: {parent} is not writable")
            break


def _staging_dir(out: Path) -> Path:
    """A fresh staging directory beside ``out``."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{out.name}.export-", dir=out.parent))
    except OSError as e:
        raise ExportError(f"cannot write to {out}: {e.strerror or e}") from None


def _install(staging: Path, out: Path) -> None:
    """Replace ``out`` by the finished staging directory."""
    mode = os.umask(0)
    os.umask(mode)
    staging.chmod(0o777 & ~mode)  # mkdtemp made it private; the bot is an ordinary directory
    if out.exists():
        shutil.rmtree(out)
    os.replace(staging, out)


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=1) + "\n", encoding="utf-8")


def export_policy(checkpoint: str | Path, out: str | Path, eval_deals: int = 500, golden: int = 256,
                  seed: int = 0, progress: bool = False) -> dict[str, Any]:
    """Export the policy of a checkpoint (file or run directory) to the bot directory ``out``; returns the
    manifest. ``eval_deals`` duplicate deals against each of heuristic and random (0: no evaluation),
    ``golden`` reference positions (at least 1)."""
    if not 0 <= eval_deals <= MAX_DEALS:
        raise ExportError(f"--eval-deals must be >= 0 and <= {MAX_DEALS}, got {eval_deals}")
    if not 1 <= golden <= MAX_GOLDEN_POSITIONS:
        raise ExportError(f"--golden must be >= 1 and <= {MAX_GOLDEN_POSITIONS:,}, got {golden}")
    out = Path(out)
    _check_out(out)
    net, cfg, data = load_network(checkpoint)
    facts = engine_facts(cfg.variant, cfg.options)
    staging = _staging_dir(out)
    try:
        manifest = _build(net, cfg, data, facts, staging, eval_deals, golden, seed, progress)
        _install(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def _build(net: PolicyValueNet, cfg: TrainConfig, data: dict[str, Any], facts: dict[str, Any], staging: Path,
           eval_deals: int, golden: int, seed: int, progress: bool) -> dict[str, Any]:
    export_onnx(net, staging / MODEL_FILE, {"format": MANIFEST_FORMAT, "variant": cfg.variant,
                                            "layout_fingerprint": facts["layout_fingerprint"]})
    obs, mask, phase = collect_positions(net, cfg.variant, facts["options"], golden, seed)
    recs = golden_records(net, cfg.spec, obs, mask, phase)
    with open(staging / GOLDEN_FILE, "w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    verification = _verify(staging / MODEL_FILE, staging / GOLDEN_FILE)
    if net.has_beliefs:
        export_belief_onnx(net, staging / BELIEF_FILE, {"format": MANIFEST_FORMAT, "variant": cfg.variant,
                                                         "layout_fingerprint": facts["layout_fingerprint"]})
        verification["beliefs"] = _verify_beliefs(staging / BELIEF_FILE, staging / GOLDEN_FILE)
    manifest = _manifest(net, cfg, data, facts, verification, len(recs), sorted({r["phase"] for r in recs}))
    _write_json(staging / MANIFEST_FILE, manifest)  # the agent below reads it; rewritten with the evaluation
    if eval_deals:
        agent = OnnxAgent(staging, label="onnx (this bot)")
        manifest["evaluation"] = evaluate(agent, cfg.spec, facts["options"], eval_deals, seed, progress)
    _write_json(staging / MANIFEST_FILE, manifest)
    (staging / README_FILE).write_text(model_card(manifest), encoding="utf-8")
    return manifest


def _verify(model: Path, golden: Path) -> dict[str, Any]:
    """onnxruntime against the torch values stored in the golden file; ExportError beyond :data:`TOLERANCE`."""
    obs, mask, probs, recs = read_golden(golden)
    got_p, got_v = make_session(model).run(list(OUTPUT_NAMES), {"obs": obs, "mask": mask})
    dp = float(np.abs(got_p - probs).max())
    dv = float(np.abs(got_v - np.array([r["value"] for r in recs], np.float32)).max())
    same = int((got_p.argmax(axis=1) == np.array([r["greedy_id"] for r in recs])).sum())
    if not dp <= TOLERANCE or (got_p[~mask] != 0).any():
        raise ExportError(f"the exported model differs from torch on the golden positions (largest probability "
                          f"difference {dp:.2e} > {TOLERANCE:g}, or probability on an illegal action)")
    return {"positions": len(recs), "max_abs_prob_diff": dp, "max_abs_value_diff": dv, "greedy_agree": same,
            "tolerance": TOLERANCE, "runtime": "onnxruntime"}


def _verify_beliefs(model: Path, golden: Path) -> dict[str, Any]:
    """The belief model on onnxruntime against the torch beliefs of the golden file; ExportError beyond
    :data:`TOLERANCE`."""
    obs, _, _, recs = read_golden(golden)
    want = np.array([r["beliefs"] for r in recs], np.float32)
    got = make_session(model).run(list(BELIEF_OUTPUT_NAMES), {"obs": obs})[0].reshape(len(obs), -1)
    diff = float(np.abs(got - want).max())
    if not diff <= TOLERANCE:
        raise ExportError(f"the exported belief model differs from torch on the golden positions (largest "
                          f"probability difference {diff:.2e} > {TOLERANCE:g})")
    return {"positions": len(recs), "max_abs_belief_diff": diff, "tolerance": TOLERANCE}


def _belief_entry(net: PolicyValueNet, spec: Any, n: int) -> dict[str, Any] | None:
    """The manifest's ``belief``: the belief model's file, input, output and location order (None without one)."""
    if net.belief_shape is None:
        return None
    c, n_loc = net.belief_shape
    return {
        "file": BELIEF_FILE,
        "inputs": [{"name": "obs", "dtype": "float32", "shape": ["N", n],
                    "meaning": "the observation of the seat (the same as policy.onnx's): its only input"}],
        "outputs": [{"name": "beliefs", "dtype": "float32", "shape": ["N", c, n_loc],
                     "meaning": "the probability that card c (dense id) lies in location l, as the seat sees it; "
                                "meaningful for the cards the seat cannot see"}],
        "locations": list(location_names(spec.n_players)),
        "location_meaning": "seat+r: the hand of the seat r places after the viewer (seat+0: its own); stock: the "
                            "monte / talon / chien; discard: the declarer's discard",
    }


def _manifest(net: PolicyValueNet, cfg: TrainConfig, data: dict[str, Any], facts: dict[str, Any],
              verification: dict[str, Any], n_golden: int, phases: list[str]) -> dict[str, Any]:
    spec = cfg.spec
    ckpt = Path(data["path"])
    n, a = facts["obs_dim"], facts["num_actions"]
    return {
        **facts,
        "long_name": spec.long_name,
        "n_players": spec.n_players,
        "inputs": [
            {"name": "obs", "dtype": "float32", "shape": ["N", n],
             "meaning": "the observation of the player to act (observation_layout; docs/observations.md)"},
            {"name": "mask", "dtype": "bool", "shape": ["N", a], "meaning": "legal actions (ids of actions)"},
        ],
        "outputs": [
            {"name": "probs", "dtype": "float32", "shape": ["N", a],
             "meaning": "the policy's action probabilities, 0 on illegal actions; greedy play = argmax"},
            {"name": "value", "dtype": "float32", "shape": ["N"],
             "meaning": "expected payoff of the player to act / payoff_scale"},
        ],
        "payoff_scale": cfg.payoff_scale,
        "network": {
            "type": cfg.network.kind, "hidden": list(cfg.network.hidden), "activation": cfg.network.activation,
            **({"card_width": cfg.network.card_width} if cfg.network.kind == "cards" else {}),
            "parameters": int(sum(p.numel() for p in net.parameters())),
            "heads": "linear policy head (illegal logits set to -1e9, then softmax), linear value head",
            "onnx_opset": OPSET,
        },
        "belief": _belief_entry(net, spec, n),
        "golden": {"file": GOLDEN_FILE, "positions": n_golden, "phases": phases},
        "verification": verification,
        "provenance": {
            "checkpoint": str(ckpt), "checkpoint_sha256": _sha256(ckpt), "config": data["config"],
            "update": data.get("update"), "samples": data.get("samples"), "decisions": data.get("decisions"),
            "minutes": data.get("minutes"), "imitation_warm_start": bool(data.get("imitated", False)),
            "training_sources": data.get("sources"),  # the commit of each start / resume of the run (None: older)
            # the checkpoints averaged into this one (experiments/studies/average_checkpoints.py), or None
            "averaged_from": data.get("averaged_from"),
            "tarocchi_rl_version": _package_version(), **git_state(), "torch_version": torch.__version__,
            "exported_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        },
        "evaluation": None,
    }
