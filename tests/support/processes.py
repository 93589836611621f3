"""Processes as tests see them (Linux /proc)."""


def is_gone(pid: int) -> bool:
    """No such process, or only its zombie left for its parent to reap."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.startswith("State:") and "Z" in line.split()[1] for line in f)
    except FileNotFoundError:
        return True
