"""The model card of a bot directory (``README.md``, written by ``tarocchi-rl export``): the template
:data:`~tarocchi_rl.rl.model_card_template.MODEL_CARD` filled from the manifest (:func:`model_card`)."""

import json
from typing import Any

from .model_card_template import MODEL_CARD


def model_card(m: dict[str, Any]) -> str:
    """The README.md of a bot directory, from its manifest ``m``; a KeyError names a field the card needs that
    the manifest lacks."""
    return MODEL_CARD.substitute(card_fields(m))


def card_fields(m: dict[str, Any]) -> dict[str, str]:
    """The template's values (``$name`` -> text) for the manifest ``m``."""
    p, net, cfg = m["provenance"], m["network"], m["provenance"]["config"]
    belief = m.get("belief")
    return {
        "variant": m["variant"], "long_name": m["long_name"], "format": m["format"], "n_players": str(m["n_players"]),
        "options": ", ".join(f"{k}={json.dumps(v)}" for k, v in m["options"].items()) or "none",
        "obs_dim": str(m["obs_dim"]), "num_actions": str(m["num_actions"]),
        "layout_fingerprint": m["layout_fingerprint"][:16], "payoff_scale": f"{m['payoff_scale']:g}",
        "evaluation": "\n".join(evaluation_lines(m.get("evaluation"))),
        "version": p.get("tarocchi_rl_version") or "?", "commits": commit_phrase(p), "start": start_phrase(p, cfg),
        "updates": str(p.get("update")), "samples": f"{p.get('samples') or 0:,}",
        "decisions": f"{p.get('decisions') or 0:,}", "minutes": f"{p.get('minutes') or 0:.1f}",
        "self_play_share": str(cfg["league"]["self_play_share"]),
        "heuristic_share": str(cfg["league"]["heuristic_share"]), "seed": str(cfg["seed"]),
        "opponent": str(cfg["league"].get("opponent", "heuristic")),
        "network": f"{network_words(net)} {'x'.join(str(h) for h in net['hidden'])}",
        "activation": str(net["activation"]), "parameters": f"{net['parameters']:,}",
        "checkpoint_sha256": p["checkpoint_sha256"][:16],
        "golden_positions": str(m["golden"]["positions"]), "golden_phases": ", ".join(m["golden"]["phases"]),
        "belief_paragraph": "".join(line + "\n" for line in belief_lines(belief)),
        "belief_file": "`belief.onnx` (the belief model), " if belief else "",
        "averaged": averaged_phrase(p),
    }


def averaged_phrase(p: dict[str, Any]) -> str:
    """" The weights are the mean of ...": the checkpoints the exported one averaged (empty when it did not)."""
    sources = p.get("averaged_from") or []
    if not sources:
        return ""
    updates = ", ".join(str(s.get("update")) for s in sources)
    return (f" The weights are the mean of {len(sources)} checkpoints of the run (updates {updates}; "
            "`experiments/studies/average_checkpoints.py`); its updates and samples are the last one's.")


def _commit_name(state: dict[str, Any]) -> str:
    """A git state of the provenance as the card names it: 12 digits of the commit, and whether it was dirty."""
    return (state.get("git_commit") or "unknown")[:12] + (" (with uncommitted changes)"
                                                         if state.get("git_dirty") else "")


def commit_phrase(p: dict[str, Any]) -> str:
    """The commits of the provenance ``p``: each start or resume of the training run (when recorded), then the
    export's."""
    sources = p.get("training_sources") or []
    if sources:  # the commit of each start / resume of the training run
        trained = "trained from commit " + ", then ".join(
            _commit_name(s) + (f" from update {s['from_update']}" if s.get("from_update") else "") for s in sources)
    else:  # a checkpoint from before runs recorded their commit
        trained = "training commit not recorded"
    return f"{trained}; exported from commit {_commit_name(p)}"


def start_phrase(p: dict[str, Any], cfg: dict[str, Any]) -> str:
    """How the training run started, before its PPO updates: from another checkpoint's weights (config ``init``),
    a warm start imitating a teacher (or recorded games), both (in that order) or neither (empty)."""
    teacher = cfg["imitation"].get("teacher", "heuristic")  # absent from configs older than the option
    teacher = "the heuristic" if teacher == "heuristic" else f"`{teacher}`"
    records = cfg["imitation"].get("records") or []  # absent from configs older than the option
    if records:
        whose = "people's" if cfg["imitation"].get("record_seats", "people") == "people" else "every seat's"
        teacher = f"{whose} decisions in the recorded games of " + ", ".join(f"`{r}`" for r in records)
    on = "at most " if records else ""
    start = (f"a warm start imitating {teacher} on {on}{cfg['imitation']['decisions']:,} decisions, then "
             if p.get("imitation_warm_start") else "")
    if cfg.get("init"):  # the run started from another checkpoint's weights
        start = f"from the weights of `{cfg['init']}` (config `init`), then {start}"
    return start


def network_words(net: dict[str, Any]) -> str:
    """How a model card names a manifest's network: "MLP", or the card encoder and the MLP after it."""
    if net.get("type") == "cards":
        return f"card encoder (width {net.get('card_width')}, mean and max over the cards), then MLP"
    return "MLP"


def evaluation_lines(e: dict[str, Any] | None) -> list[str]:
    """The card's "How strong": the evaluation of the manifest as a table of opponents (or how to run one)."""
    if not e:
        return ["Not evaluated (exported with `--eval-deals 0`): run `tarocchi-rl eval` (below)."]
    lines = [f"{e['method']}. Mean payoff per deal in {e['payoff_unit']} (positive: the bot wins), {e['deals']} "
             f"duplicate deals per opponent, seed {e['seed']}:", "",
             "| opponent | mean payoff / deal | 95% CI | deals won | deals |", "|---|---|---|---|---|"]
    for opp, r in e["opponents"].items():
        lo, hi = r["ci95"]
        wr = "-" if r["win_rate"] is None else f"{100 * r['win_rate']:.1f}%"
        lines.append(f"| {opp} | {r['mean_payoff_per_deal']:.3f} | [{lo:.3f}, {hi:.3f}] | {wr} | {r['deals']} |")
    return lines


def belief_lines(entry: dict[str, Any] | None) -> list[str]:
    """The model card's paragraph on ``belief.onnx`` and its blank line (nothing without one)."""
    if not entry:
        return []
    c, n_loc = entry["outputs"][0]["shape"][1:]
    return [f"`belief.onnx` reads the same `obs` alone and gives `beliefs` (float32[N, {c}, {n_loc}]): for each card, "
            f"the probability that it lies in each of {', '.join(entry['locations'])} (seats relative to the player "
            "to act), as that player sees it; `golden.jsonl` holds the expected beliefs too (`beliefs`, flattened).",
            ""]
