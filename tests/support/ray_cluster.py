"""A private two-node Ray cluster on this machine (:func:`running_cluster`; the fixture ``ray_cluster`` of
``tests/cluster``).

Two ``ray start --block`` processes, each the leader of its own session: the head (``--num-cpus=1``, the
dashboard and job server on 127.0.0.1) and a second node (``--num-cpus=1 --resources '{"node2": 1}'``). Both
listen on 127.0.0.1 (Ray itself advertises the machine's address), with ports picked free here (GCS,
dashboard, Ray client server, each node's dashboard agent; Ray picks the others itself), a private
``--temp-dir`` and a private authentication token (``RAY_AUTH_MODE=token``, ``RAY_AUTH_TOKEN``): nothing is
shared with another Ray on the machine (another engineer's ``ray.init``, another run of these tests).

The temp dir is a short ``/tmp/trc-ray-*`` directory, not one under pytest's tmp dir: Ray puts its Unix
sockets at ``TEMP/session_<date>_<pid>/sockets/plasma_store.1``, and a pytest path (``/tmp/pytest-of-USER/
pytest-N/popen-gwK/...``) makes that longer than a socket path may be (107 bytes).

Stopping never uses ``ray stop`` (it kills every Ray process of the machine). Every process of the cluster,
down to the job drivers (which Ray starts in sessions of their own), carries the environment variable
``TAROCCHI_RAY_CLUSTER=<random id>``; teardown sends SIGTERM to the two ``ray start --block`` processes
(each then stops its node's processes), waits, then SIGKILLs whatever still carries the variable, and fails
if anything survives. Bounded waits throughout. ``ray start`` also gets PR_SET_PDEATHSIG (SIGTERM): a test
process that is killed outright still takes its cluster down.
"""

import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # the project root
BIN = Path(sys.executable).parent  # .venv/bin: ray and tarocchi-rl next to the test's Python
MARKER = "TAROCCHI_RAY_CLUSTER"
START_TIMEOUT = 120  # s, one node's `ray start` on a loaded 2-core machine (about 10 s when idle)
STOP_TIMEOUT = 20  # s, SIGTERM to gone (about 5 s)
JOB_AGENT_TIMEOUT = 90  # s, until the head's dashboard agent accepts jobs (it may lag "Ray runtime started")


@dataclass
class RayCluster:
    """A running two-node cluster: ``address`` (GCS, ``127.0.0.1:PORT``, for ``--ray-address``),
    ``dashboard`` (``http://127.0.0.1:PORT``, for ``ray job submit --address``), ``env`` (what every process
    talking to it needs: the token) and ``logs`` (a dir). Ray is only reached from fresh processes: never
    ``ray.init`` in the test process, whose pytest-xdist worker runs other Ray tests."""

    address: str
    dashboard: str
    env: dict
    logs: Path

    def run(self, args: list, timeout: float) -> subprocess.CompletedProcess:
        """Run a command against the cluster from the project root (stdout and stderr captured, text)."""
        return subprocess.run([str(a) for a in args], cwd=ROOT, env=self.env, capture_output=True, text=True,
                              timeout=timeout, preexec_fn=_die_with_parent)

    def submit_job(self, entrypoint: list, timeout: float) -> subprocess.CompletedProcess:
        """``ray job submit --address DASHBOARD -- ENTRYPOINT``, waiting for the job server: until the head's
        dashboard agent is up, the submission is refused ("No available agent to submit job": nothing was
        submitted), so it is tried again for up to :data:`JOB_AGENT_TIMEOUT` seconds."""
        deadline = time.monotonic() + JOB_AGENT_TIMEOUT
        while True:
            r = self.run([BIN / "ray", "job", "submit", "--address", self.dashboard, "--", *entrypoint], timeout)
            if "No available agent to submit job" not in r.stdout + r.stderr or time.monotonic() > deadline:
                return r
            time.sleep(2)


def free_ports(n: int) -> list[int]:
    """n distinct ports free at the moment on every interface (Ray's servers bind all of them)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def marked_pids(marker: str) -> list[int]:
    """The live processes whose environment holds ``marker`` (``NAME=value``); zombies have none."""
    needle, me, out = marker.encode(), os.getpid(), []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    out.append(int(d))
        except OSError:  # gone, or not ours to read
            pass
    return out


def _die_with_parent() -> None:
    """preexec_fn: SIGTERM this child when the test process dies (Linux prctl PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)


def _wait_port(proc: subprocess.Popen, port: int, log: Path) -> None:
    """Until the head's GCS accepts connections (then the second node may join while the head finishes)."""
    deadline = time.monotonic() + START_TIMEOUT
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.25)
    _wait_started(proc, log, "ray start (head)")  # fails with the log


def _wait_started(proc: subprocess.Popen, log: Path, what: str) -> None:
    """Until ``ray start --block`` says the node runs; a failure with its log when it exits or times out."""
    deadline = time.monotonic() + START_TIMEOUT
    while "Ray runtime started" not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            state = f"exited with {proc.returncode}" if proc.returncode is not None else f"not up in {START_TIMEOUT} s"
            pytest.fail(f"{what} {state}; its log {log}:\n{log.read_text(errors='replace')[-4000:]}")
        time.sleep(0.25)


def _stop(procs: list[subprocess.Popen], marker: str) -> list[str]:
    """SIGTERM the ``ray start`` processes, then SIGKILL every marked process left; returns what survived."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=5)
    while marked_pids(marker) and time.monotonic() < deadline:
        time.sleep(0.25)
    for pid in marked_pids(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    end = time.monotonic() + 5
    while marked_pids(marker) and time.monotonic() < end:
        time.sleep(0.1)
    left = []
    for pid in marked_pids(marker):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:200]
        except OSError:
            continue
        left.append(f"{pid}: {cmd.decode(errors='replace')}")
    return left


@contextlib.contextmanager
def running_cluster(logs: Path) -> Iterator[RayCluster]:
    """The module docstring's cluster (its nodes' logs in ``logs``), stopped at the end whatever happens;
    a test failure when a node does not start or a process survives."""
    temp_dir = tempfile.mkdtemp(prefix="trc-ray-", dir="/tmp")  # short: Unix socket paths (module docstring)
    marker_value = secrets.token_hex(8)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update({MARKER: marker_value, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
                "RAY_USAGE_STATS_ENABLED": "0", "PYTHONUNBUFFERED": "1"})
    marker = f"{MARKER}={marker_value}"
    gcs, dash, client, agent1, agent2 = free_ports(5)
    common = ["--block", "--temp-dir", temp_dir, "--disable-usage-stats", "--object-store-memory", "100000000"]
    nodes = [
        ("head", [BIN / "ray", "start", "--head", "--node-ip-address=127.0.0.1", f"--port={gcs}", "--num-cpus=1",
                  "--include-dashboard=true", "--dashboard-host=127.0.0.1", f"--dashboard-port={dash}",
                  f"--ray-client-server-port={client}", f"--dashboard-agent-listen-port={agent1}", *common]),
        ("node2", [BIN / "ray", "start", f"--address=127.0.0.1:{gcs}", "--node-ip-address=127.0.0.1",
                   "--num-cpus=1", '--resources={"node2": 1}', f"--dashboard-agent-listen-port={agent2}", *common]),
    ]
    procs: list[subprocess.Popen] = []
    try:
        for name, cmd in nodes:
            with open(logs / f"{name}.log", "w") as f:  # the head's directory is where job entrypoints run
                procs.append(subprocess.Popen([str(c) for c in cmd], cwd=ROOT, env=env, stdout=f,
                                              stderr=subprocess.STDOUT, start_new_session=True,
                                              preexec_fn=_die_with_parent))
            if name == "head":
                _wait_port(procs[0], gcs, logs / "head.log")
        for (name, _), proc in zip(nodes, procs, strict=True):
            _wait_started(proc, logs / f"{name}.log", f"ray start ({name})")
        yield RayCluster(f"127.0.0.1:{gcs}", f"http://127.0.0.1:{dash}", env, logs)
    finally:
        left = _stop(procs, marker)
        shutil.rmtree(temp_dir, ignore_errors=True)
        assert not left, f"processes of the test cluster survived SIGKILL: {left}"
