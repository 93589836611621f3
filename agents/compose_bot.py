"""``compose:bid=SPEC,play=SPEC[,rest=SPEC]``: one agent per kind of decision (a
:class:`~tarocchi_rl.policies.ComposeAgent`), and the composed bot directory, loaded as ``onnx:DIR``.

The spec names an agent spec for each kind of :data:`~tarocchi_rl.core.phases.DECISION_KINDS` (``bid``: the
auction and every commitment; ``discard``; ``play``), ``rest=SPEC`` for those not named; a piece that is not
``KIND=...`` belongs to the spec before it (``play=ismcts:time=0.05,iterations=100``); a nested compose is refused.

``tarocchi-rl export --agent compose:bid=ppo:A,play=ppo:B,rest=heuristic --out DIR`` writes::

    DIR/compose.json        {"format": "tarocchi-compose/1", "variant": V, "kinds": {KIND: PART, ...},
                             "evaluation": ...}   PART: {"bot": "parts/NAME"} or {"agent": "heuristic" | "random"}
    DIR/parts/NAME/         one exported bot (policy.onnx, manifest.json, golden.jsonl, README.md) per distinct
                            policy: ``ppo:PATH`` parts are exported, ``onnx:DIR`` / ``bot:NAME`` parts copied
    DIR/README.md           what plays which kind, and the evaluation

Loading (:func:`load_composed_bot`, no torch) reads ``compose.json`` as untrusted input: the format, the variant,
every kind of :data:`~tarocchi_rl.core.phases.DECISION_KINDS` exactly once, each part either a baseline by name or
a sub-directory of ``parts/`` (no other path) holding a bot of the same variant; anything else is an
:class:`OnnxPolicyError` naming the field.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from tarocchi_rl import bounded
from tarocchi_rl.arena import MAX_DEALS
from tarocchi_rl.core.phases import DECISION_KINDS
from tarocchi_rl.policies import BASELINES, AgentLike, ComposeAgent, make_baseline
from tarocchi_rl.policies.onnx_policy import OnnxAgent, OnnxPolicyError, read_manifest
from tarocchi_rl.shipped import bot_directory

from .args import Arg
from .registry import AgentKind, make_agent, register_kind

REST = "rest"  # the spec's key for the kinds of decision not named
ARGS = tuple(Arg(kind, "spec", f"the agent of the {kind} decisions") for kind in DECISION_KINDS) + (
    Arg(REST, "spec", "the agent of the kinds not named"),)


def parse_compose_spec(args: str) -> dict[str, str]:
    """``bid=SPEC,play=SPEC,rest=SPEC`` -> {kind: spec} for every kind of DECISION_KINDS (a ValueError names a
    kind given twice, an unknown one, one naming no agent or a nested compose, or a kind left without an agent)."""
    return _parts(COMPOSE.parse(args))


def _parts(given: dict[str, Any]) -> dict[str, str]:
    """The agent spec of every kind from the spec's values (:func:`parse_compose_spec`)."""
    for kind, sub in given.items():
        if sub is not None and not sub:
            raise ValueError(f"compose: {kind}= names no agent")
        if sub is not None and sub.lower().startswith("compose"):
            raise ValueError(f"compose: {kind}={sub!r}: a nested compose is not supported")
    missing = [k for k in DECISION_KINDS if given[k] is None]
    if missing and given[REST] is None:
        raise ValueError(f"compose: no agent for {', '.join(missing)} (name each kind or add rest=SPEC)")
    return {k: given[REST] if given[k] is None else given[k] for k in DECISION_KINDS}


def _build(values: dict[str, Any], seed: int, label: str) -> AgentLike:
    parts = _parts(values)
    return ComposeAgent({kind: make_agent(sub, seed + k) for k, (kind, sub) in enumerate(parts.items())}, name=label)


COMPOSE = register_kind(AgentKind("compose", "one agent per kind of decision (tarocchi_rl.policies.ComposeAgent)",
                                  build=_build, args=ARGS, pair_form="kind=SPEC"))

COMPOSE_FILE = "compose.json"
COMPOSE_FORMAT = "tarocchi-compose/1"
MAX_COMPOSE_BYTES = 2**20  # bytes of compose.json (an export writes under 2 kB)


def is_composed_bot(path: str | Path) -> bool:
    """``path`` is a composed bot directory (it holds ``compose.json``)."""
    try:
        return (Path(path) / COMPOSE_FILE).is_file()
    except (OSError, ValueError):
        return False


def load_composed_bot(path: str | Path, greedy: bool = True, seed: int = 0, threads: int = 1,
                      label: str | None = None) -> ComposeAgent:
    """The :class:`ComposeAgent` of a composed bot directory (module docstring)."""
    root = Path(path)
    f = root / COMPOSE_FILE
    try:
        m = bounded.read_json(f, MAX_COMPOSE_BYTES)
    except bounded.BoundedInputError as e:
        raise OnnxPolicyError(str(e)) from None
    if not isinstance(m, dict) or m.get("format") != COMPOSE_FORMAT:
        raise OnnxPolicyError(f"{f}: format must be {COMPOSE_FORMAT!r}")
    variant, kinds = m.get("variant"), m.get("kinds")
    if not isinstance(variant, str):
        raise OnnxPolicyError(f"{f}: variant must be a string")
    if not isinstance(kinds, dict) or sorted(kinds) != sorted(DECISION_KINDS):
        raise OnnxPolicyError(f"{f}: kinds must name each of {', '.join(DECISION_KINDS)} once")
    parts: dict[str, Any] = {}
    loaded: dict[str, OnnxAgent] = {}
    for k, kind in enumerate(DECISION_KINDS):
        part = kinds[kind]
        if isinstance(part, dict) and set(part) == {"agent"} and part["agent"] in BASELINES:
            parts[kind] = make_baseline(part["agent"], seed + k)
            continue
        sub = part.get("bot") if isinstance(part, dict) and set(part) == {"bot"} else None
        if not (isinstance(sub, str) and sub.startswith("parts/") and sub.count("/") == 1
                and sub[len("parts/"):].replace("_", "").replace("-", "").isalnum()):
            raise OnnxPolicyError(f"{f}: kinds.{kind} must be {{\"agent\": \"heuristic\" | \"random\"}} or "
                                  "{\"bot\": \"parts/NAME\"}")
        if sub not in loaded:
            agent = OnnxAgent(root / sub, greedy=greedy, seed=seed + k, threads=threads, label=f"{kind}:{sub}")
            if agent.variant != variant:
                raise OnnxPolicyError(f"{f}: kinds.{kind}: {sub} plays {agent.variant}, the bot {variant}")
            loaded[sub] = agent
        parts[kind] = loaded[sub]
    return ComposeAgent(parts, name=label or f"onnx:{path}")


def _part_source(spec: str) -> tuple[str, str]:
    """(kind of part, what): ("agent", NAME) for a baseline, ("ppo", PATH), or ("bot", DIR) for an exported one."""
    name, _, args = spec.strip().partition(":")
    name = name.lower()
    if name in BASELINES and not args:
        return "agent", name
    if name == "ppo" and args and "," not in args:
        return "ppo", args.strip()
    directory = bot_directory(spec) if args.strip() and "," not in args else None
    if directory is not None:  # onnx:DIR, bot:NAME
        return "bot", str(directory)
    raise OnnxPolicyError(f"a composed export holds trained policies (ppo:PATH, onnx:DIR, bot:NAME, without "
                          f"options) and baselines (random, heuristic), got {spec!r}")


def export_composed(spec: str, out: str | Path, eval_deals: int = 500, golden: int = 256, seed: int = 0,
                    progress: bool = False) -> dict[str, Any]:
    """Write the composed bot directory of ``compose:...`` spec ``spec`` to ``out`` (module docstring); returns
    its ``compose.json``. torch is needed only for ``ppo:`` parts."""
    if not 0 <= eval_deals <= MAX_DEALS:
        raise OnnxPolicyError(f"--eval-deals must be >= 0 and <= {MAX_DEALS}, got {eval_deals}")
    body = spec.strip()[len("compose:"):] if spec.strip().lower().startswith("compose:") else None
    if body is None:
        raise OnnxPolicyError(f"not a compose spec: {spec!r}")
    by_kind = parse_compose_spec(body)
    sources = {kind: _part_source(sub) for kind, sub in by_kind.items()}
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not is_composed_bot(out))):
        raise OnnxPolicyError(f"--out {out} exists and is not empty (only a previous composed export is replaced)")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.export-", dir=out.parent))
    try:
        kinds: dict[str, dict[str, str]] = {}
        names: dict[tuple[str, str], str] = {}
        for kind, (what, src) in sources.items():
            if what == "agent":
                kinds[kind] = {"agent": src}
                continue
            if (what, src) not in names:
                name = names[(what, src)] = "_".join(k for k, s in sources.items() if s == (what, src))
                target = staging / "parts" / name
                if what == "ppo":
                    from tarocchi_rl.rl.export import export_policy  # torch: only for a ppo: part

                    export_policy(src, target, eval_deals=0, golden=golden, seed=seed)
                else:
                    OnnxAgent(src)  # a damaged or foreign bot fails here, before it is copied
                    shutil.copytree(src, target)
            kinds[kind] = {"bot": f"parts/{names[(what, src)]}"}
        variants = {read_manifest(p)["variant"] for p in staging.glob("parts/*")}  # parts checked when made
        if len(variants) > 1:
            raise OnnxPolicyError(f"the parts play different variants: {', '.join(sorted(variants))}")
        if not variants:
            raise OnnxPolicyError("a composed export needs at least one trained policy (only baselines given)")
        manifest: dict[str, Any] = {"format": COMPOSE_FORMAT, "variant": variants.pop(), "kinds": kinds,
                                    "spec": spec.strip()}
        (staging / COMPOSE_FILE).write_text(json.dumps(manifest, indent=1) + "\n")
        if eval_deals:
            manifest["evaluation"] = _evaluate(staging, manifest["variant"], eval_deals, seed, progress)
            (staging / COMPOSE_FILE).write_text(json.dumps(manifest, indent=1) + "\n")
        (staging / "README.md").write_text(_card(manifest))
        if out.exists():
            shutil.rmtree(out)
        staging.replace(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def _evaluate(directory: Path, variant: str, deals: int, seed: int, progress: bool) -> dict[str, Any]:
    """The composed bot (greedy) against heuristic and random in the duplicate arena."""
    from tarocchi_rl.arena import run_arena

    agent = load_composed_bot(directory, label="this bot")
    out: dict[str, Any] = {"deals": deals, "seed": seed, "opponents": {}}
    for opp in ("heuristic", "random"):
        row = run_arena(variant, [agent, opp], deals=deals, seed=seed, progress=progress)["table"][0]
        out["opponents"][opp] = {"mean_payoff_per_deal": row["mean_payoff_per_deal"], "ci95": row["ci95"],
                                 "win_rate": row["win_rate"]}
    return out


def _card(m: dict[str, Any]) -> str:
    lines = [f"# tarocchi-rl composed bot: {m['variant']}", "", f"Made by `tarocchi-rl export --agent {m['spec']}`.",
             "Each kind of decision is played by its own part (`compose.json`):", "",
             "| kind | played by |", "|---|---|"]
    lines += [f"| {k} | {v.get('agent') or '`' + v['bot'] + '/` (exported policy)'} |" for k, v in m["kinds"].items()]
    ev = m.get("evaluation")
    if ev:
        lines += ["", f"Duplicate arena, {ev['deals']} deals (seed {ev['seed']}), mean payoff per deal [95% CI]:", ""]
        for opp, r in ev["opponents"].items():
            lines.append(f"- vs {opp}: {r['mean_payoff_per_deal']:+.3f} [{r['ci95'][0]:+.3f}, {r['ci95'][1]:+.3f}]")
    lines += ["", f"Load it as `onnx:THIS_DIR` (onnxruntime and numpy only: `tarocchi-rl eval --variant {m['variant']} "
              "--agents onnx:THIS_DIR,heuristic`).", ""]
    return "\n".join(lines)
