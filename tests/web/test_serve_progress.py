"""``tarocchi-rl serve`` says what its warm-up does (issue 52: a first start sat two minutes on "Waiting for application
startup" without a word): a line per step, each variant's tables among them, before the application starts."""

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

START_SECONDS = 600  # a cold Numba cache compiles for minutes: the test waits for the server, whatever it takes


def test_serve_prints_its_warm_up_step_by_step():
    from tarocchi_rl.variants import VARIANTS

    script = Path(sys.executable).with_name("tarocchi-rl")
    cmd = [str(script)] if script.exists() else [sys.executable, "-c",
                                                  "import sys; from tarocchi_rl.cli import main; sys.exit(main())"]
    proc = subprocess.Popen([*cmd, "serve", "--port", "0", "--db", "none"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: list[str] = []
    started = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if "Uvicorn running on" in line:
                started.set()
        started.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        started.wait(START_SECONDS)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(10)
    if not any("Uvicorn running on" in line for line in lines):
        pytest.fail("serve did not start:\n" + "\n".join(lines))
    steps = [line for line in lines if line.startswith("warm-up: ")]
    ready = next(k for k, line in enumerate(lines) if "Application startup complete" in line)
    assert steps and all(lines.index(step) < ready for step in steps)  # said while the start waits for them
    assert steps[0].startswith("warm-up: loading the compiled kernels")
    for variant in VARIANTS:
        assert any(re.match(rf"warm-up: {variant}: .*\(\d+\.\d s\)$", step) for step in steps), (variant, steps)
    assert any("/v1/act worker processes ready" in step for step in steps)
    assert re.match(r"warm-up: done in \d+\.\d s", steps[-1]), steps
