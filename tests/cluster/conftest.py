"""The fixture ``ray_cluster`` of the tests of ``tests/cluster``: a private two-node Ray cluster on this machine
(:mod:`tests.support.ray_cluster`), one per test module, stopped at the end whatever happens."""

import sys
from collections.abc import Iterator

import pytest

from tests.support.ray_cluster import BIN, RayCluster, running_cluster


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayCluster]:
    """A running cluster, or a skip where one cannot run (not Linux, no Ray, no ``ray`` command)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the cluster fixture finds its processes in /proc (Linux)")
    pytest.importorskip("ray")
    pytest.importorskip("aiohttp", reason="ray job submit needs ray[default] (pip install -e .[train])")
    if not (BIN / "ray").exists():
        pytest.skip(f"no ray command next to {sys.executable}")
    logs = tmp_path_factory.mktemp("ray-cluster-logs")
    with running_cluster(logs) as cluster:
        yield cluster
