"""Shipped files (tarocchi_rl/shipped.py): ``train --variant V`` takes the shipped config, ``bot:NAME`` plays a
shipped bot, and both work from a built wheel outside the repository."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tarocchi_rl.agents.specs import make_agent
from tarocchi_rl.arena import run_arena
from tarocchi_rl.cli import main
from tarocchi_rl.policies.onnx_policy import GOLDEN_FILE, MANIFEST_FILE, MODEL_FILE, README_FILE
from tarocchi_rl.shipped import CONFIGS_DIR, MODELS_DIR, shipped_bot, shipped_config
from tarocchi_rl.variants import VARIANTS

REPO = Path(__file__).resolve().parents[2]
SHIPPED_BOTS = sorted(p.name for p in MODELS_DIR.glob("*") if (p / "manifest.json").is_file())
QUICK = ["--set", "num_workers=0", "--set", "max_updates=1", "--set", "num_envs=8", "--set", "rollout_steps=8",
         "--set", "imitation.decisions=0", "--set", "eval.every=0", "--set", "eval.final_deals=0",
         "--set", "network.hidden=[16]", "--no-progress"]


def test_every_variant_has_a_shipped_config_that_is_the_repository_file():
    for v in VARIANTS:
        assert shipped_config(v).resolve() == (REPO / "configs" / f"ppo_{v}.yaml").resolve()
    assert CONFIGS_DIR.resolve() == (REPO / "configs").resolve()


def test_train_variant_uses_the_shipped_config(tmp_path, capsys):
    assert main(["train", "--variant", "french4", "--out", str(tmp_path / "r"), *QUICK]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["updates"] == 1
    assert "variant: french4" in (tmp_path / "r/config.yaml").read_text()


@pytest.mark.parametrize("argv, message", [
    (["train", "--variant", "nosuch"], "no shipped training config for variant 'nosuch'"),
    (["train", "--variant", "mineo", "--config", "configs/ppo_mineo.yaml"], "not both"),
    (["eval", "--variant", "mineo", "--agents", "bot:nosuch,heuristic"], "no shipped bot 'nosuch'"),
    (["eval", "--variant", "mineo", "--agents", "bot:../configs,heuristic"], "no shipped bot"),
])
def test_bad_shipped_names_are_one_line_errors(argv, message, capsys, tmp_path):
    assert main([*argv, *(["--out", str(tmp_path / "r")] if argv[0] == "train" else [])]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


@pytest.mark.parametrize("name", SHIPPED_BOTS)
def test_each_shipped_bot_plays_its_variant(name):
    agent = make_agent(f"bot:{name}", seed=0)
    assert agent.name == f"bot:{name}"
    manifest = json.loads((shipped_bot(name) / "manifest.json").read_text())
    r = run_arena(manifest["variant"], [agent, "heuristic"], deals=4, seed=1, progress=False)
    assert r["games"] > 0


def test_a_wheel_ships_the_configs_and_bots_and_they_work_outside_the_repository(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path / "dist"), str(REPO)], check=True, cwd=tmp_path, timeout=600)
    (wheel,) = (tmp_path / "dist").glob("tarocchi_rl-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        z.extractall(site)
    for v in VARIANTS:
        assert f"tarocchi_rl/configs/ppo_{v}.yaml" in names
    for name in SHIPPED_BOTS:
        for f in (MODEL_FILE, MANIFEST_FILE, GOLDEN_FILE, README_FILE):
            assert f"tarocchi_rl/models/{name}/{f}" in names
    work = tmp_path / "elsewhere"  # no configs/ or models/ here: only the wheel's files can be found
    work.mkdir()
    # the packaging is what is tested: the wheel's code runs without compiling its kernels again (a new path)
    env = {**os.environ, "PYTHONPATH": str(site), "NUMBA_DISABLE_JIT": "1"}
    code = ("import sys, tarocchi_rl; print(tarocchi_rl.__file__); from tarocchi_rl.cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    run = subprocess.run([sys.executable, "-c", code, "train", "--variant", "piedmont3", "--out", "r", *QUICK],
                         cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines()[0].startswith(str(site))  # the wheel's package, not the repository's
    assert json.loads(run.stdout.strip().splitlines()[-1])["updates"] == 1
    for name in SHIPPED_BOTS:
        variant = json.loads((shipped_bot(name) / "manifest.json").read_text())["variant"]
        run = subprocess.run([sys.executable, "-c", code, "eval", "--variant", variant, "--agents",
                              f"bot:{name},heuristic", "--deals", "2"], cwd=work, env=env, capture_output=True,
                             text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-2000:]
