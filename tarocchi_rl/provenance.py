"""Where code ran from: the git commit of the source tree this package was imported from, and the machine.

Recorded by the trainer in every checkpoint (``sources``: one entry per start or resume of a run) and by the
export in a bot's manifest (the commit it was exported from), so that a bot names the code that trained it.
"""

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

_SOURCE_TREE = Path(__file__).resolve().parent  # git -C: the checkout this module was imported from, if any


def git_state() -> dict[str, Any]:
    """{"git_commit": HEAD's sha or None, "git_dirty": tracked files modified, or None} of this package's tree
    (None, None when it is not a git checkout, e.g. an installed wheel, or git is missing)."""
    try:
        commit = subprocess.run(["git", "-C", str(_SOURCE_TREE), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(_SOURCE_TREE), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip() != ""
    except (OSError, subprocess.SubprocessError):
        return {"git_commit": None, "git_dirty": None}
    return {"git_commit": commit or None, "git_dirty": dirty}


def machine_stamp() -> dict[str, Any]:
    """{"platform", "cpus", "python"}: the machine a benchmark's result file was measured on."""
    return {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version()}
