# ruff: noqa: E501  (a paragraph of the card is one line of markdown)
"""The model card of a bot directory (its ``README.md``) as a :class:`string.Template` of markdown, filled by
:func:`tarocchi_rl.rl.model_card.model_card` from the manifest. A ``$name`` is a value of the manifest, or a
phrase or block made from several (``$evaluation``: the evaluation table; ``$belief_paragraph``: the paragraph on
``belief.onnx``, with its blank line, or nothing)."""

from string import Template

MODEL_CARD = Template("""\
# tarocchi-rl bot: $variant

A policy network for **$long_name** (`$variant`, options: $options), exported by `tarocchi-rl export` in the `$format` format. It plays every decision of the game (bids, calls, discards, announcements, card play) for any seat; $n_players players.

## What it plays

Input: the observation of the player to act, $obs_dim floats (layout in `manifest.json`, `observation_layout`, fingerprint `$layout_fingerprint...`), and the mask of its $num_actions actions (the action table: `manifest.json`, `actions`). Output: a probability per action (0 on illegal ones) and a value (expected payoff / $payoff_scale). Greedy play takes the most probable action.

## How strong

$evaluation

## How it was trained

PPO self-play (tarocchi-rl $version; $commits): $start$updates updates on $samples learner samples ($decisions decisions in all, $minutes minutes), a league of self-play ($self_play_share), the fixed opponent `$opponent` ($heuristic_share) and past snapshots, seed $seed.$averaged Network: $network, $activation, $parameters parameters; shared by every seat. The full config is in `manifest.json` (`provenance.config`); the checkpoint's sha256 is `$checkpoint_sha256...`.

## What it cannot do

- It plays only `$variant` with these options; an engine whose observation layout or action table differs refuses to load it (the manifest is checked field by field).
- It sees only its own observation: no memory beyond what the observation encodes, no search, no reasoning about other seats' hidden cards beyond what it learned.
- Its strength is the evaluation above, against the baseline bots; nothing is known against people.
- The value head estimates payoffs for the positions it was trained on; it is not calibrated elsewhere.

## How to load it

```bash
pip install 'tarocchi-rl[bot]'   # onnxruntime and numpy: no torch
tarocchi-rl eval --variant $variant --agents onnx:THIS_DIR,heuristic --deals 1000
```

```python
from tarocchi_rl.policies.onnx_policy import OnnxAgent

bot = OnnxAgent('THIS_DIR')                  # checks manifest.json against the engine
actions = bot.act(obs, mask)                 # greedy; bot.probabilities(obs, mask), bot.value(obs, mask)
```

Any ONNX runtime works: feed `obs` (float32[N, $obs_dim]) and `mask` (bool[N, $num_actions]), read `probs` and `value`. `golden.jsonl` holds $golden_positions positions from every phase that occurred ($golden_phases) with the expected probabilities: a runtime that reproduces them (within 1e-5) plays like this bot.

${belief_paragraph}Files: `policy.onnx` (the network), `manifest.json` (what it plays, provenance, evaluation), `golden.jsonl`, ${belief_file}this card.
""")
