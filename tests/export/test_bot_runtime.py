"""The light runtime (the ``bot`` extra: numpy, numba, onnxruntime): with torch impossible to import, an exported
bot answers over the protocol (with probabilities and value), guides ISMCTS as its prior, and plays in
``tarocchi-rl play``."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.no_torch import NO_TORCH

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys
from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.bot import BotServer, Referee
from tarocchi_rl.cli import main

bot_dir, record = sys.argv[1], sys.argv[2]
server = BotServer(f"onnx:{bot_dir}", make_agent)
assert server.capabilities() == ["act", "probabilities", "value"], server.capabilities()
ref = Referee()
msg = ref.handle(json.dumps({"type": "new", "variant": "mineo", "seed": 2}))
answers = 0
while msg["type"] == "turn":
    ans = server.handle(json.dumps({**msg["request"], "want": ["probabilities", "value"]}))
    assert ans["type"] == "action", ans
    assert abs(sum(ans["probabilities"].values()) - 1) < 1e-4 and ans["action"] in ans["probabilities"]
    assert isinstance(ans["value"], float)
    answers += 1
    msg = ref.handle(json.dumps({"type": "apply", "action": ans["action"]}))
searcher = BotServer(f"ismcts:iterations=50,prior=onnx:{bot_dir}", make_agent)
first = Referee().handle(json.dumps({"type": "new", "variant": "mineo", "seed": 5}))["request"]
s = searcher.handle(json.dumps({**first, "want": ["search"]}))
assert s["type"] == "action" and s["search"]["iterations"] > 0, s
seats = f"onnx:{bot_dir},heuristic,onnx:{bot_dir},random"
assert main(["play", "--variant", "mineo", "--seats", seats, "--seed", "3", "--record", record]) == 0
loaded = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
assert not loaded, loaded
print("answers", answers)
"""


def test_bot_search_prior_and_play_without_torch(bot, tmp_path):
    (tmp_path / "sitecustomize.py").write_text(NO_TORCH)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    record = tmp_path / "game.json"
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), str(bot), str(record)], capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "answers" in p.stdout and record.is_file()
