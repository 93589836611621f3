"""Running a script of experiments/ as a subprocess from the repository root, and reading what it prints."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ROOT / "experiments"
FOLDERS = ("bench", "checks", "studies", "docs")  # experiments/'s folders, by purpose (experiments/README.md)


def scripts() -> dict[str, Path]:
    """Every script of experiments/ by name (``bench_core``: ``experiments/bench/bench_core.py``); common.py, the
    scripts' shared helpers, is not one."""
    return {p.stem: p for folder in FOLDERS for p in sorted((EXPERIMENTS / folder).glob("*.py"))}


def run_script(name: str, *args: str, timeout: float = 300, env: dict[str, str] | None = None,
               cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``python experiments/FOLDER/NAME.py ARGS`` (this interpreter, the repository root as the working directory);
    stdout and stderr captured as text. ``env``: variables added to this process's environment."""
    return subprocess.run([sys.executable, str(scripts()[name]), *args], cwd=cwd,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout)


def ok(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    """``done`` itself, once its exit status is 0 (else the assertion shows the end of its stderr)."""
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stderr[-3000:]}"
    return done


def last_json(text: str) -> Any:
    """The last line of ``text`` that is a JSON object."""
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise AssertionError(f"no JSON line in:\n{text[-2000:]}")


def git_worktrees() -> set[str]:
    """The paths of the repository's worktrees (the side-by-side benchmarks must leave none behind)."""
    out = subprocess.run(["git", "-C", str(ROOT), "worktree", "list", "--porcelain"], capture_output=True,
                         text=True).stdout
    return {line.removeprefix("worktree ") for line in out.splitlines() if line.startswith("worktree ")}
