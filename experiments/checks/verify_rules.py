"""The rules proven at scale: many random deals of every variant played on the Numba core and on the independent
oracles of tests/oracles/ side by side (``make verify``: 100,000 deals per variant on two cores).

    python experiments/checks/verify_rules.py [--deals 100000] [--variants mineo,...]
                                       [--workers 2] [--seed 1000000] [--chunk 500] [--out summary.json]

Each family's deals are played by its driver beside its oracle, ``tests/oracles/verify_<family>.py`` (the family
module's name): ``case(variant, seed)`` chooses the options and the policy of deal ``seed`` (``--seed`` + 0, 1,
...) so that every option value and the rare branches are met, and ``play(...)`` plays the deal on the Numba core
and on the oracle side by side. At every decision both must agree on the player to act and the exact set of legal
actions; at the end on the payoffs, and on what else the driver's docstring lists (its cases too). A registered
variant whose family has no driver is refused.

A mismatch (or any exception) prints the variant, seed, options, policy and message, and the run goes on; the exit
status is 1 when any deal failed. Printed per variant: deals, decisions checked, failures, seconds, deals/s, and
the non-card actions taken (the rare branches reached); then the total wall time. ``--out``: the same as JSON.
"""

import argparse
import importlib
import json
import multiprocessing
import os
import sys
import time
from collections import Counter
from functools import cache
from types import ModuleType
from typing import Any

import tarocchi_rl
from tarocchi_rl.variants import VARIANTS, get_variant

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CARD_ACTIONS = ("play:", "discard:")


@cache
def driver(variant: str) -> ModuleType:
    """The oracle driver of ``variant``'s family (``tests/oracles/verify_<family>.py``), with the project root on
    sys.path as under pytest (``tests.support.X``, ``tests.oracles.X``)."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    family = get_variant(variant).rules.__name__.rsplit(".", 1)[1]
    try:
        return importlib.import_module(f"tests.oracles.verify_{family}")
    except ModuleNotFoundError as e:
        if e.name != f"tests.oracles.verify_{family}":
            raise
        raise SystemExit(f"verify_rules: no oracle driver for {variant} (tests/oracles/verify_{family}.py)") from None


@cache
def action_names(variant: str) -> tuple[str, ...]:
    """Action id -> string (phase-free spelling), for tallying the non-card actions Mineo's policies choose."""
    g = tarocchi_rl.make(variant)
    return tuple(g.action_to_string(a) for a in range(g.num_actions))


def case(variant: str, seed: int) -> tuple[dict[str, Any], str]:
    """The options and the policy (its name) of deal ``seed``: the family driver's choice."""
    result: tuple[dict[str, Any], str] = driver(variant).case(variant, seed)
    return result


class Counted:
    """A policy of the tests wrapped to count the decisions (one call per decision checked) and tally the non-card
    actions chosen. ``choice(legal ids)`` for Mineo's play_both, ``choose(names)`` for the 78-card one."""

    def __init__(self, inner: Any, names: tuple[str, ...] = ()) -> None:
        self.inner = inner
        self.names = names
        self.decisions = 0
        self.tally: Counter[str] = Counter()

    def choice(self, legal: list[int]) -> Any:
        self.decisions += 1
        a = self.inner.choice(legal)
        name = self.names[int(a)]
        if not name.startswith(CARD_ACTIONS):
            self.tally[name] += 1
        return a

    def choose(self, names: list[str]) -> int:
        self.decisions += 1
        k = self.inner.choose(names)
        if not names[k].startswith(CARD_ACTIONS):
            self.tally[names[k]] += 1
        return k


def play(variant: str, seed: int, options: dict[str, Any], policy_name: str) -> tuple[Counted, dict[str, int]]:
    """One deal on both implementations, by the family's driver; an AssertionError says where they differ.
    Returns the counted policy and the extra figures (French: the deals where the two readings of
    excuse_last_trick differ)."""
    result: tuple[Counted, dict[str, int]] = driver(variant).play(
        variant, seed, options, policy_name, lambda inner: Counted(inner, action_names(variant)))
    return result


def run_chunk(job: tuple[str, int, int]) -> dict[str, Any]:
    """Deals start..stop-1 of a variant: counts, failures and tallies."""
    variant, start, stop = job
    decisions = 0
    failures: list[dict[str, Any]] = []
    tally: Counter[str] = Counter()
    extra: Counter[str] = Counter()
    for seed in range(start, stop):
        options, policy_name = case(variant, seed)
        try:
            policy, more = play(variant, seed, options, policy_name)
        except Exception as e:  # a mismatch (AssertionError) or either implementation failing
            message = str(e) if isinstance(e, AssertionError) else f"{type(e).__name__}: {e}"
            failures.append({"variant": variant, "seed": seed, "options": options, "policy": policy_name,
                             "error": message})
            continue
        decisions += policy.decisions
        tally.update(policy.tally)
        extra.update(more)
    return {"deals": stop - start, "decisions": decisions, "failures": failures, "tally": dict(tally),
            "extra": dict(extra)}


def _init_worker() -> None:
    import numba

    numba.set_num_threads(1)  # one deal at a time per process: the batch-of-one kernels need no thread pool


def _clock(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m // 60}h{m % 60:02d}m{s:02d}s" if m >= 60 else f"{m}m{s:02d}s"


def verify_variant(variant: str, deals: int, seed: int, chunk: int, pool: Any) -> dict[str, Any]:
    jobs = [(variant, s, min(s + chunk, seed + deals)) for s in range(seed, seed + deals, chunk)]
    t0 = time.perf_counter()
    done = decisions = 0
    failures: list[dict[str, Any]] = []
    tally: Counter[str] = Counter()
    extra: Counter[str] = Counter()
    next_report = deals // 10
    results = pool.imap_unordered(run_chunk, jobs) if pool is not None else map(run_chunk, jobs)
    for r in results:
        done += r["deals"]
        decisions += r["decisions"]
        tally.update(r["tally"])
        extra.update(r["extra"])
        for f in r["failures"]:
            failures.append(f)
            print(f"FAIL {f['variant']} seed {f['seed']} options {f['options']} policy {f['policy']}: {f['error']}",
                  flush=True)
        if deals >= 10_000 and done >= next_report and done < deals:
            print(f"  {variant}: {done:,}/{deals:,} deals, {_clock(time.perf_counter() - t0)}", flush=True)
            next_report += deals // 10
    seconds = time.perf_counter() - t0
    return {"deals": done, "decisions": decisions, "failures": len(failures), "seconds": round(seconds, 1),
            "deals_per_s": round(done / seconds, 1) if seconds > 0 else None, "failed": failures,
            "actions": dict(sorted(tally.items())), "extra": dict(extra)}


def warm_up(variants: list[str]) -> None:
    """Compile (or load from Numba's cache) every kernel in this process before the workers are forked."""
    for v in variants:
        options, name = case(v, 0)
        play(v, 0, options, name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=100_000, help="random deals per variant (default 100000)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated (default: all)")
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2; 1: no pool)")
    ap.add_argument("--seed", type=int, default=1_000_000, help="the first deal's seed (default 1000000)")
    ap.add_argument("--chunk", type=int, default=500, help="deals per job sent to a worker (default 500)")
    ap.add_argument("--out", help="write the summary as JSON to this file")
    args = ap.parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or args.deals < 1 or args.workers < 1 or args.chunk < 1:
        ap.error(f"unknown variants {unknown}" if unknown else "--deals, --workers and --chunk must be >= 1")
    chunk = max(1, min(args.chunk, -(-args.deals // (4 * args.workers))))

    t0 = time.perf_counter()
    print(f"verify_rules: {args.deals:,} deals per variant ({', '.join(variants)}), seeds {args.seed}.."
          f"{args.seed + args.deals - 1}, {args.workers} worker(s)", flush=True)
    _init_worker()
    warm_up(variants)
    summary: dict[str, Any] = {"deals_per_variant": args.deals, "seed": args.seed, "workers": args.workers,
                               "variants": {}}
    pool = multiprocessing.get_context("fork").Pool(args.workers, _init_worker) if args.workers > 1 else None
    try:
        for v in variants:
            r = verify_variant(v, args.deals, args.seed, chunk, pool)
            summary["variants"][v] = r
            print(f"{v:10s} deals {r['deals']:>9,}  decisions {r['decisions']:>12,}  failures {r['failures']:>4}  "
                  f"{r['seconds']:>8.1f} s  {r['deals_per_s']:>7.1f} deals/s", flush=True)
            rare = ", ".join(f"{k} {n:,}" for k, n in r["actions"].items())
            extra = ", ".join(f"{k} {n:,}" for k, n in r["extra"].items())
            print(f"{'':10s} non-card actions taken: {rare or 'none'}" + (f"; {extra}" if extra else ""), flush=True)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    total = time.perf_counter() - t0
    deals = sum(r["deals"] for r in summary["variants"].values())
    decisions = sum(r["decisions"] for r in summary["variants"].values())
    failures = sum(r["failures"] for r in summary["variants"].values())
    summary.update(total_deals=deals, total_decisions=decisions, total_failures=failures,
                   total_seconds=round(total, 1))
    print(f"total: {deals:,} deals, {decisions:,} decisions checked, {failures} failures, "
          f"wall time {total:.1f} s ({_clock(total)})", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
