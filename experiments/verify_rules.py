"""The rules proven at scale: many random deals of every variant played on the Numba core and on the independent
oracles of tests/oracles/ side by side (``make verify``: 100,000 deals per variant on two cores).

    python experiments/verify_rules.py [--deals 100000] [--variants mineo,...,tarok4]
                                       [--workers 2] [--seed 1000000] [--chunk 500] [--out summary.json]

The comparison is the differential tests' own: ``play_both`` of tests/mineo/test_mineo_differential.py and of
tests/core/test_differential_78.py, imported from there (one place for it). At every decision both must agree on
the player to act and the exact set of legal actions; at the end on the payoffs (Mineo also: the thirds of card
points and the jochi of each side). The end-of-deal checks of the 78-card tests are made too: Piedmont's thirds per
side with the bonuses (``points_thirds``) and the deck's total, French's taker half points and score.

Deal ``seed`` (``--seed`` + 0, 1, ...) is played with options and a policy chosen from the seed, so that every
option value and the rare branches are met (the policies of the tests, which prefer the rare actions):

    mineo      early_solo true / false   x  uniform random / _PreferCommitments (call, scommessa, rivanto)
    piedmont3  honour_5 mondo / angelo   x  excuse_exchange true / false            (uniform random)
    piedmont4  accuso false / true (accuso_points 5 / 7)  x  excuse_exchange true / false
               x  uniform random (1 in 4) / preferring accuso
    french3/4  excuse_last_trick other_side / trick_winner  x  french_preferences (random / low bids and
               poignees / garde, poignee, chelem)
    tarok3/4   uniform random / passive (pass 3 times in 4): the engine and tests/oracles/oracle_tarok.py in
               lockstep through tests/support/tarok.py's Both (player, legal set, end, returns)

A mismatch (or any exception) prints the variant, seed, options, policy and message, and the run goes on; the exit
status is 1 when any deal failed. Printed per variant: deals, decisions checked, failures, seconds, deals/s, and
the non-card actions taken (the rare branches reached); then the total wall time. ``--out``: the same as JSON.
"""

import argparse
import importlib.util
import json
import multiprocessing
import os
import sys
import time
from collections import Counter
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np

import tarocchi_rl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")
VARIANTS = ("mineo", "piedmont3", "piedmont4", "french3", "french4", "tarok3", "tarok4")
DECK_THIRDS = {"piedmont3": 231, "piedmont4": 243}
CARD_ACTIONS = ("play:", "discard:")


def _load(name: str, relpath: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, os.path.join(TESTS, relpath))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@cache
def tests() -> tuple[ModuleType, ModuleType]:
    """The two differential test modules, with the paths they import from on sys.path as under pytest: the project
    root (``tests.support.X``, ``tests.oracles.X``), and tests/ and tests/oracles/ (helpers imported by bare
    name)."""
    for path in (os.path.join(TESTS, "oracles"), TESTS, ROOT):
        if path not in sys.path:
            sys.path.insert(0, path)
    return (_load("test_mineo_differential", "mineo/test_mineo_differential.py"),
            _load("test_differential_78", "core/test_differential_78.py"))


@cache
def action_names(variant: str) -> tuple[str, ...]:
    """Action id -> string (phase-free spelling), for tallying the non-card actions Mineo's policies choose."""
    g = tarocchi_rl.make(variant)
    return tuple(g.action_to_string(a) for a in range(g.num_actions))


def case(variant: str, seed: int) -> tuple[dict[str, Any], str]:
    """The options and the policy (its name) of deal ``seed``."""
    if variant == "mineo":
        return {"early_solo": seed % 2 == 0}, ("uniform", "commitments")[seed // 2 % 2]
    if variant == "piedmont3":
        return {"honour_5": ("mondo", "angelo")[seed % 2], "excuse_exchange": seed // 2 % 2 == 0}, "uniform"
    if variant == "piedmont4":
        options: dict[str, Any] = {"accuso": seed % 2 == 1, "excuse_exchange": seed // 2 % 2 == 0}
        if options["accuso"] and seed // 4 % 2:
            options["accuso_points"] = 7
        return options, ("uniform", "prefer_accuso", "prefer_accuso", "prefer_accuso")[seed // 8 % 4]
    if variant in ("french3", "french4"):
        return {"excuse_last_trick": ("other_side", "trick_winner")[seed % 2]}, ("random", "low", "high")[seed % 3]
    if variant in ("tarok3", "tarok4"):
        return {}, ("uniform", "passive")[seed % 2]
    raise ValueError(f"unknown variant {variant!r}")


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
    """One deal on both implementations; an AssertionError says where they differ. Returns the counted policy and
    the extra figures (French: the deals where the two readings of excuse_last_trick differ)."""
    md, d78 = tests()
    extra: dict[str, int] = {}
    if variant == "mineo":
        inner = md._PreferCommitments(seed) if policy_name == "commitments" else np.random.default_rng(seed)
        policy = Counted(inner, action_names(variant))
        md.play_both(seed, policy_rng=policy, **options)
        return policy, extra
    if variant.startswith("piedmont"):
        policy = Counted(d78.Policy(seed, ("accuso",) if policy_name == "prefer_accuso" else ()))
        state, oracle = d78.play_both(variant, seed, d78._piedmont(variant, **options), policy, **options)
        out = state.outcome()
        with_bonus = [u + sum(b["points"] for b in out["bonuses"] if b["side"] == k)
                      for k, u in enumerate(out["card_point_units"])]
        assert with_bonus == oracle.points_thirds(), f"{variant} seed {seed}: thirds {with_bonus} vs " \
                                                     f"{oracle.points_thirds()}"
        assert sum(out["card_point_units"]) == DECK_THIRDS[variant], f"{variant} seed {seed}: deck total"
        return policy, extra
    if variant.startswith("tarok"):
        return play_tarok(variant, seed, policy_name), extra
    policy = Counted(d78.Policy(seed, d78.french_preferences(seed)))
    state, oracle = d78.play_both(variant, seed, d78._french(int(variant[-1]), **options), policy, **options)
    out = state.outcome()
    if oracle.score()["taker"] >= 0:
        assert out["card_point_units"][0] == oracle.taker_half_points(), f"{variant} seed {seed}: half points"
        assert out["details"]["score"] == oracle.score()["T"], f"{variant} seed {seed}: score"
        extra["excuse_changed_camp"] = int(d78._excuse_changed_camp(state, oracle))
    return policy, extra


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


class _TarokPolicy:
    """Random legal strings (sorted, so that the seed fixes the choice); ``passive``: ``bid:pass`` 3 times in 4
    where legal, so that the low contracts (klop, three, two) are met as often as the high ones."""

    def __init__(self, seed: int, passive: bool) -> None:
        self.rng = np.random.default_rng(seed)
        self.passive = passive

    def choose(self, names: list[str]) -> int:
        if self.passive and "bid:pass" in names and self.rng.random() < 0.75:
            return names.index("bid:pass")
        return int(self.rng.integers(len(names)))


def play_tarok(variant: str, seed: int, policy_name: str) -> Counted:
    """One random deal of tarok on the engine and on its oracle (tests/oracles/oracle_tarok.py) in lockstep, by
    tests/support/tarok.py's ``Both`` (every query asserts that the two agree): the player, the legal actions
    at every decision, the end and the returns. The deck: a shuffle in which every hand holds a tarok."""
    tests()  # the paths
    from tests.support.tarok import Both

    players = int(variant[-1])
    h = {3: 16, 4: 12}[players]
    rng = np.random.default_rng(seed)
    names = list(tarocchi_rl.make(variant).deck.names)
    while True:
        deck = [names[c] for c in rng.permutation(len(names))]
        if all(any(c.startswith("T") for c in deck[h * s: h * (s + 1)]) for s in range(players)):
            break
    policy = Counted(_TarokPolicy(seed, policy_name == "passive"))
    both = Both(players, deck)
    while not both.done():
        both.player()
        legal = sorted(both.legal())
        both.apply(legal[policy.choose(legal)])
    both.returns()
    return policy


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
