"""Training on a real two-node Ray cluster on this machine (the fixture ``ray_cluster``: ``ray start --head`` and
``ray start --address``, 1 CPU each), the two ways the README gives:

* ``tarocchi-rl train --config configs/ppo_mineo.yaml --ray-address 127.0.0.1:PORT`` with ``num_workers: 2``;
* ``ray job submit --address http://127.0.0.1:DASHBOARD -- .venv/bin/tarocchi-rl train ...`` with no
  ``--ray-address`` (the job server sets ``RAY_ADDRESS``, which the trainer joins; the entrypoint runs in the
  head's directory, the project root, so no ``--working-dir``). The job must succeed and its logs hold the
  training result.

Each run is tiny (8 games, 2 updates, no evaluation) and must have played on both nodes: every checkpoint's
``workers`` list carries the Ray node id of each rollout worker (:mod:`tarocchi_rl.rl.rollout`); the two
workers of a run must name two different nodes (the cluster has no others; with one CPU per node they cannot
share one), the same two for both runs. One test function: pytest-xdist would give a second test its own
cluster.
"""

import json
import os

import pytest

from tarocchi_rl.rl.checkpoint import load_checkpoint
from tests.support.ray_cluster import BIN, ROOT, RayCluster

pytestmark = pytest.mark.cluster

TINY = ["num_workers=2", "num_envs=8", "rollout_steps=6", "network.hidden=[32]", "ppo.minibatch_size=64",
        "ppo.epochs=1", "imitation.decisions=0", "eval.every=0", "eval.final_deals=0", "max_updates=2"]
RUN_TIMEOUT = 300  # s, one training run (about 15 s; a cold Numba cache compiles the core in each actor first)


def _train_args(out, ray_address: str | None) -> list[str]:
    sets = [a for kv in TINY for a in ("--set", kv)]
    address = ["--ray-address", ray_address] if ray_address else []
    return ["train", "--config", "configs/ppo_mineo.yaml", "--out", str(out), "--no-progress", *address, *sets]


def _result(stdout: str, out) -> dict:
    """The result line ``tarocchi-rl train`` prints (JSON) for the run in ``out``."""
    for line in stdout.splitlines():
        if line.startswith("{") and f'"run_dir": {json.dumps(str(out))}' in line:
            return json.loads(line)
    raise AssertionError(f"no training result for {out} in the output:\n{stdout[-4000:]}")


def _worker_nodes(out, result: dict) -> set[str]:
    """The Ray nodes of the run's two workers (from final.pt), checked to be two."""
    assert result["updates"] == 2 and result["samples"] > 0
    nodes = [w.get("node_id") for w in load_checkpoint(out)["workers"]]
    assert len(nodes) == 2 and all(nodes) and len(set(nodes)) == 2, f"the 2 workers ran on nodes {nodes}"
    return set(nodes)


def test_training_runs_on_both_nodes_directly_and_as_a_job(ray_cluster: RayCluster, tmp_path):
    out = tmp_path / "direct"
    r = ray_cluster.run([BIN / "tarocchi-rl", *_train_args(out, ray_cluster.address)], timeout=RUN_TIMEOUT)
    assert r.returncode == 0, f"train --ray-address failed ({r.returncode}):\n{r.stderr[-4000:]}"
    nodes = _worker_nodes(out, _result(r.stdout, out))

    out = tmp_path / "job"
    entrypoint = os.path.relpath(BIN / "tarocchi-rl", ROOT)  # .venv/bin/tarocchi-rl, as the README has it
    r = ray_cluster.submit_job([entrypoint, *_train_args(out, None)], timeout=RUN_TIMEOUT)
    logs = r.stdout + r.stderr
    assert r.returncode == 0 and "succeeded" in logs, f"ray job submit failed ({r.returncode}):\n{logs[-4000:]}"
    assert _worker_nodes(out, _result(logs, out)) == nodes
