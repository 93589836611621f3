"""``experiments/bench/bench_ppo_stacks.py``: our trainer's stack in a run of three updates (``--set``), and a stack
that is not installed in this venv refused in one line (tests/envs/test_bench_stacks_script.py runs the openspiel stack;
rllib needs its own venv, .venv-stacks, which make test does not build)."""

import subprocess
import sys

import pytest

from .scripts import last_json, ok, run_script

TINY = ["num_workers=0", "async_rollouts=false", "max_updates=3", "num_envs=8", "rollout_steps=6",
        "network.hidden=[32]", "ppo.minibatch_size=64", "ppo.epochs=1", "torch_threads=1"]


def test_the_tarocchi_stack_times_a_tiny_run():
    sets = [x for s in TINY for x in ("--set", s)]
    done = ok(run_script("bench_ppo_stacks", "--stack", "tarocchi", "--seconds", "0.01", "--repeats", "1",
                         "--warmup", "0", "--json", *sets))
    r = last_json(done.stdout)
    assert r["stack"] == "tarocchi" and r["variant"] == "mineo" and r["settings"] == {"overrides": TINY}
    (rep,) = r["repeats"]
    assert rep["iterations"] == 2  # the updates after the first, which is not timed
    assert 0 < rep["learner_decisions"] < rep["decisions"]  # the learner's seats are some of every seat's
    assert r["median_decisions_per_s"] > 0


def test_set_is_for_the_tarocchi_stack_only():
    done = run_script("bench_ppo_stacks", "--stack", "openspiel", "--set", "num_workers=0")
    assert done.returncode == 2 and "--set is for --stack tarocchi only" in done.stderr


def test_a_stack_that_does_not_import_is_one_line():
    if subprocess.run([sys.executable, "-c", "import ray.rllib.algorithms.ppo"], capture_output=True).returncode == 0:
        pytest.skip("RLlib imports in this venv: nothing to refuse")
    done = run_script("bench_ppo_stacks", "--stack", "rllib", "--seconds", "1")
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: --stack rllib cannot run in ") and "ray.rllib.algorithms.ppo does not import" in line
