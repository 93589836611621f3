"""An exported policy (a bot directory written by ``tarocchi-rl export``) as an agent, on onnxruntime and numpy.

This module never imports torch, directly or indirectly: with the ``bot`` extra (``pip install
tarocchi-rl[bot]``: onnxruntime) a policy plays in ``eval``, in the environments and as a search prior on a
machine without torch or Ray. The exporter (:mod:`tarocchi_rl.rl.export`, which needs torch) writes the files;
the format and the checks are defined here, so that both sides share them.

A bot directory (format ``tarocchi-policy/1``)::

    policy.onnx     inputs  obs float32[N, obs_dim], mask bool[N, num_actions]
                    outputs probs float32[N, num_actions] (masked action probabilities, 0 on illegal actions),
                            value float32[N] (the acting seat's expected payoff / payoff_scale)
    manifest.json   what the network plays and how it was made (below)
    golden.jsonl    reference positions: observation, mask, probabilities, greedy action, phase (and beliefs)
    README.md       the model card
    belief.onnx     optional (a policy trained with ``belief_loss > 0``): input obs float32[N, obs_dim] alone
                    (the seat's view: no mask, no hidden card), output beliefs float32[N, C, L] (where each card
                    lies: the location table of :mod:`tarocchi_rl.policies.belief`); listed in the manifest's
                    ``belief`` (null without one)

``manifest.json`` holds ``format``, ``variant``, ``options`` (resolved), ``obs_dim``, ``observation_layout``
(the sections as ``{name, offset, size}``, in order) and ``layout_fingerprint`` (:func:`layout_fingerprint` of
that list), ``num_actions`` and ``actions`` (id -> action string), ``inputs`` and ``outputs`` (names), the
``network``, the ``provenance`` and the ``evaluation``. Loading compares the first group with this engine
(:func:`engine_facts`) and refuses a mismatch with a :class:`ManifestMismatchError` naming the field; a manifest
whose ``belief`` is not null needs ``belief.onnx`` with exactly the input ``obs`` and the output ``beliefs`` of the
variant's [N, C, L] (:meth:`OnnxAgent.beliefs`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .. import bounded
from ..bounded import shown
from ..variants import VARIANTS, VariantSpec, get_variant
from .base import Agent
from .belief import belief_shape, location_names

if TYPE_CHECKING:
    from ..batch import BatchEnv

MANIFEST_FORMAT = "tarocchi-policy/1"
MODEL_FILE = "policy.onnx"
MANIFEST_FILE = "manifest.json"
GOLDEN_FILE = "golden.jsonl"
README_FILE = "README.md"
BELIEF_FILE = "belief.onnx"  # the optional belief model (module docstring)
_MAX_MANIFEST_BYTES = 1 << 20  # bytes of manifest.json (an export writes about 8 kB)
MAX_MODEL_BYTES = 1 << 28  # bytes of policy.onnx (a shipped one is under 2 MB)
INPUT_NAMES = ("obs", "mask")
OUTPUT_NAMES = ("probs", "value")
BELIEF_INPUT_NAMES = ("obs",)  # the belief model reads the seat's observation and nothing else
BELIEF_OUTPUT_NAMES = ("beliefs",)
# the manifest fields that must equal the engine's (checked in this order on loading)
_CHECKED_FIELDS = ("format", "variant", "options", "obs_dim", "layout_fingerprint", "num_actions", "actions")


class OnnxPolicyError(ValueError):
    """A missing, unreadable or damaged bot directory or file (the message names the file)."""


class ManifestMismatchError(OnnxPolicyError):
    """The manifest describes another game than this engine plays (the message names the field)."""


def observation_layout(spec: VariantSpec) -> list[dict[str, Any]]:
    """The variant's observation sections in order: ``[{"name", "offset", "size"}, ...]``."""
    return [{"name": name, "offset": int(offset), "size": int(size)} for offset, size, name in spec.obs_rows]


def layout_fingerprint(layout: list[dict[str, Any]]) -> str:
    """sha256 (hex) of the canonical JSON of an observation layout (keys sorted, no spaces, ASCII)."""
    canonical = json.dumps(layout, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def _action_table(spec: VariantSpec) -> list[str]:
    """Action id -> its string (the phase-free form: ``pass`` rather than ``bid:pass``)."""
    return [spec.rules.action_to_string(a, -1) for a in range(spec.n_actions)]


def engine_facts(variant: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """What this engine says about ``variant`` with ``options``: the fields a manifest must match."""
    spec = get_variant(variant)
    layout = observation_layout(spec)
    return {
        "format": MANIFEST_FORMAT, "variant": variant, "options": spec.resolve_options(dict(options or {})),
        "obs_dim": int(spec.obs_dim), "observation_layout": layout, "layout_fingerprint": layout_fingerprint(layout),
        "num_actions": int(spec.n_actions), "actions": _action_table(spec),
    }


def check_manifest(manifest: Any, where: str = MANIFEST_FILE) -> dict[str, Any]:
    """The engine's facts for a manifest that matches them; a :class:`ManifestMismatchError` naming the first
    field that differs otherwise (one line)."""
    if not isinstance(manifest, dict):
        raise OnnxPolicyError(f"{where}: not a JSON object")
    missing = [k for k in (*_CHECKED_FIELDS, "observation_layout") if k not in manifest]
    if missing:
        raise ManifestMismatchError(f"{where}: field {missing[0]} is missing")
    if manifest["format"] != MANIFEST_FORMAT:
        raise ManifestMismatchError(f"{where}: field format is {shown(manifest['format'], 80)}, this engine reads "
                                    f"{MANIFEST_FORMAT}")
    variant = manifest["variant"]
    if variant not in VARIANTS:
        raise ManifestMismatchError(f"{where}: field variant is {shown(variant, 80)}, which this engine does not "
                                    f"know (known: {', '.join(VARIANTS)})")
    options = manifest["options"]
    if not isinstance(options, dict):
        raise ManifestMismatchError(f"{where}: field options must be an object, got {shown(options, 80)}")
    try:
        facts = engine_facts(variant, options)
    except ValueError as e:
        raise ManifestMismatchError(f"{where}: field options: {' '.join(str(e).split())}") from None
    if facts["options"] != options:
        raise ManifestMismatchError(f"{where}: field options is {shown(options, 80)}, this engine resolves them to "
                                    f"{shown(facts['options'], 80)}")
    listed = manifest["observation_layout"]
    if not isinstance(listed, list) or layout_fingerprint(listed) != manifest["layout_fingerprint"]:
        raise ManifestMismatchError(f"{where}: field layout_fingerprint does not match the manifest's own "
                                    "observation_layout (a damaged manifest)")
    for key in ("obs_dim", "layout_fingerprint", "num_actions"):
        if manifest[key] != facts[key]:
            extra = ""
            if key == "layout_fingerprint":
                extra = f" ({_layout_difference(listed, facts['observation_layout'])})"
            raise ManifestMismatchError(f"{where}: field {key} is {shown(manifest[key], 80)}, this engine's {variant} "
                                        f"has {shown(facts[key], 80)}{extra}")
    actions = manifest["actions"]
    if not isinstance(actions, list) or len(actions) != facts["num_actions"]:
        raise ManifestMismatchError(f"{where}: field actions must list {facts['num_actions']} action strings")
    for a, (mine, theirs) in enumerate(zip(actions, facts["actions"], strict=True)):
        if mine != theirs:
            raise ManifestMismatchError(f"{where}: field actions differs at id {a}: {shown(mine, 80)}, this engine "
                                        f"says {shown(theirs, 80)}")
    return facts


def _layout_difference(listed: list[Any], engine: list[dict[str, Any]]) -> str:
    for k, (a, b) in enumerate(zip(listed, engine, strict=False)):
        if a != b:
            return f"section {k}: {shown(a, 60)} here, {shown(b, 60)} in the engine"
    return f"{len(listed)} sections here, {len(engine)} in the engine"


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """The manifest of a bot directory, parsed (not checked): :class:`OnnxPolicyError` naming the file (also for
    one over :data:`_MAX_MANIFEST_BYTES`, nested too deeply, or a stream that does not end)."""
    d = Path(directory)
    if not d.is_dir():
        raise OnnxPolicyError(f"bot directory {d} not found" if not d.exists() else f"{d} is not a directory")
    path = d / MANIFEST_FILE
    if not path.exists() and not path.is_symlink():
        raise OnnxPolicyError(f"{path} not found (is {d} a directory written by `tarocchi-rl export`?)")
    try:
        manifest = bounded.read_json(path, _MAX_MANIFEST_BYTES)
    except bounded.BoundedInputError as e:
        raise OnnxPolicyError(str(e)) from None
    if not isinstance(manifest, dict):
        raise OnnxPolicyError(f"{path}: not a JSON object")
    return manifest


def make_session(model_path: str | Path, threads: int = 1) -> Any:
    """An onnxruntime CPU session with ``threads`` intra-op threads (1 by default) and one inter-op thread."""
    try:
        import onnxruntime as ort  # the optional dependency of this module (the ``bot`` extra)
    except ImportError as e:
        raise OnnxPolicyError(f"onnx: agents need onnxruntime (pip install 'tarocchi-rl[bot]'): {e}") from None
    if int(threads) < 1:
        raise OnnxPolicyError(f"threads must be >= 1, got {threads}")
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(threads)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3  # errors only
    p = Path(model_path)
    if not p.is_file():
        raise OnnxPolicyError(f"{p} not found")
    if p.stat().st_size > MAX_MODEL_BYTES:
        raise OnnxPolicyError(f"{p}: {p.stat().st_size:,} bytes, more than the {MAX_MODEL_BYTES:,} allowed")
    try:
        return ort.InferenceSession(str(p), so, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception types for a damaged model
        raise OnnxPolicyError(f"{p} is not a loadable ONNX model: {' '.join(str(e).split())[:300]}") from None


class OnnxAgent(Agent):
    """Plays an exported policy: the argmax of its probabilities (``greedy``) or a sample from them.

    ``probabilities(obs, mask, env)`` -> float32[k, num_actions] and ``value(obs, mask)`` -> float32[k] give the
    network's outputs, as :class:`tarocchi_rl.rl.policy.PPOAgent` does for a checkpoint.
    """

    needs_obs = True
    needs_mask = True
    legal_by_construction = False  # probabilities are 0 on illegal actions, but the arena checks anyway

    def __init__(self, path: str | Path, greedy: bool = True, seed: int = 0, threads: int = 1,
                 label: str | None = None) -> None:
        self.path = Path(path)
        self.manifest = read_manifest(self.path)
        facts = check_manifest(self.manifest, str(self.path / MANIFEST_FILE))
        self.variant: str = facts["variant"]
        self.options: dict[str, Any] = facts["options"]
        self.obs_dim: int = facts["obs_dim"]
        self.num_actions: int = facts["num_actions"]
        self.actions: list[str] = facts["actions"]
        self.session = make_session(self.path / MODEL_FILE, threads)
        self._check_model()
        spec = get_variant(self.variant)
        self.belief_shape: tuple[int, int] = belief_shape(spec)
        self.belief_locations: tuple[str, ...] = location_names(spec.n_players)
        self.belief_session = self._load_beliefs(threads)
        self.threads = int(threads)
        self.greedy = bool(greedy)
        self.rng = np.random.default_rng(seed)
        self.name = label or f"onnx:{path}"

    def _check_model(self) -> None:
        """The model's inputs and outputs are the manifest's (names, element types and widths)."""
        where = self.path / MODEL_FILE
        want_in = {"obs": ("tensor(float)", self.obs_dim), "mask": ("tensor(bool)", self.num_actions)}
        want_out = {"probs": ("tensor(float)", self.num_actions), "value": ("tensor(float)", None)}
        for kind, args, want in (("input", self.session.get_inputs(), want_in),
                                 ("output", self.session.get_outputs(), want_out)):
            got = {a.name: a for a in args}
            if set(got) != set(want):
                raise OnnxPolicyError(f"{where}: {kind}s {sorted(got)}, expected {sorted(want)}")
            for name, (typ, width) in want.items():
                a = got[name]
                if a.type != typ:
                    raise OnnxPolicyError(f"{where}: {kind} {name} is {a.type}, expected {typ}")
                if width is not None and (len(a.shape) != 2 or a.shape[1] != width):
                    raise OnnxPolicyError(f"{where}: {kind} {name} has shape {a.shape}, expected [N, {width}]")

    def _load_beliefs(self, threads: int) -> Any:
        """The session of ``belief.onnx`` when the manifest lists one (None when its ``belief`` is null or absent),
        its input and output checked: ``obs`` alone in, ``beliefs`` [N, C, L] out."""
        entry = self.manifest.get("belief")
        if entry is None:
            return None
        where = self.path / MANIFEST_FILE
        if not isinstance(entry, dict) or entry.get("file") != BELIEF_FILE:
            raise OnnxPolicyError(f"{where}: field belief must be null or an object with file {BELIEF_FILE!r}")
        if entry.get("locations") != list(self.belief_locations):
            raise ManifestMismatchError(f"{where}: field belief.locations is {shown(entry.get('locations'), 80)}, this "
                                        f"engine's {self.variant} has {shown(list(self.belief_locations), 80)}")
        model = self.path / BELIEF_FILE
        session = make_session(model, threads)
        ins, outs = session.get_inputs(), session.get_outputs()
        if [a.name for a in ins] != list(BELIEF_INPUT_NAMES):  # the seat-view-only guarantee
            raise OnnxPolicyError(f"{model}: inputs {[a.name for a in ins]}, expected exactly "
                                  f"{list(BELIEF_INPUT_NAMES)}")
        if ins[0].type != "tensor(float)" or len(ins[0].shape) != 2 or ins[0].shape[1] != self.obs_dim:
            raise OnnxPolicyError(f"{model}: input obs is {ins[0].type} {ins[0].shape}, expected float "
                                  f"[N, {self.obs_dim}]")
        c, n_loc = self.belief_shape
        if ([a.name for a in outs] != list(BELIEF_OUTPUT_NAMES) or outs[0].type != "tensor(float)"
                or len(outs[0].shape) != 3 or list(outs[0].shape[1:]) != [c, n_loc]):
            raise OnnxPolicyError(f"{model}: outputs {[(a.name, a.shape) for a in outs]}, expected beliefs "
                                  f"float [N, {c}, {n_loc}]")
        return session

    # -- the network --------------------------------------------------------------------------------------
    def _inputs(self, obs: NDArray[Any] | None, mask: NDArray[Any] | None,
                env: BatchEnv | None) -> dict[str, NDArray[Any]]:
        if env is not None:
            if getattr(env, "variant", self.variant) != self.variant:
                raise ValueError(f"{self.name} was trained on {self.variant}, not {env.variant}")
            options = getattr(env, "options", None)
            if options is not None and options != self.options:
                raise ValueError(f"{self.name} was trained with options {self.options}, the game has {options}")
        if obs is None or mask is None:
            raise ValueError(f"{self.name} needs observations and masks")
        o = np.ascontiguousarray(obs, np.float32)
        m = np.ascontiguousarray(mask, np.bool_)
        if o.ndim != 2 or m.ndim != 2 or o.shape[1] != self.obs_dim or m.shape[1] != self.num_actions:
            raise ValueError(f"{self.name}: observations/masks of shape {o.shape}/{m.shape}, the network expects "
                             f"[k, {self.obs_dim}]/[k, {self.num_actions}]")
        if len(o) != len(m):
            raise ValueError(f"{self.name}: {len(o)} observations but {len(m)} masks")
        if not m.any(axis=1).all():
            raise ValueError(f"{self.name}: a row of the mask has no legal action")
        return {"obs": o, "mask": m}

    def run(self, obs: NDArray[Any] | None, mask: NDArray[Any] | None,
            env: BatchEnv | None = None) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """(probs float32[k, num_actions], value float32[k]) of k positions."""
        probs, value = self.session.run(list(OUTPUT_NAMES), self._inputs(obs, mask, env))
        return probs, value

    def probabilities(self, obs: NDArray[Any] | None, mask: NDArray[Any] | None,
                      env: BatchEnv | None = None) -> NDArray[np.float32]:
        """float32[k, num_actions]: the policy's action probabilities (0 on illegal actions)."""
        probs: NDArray[np.float32] = self.session.run(["probs"], self._inputs(obs, mask, env))[0]
        return probs

    def value(self, obs: NDArray[Any] | None, mask: NDArray[Any] | None,
              env: BatchEnv | None = None) -> NDArray[np.float32]:
        """float32[k]: the value head (the acting seat's expected payoff / payoff_scale)."""
        value: NDArray[np.float32] = self.session.run(["value"], self._inputs(obs, mask, env))[0]
        return value

    @property
    def has_beliefs(self) -> bool:
        """The bot directory holds a belief model (``belief.onnx``): :meth:`beliefs` answers."""
        return self.belief_session is not None

    def beliefs(self, obs: NDArray[Any]) -> NDArray[np.float32]:
        """float32[k, C, L]: where each card lies, from the seat's observations alone (:mod:`.belief`); a ValueError
        when the bot has no belief model."""
        if self.belief_session is None:
            raise ValueError(f"{self.name} has no belief model (exported from a policy trained with belief_loss: 0)")
        o = np.ascontiguousarray(obs, np.float32)
        if o.ndim != 2 or o.shape[1] != self.obs_dim:
            raise ValueError(f"{self.name}: observations of shape {o.shape}, the belief model expects "
                             f"[k, {self.obs_dim}]")
        out: NDArray[np.float32] = self.belief_session.run(list(BELIEF_OUTPUT_NAMES), {"obs": o})[0]
        return out

    def act(self, obs: NDArray[np.float32] | None, mask: NDArray[np.bool_] | None, env: BatchEnv | None = None,
            idx: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
        probs = self.probabilities(obs, mask, env)
        if self.greedy:
            return probs.argmax(axis=1).astype(np.int64)
        # inverse CDF: the first action whose cumulative probability exceeds u * total (illegal actions have
        # probability 0, so they never are the first; the clip covers u * total rounding up to the total)
        c = np.cumsum(probs, axis=1, dtype=np.float64)
        u = self.rng.random(len(c)) * c[:, -1]
        a = (c <= u[:, None]).sum(axis=1)
        last_legal = probs.shape[1] - 1 - (probs[:, ::-1] > 0).argmax(axis=1)
        return np.minimum(a, last_legal).astype(np.int64)
