"""The arena's runner: :func:`run_arena` checks its arguments, deals, and plays every pair of agents on every deal
in blocks, in memory or kept in a blocks file (:mod:`.blocks`) so that a long arena resumes."""

import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..policies import AgentLike, agent_label, make_baseline
from ..variants import VariantSpec, get_variant
from .blocks import BlockFile, block_key, block_seed
from .deals import MAX_DEALS, random_decks, seatings
from .games import play_games
from .report import Progress, check_out_dir, write_outputs
from .statistics import Block, Tally, agent_table, bid_stats, declarer_stats, head_to_head

MAX_WORKERS = 64  # processes of a resumable arena playing its blocks side by side



def run_arena(
    variant: str,
    agent_specs: Sequence[str | AgentLike],
    deals: int | None = None,
    seed: int = 0,
    decks: NDArray[np.integer[Any]] | None = None,
    options: dict[str, Any] | None = None,
    out_dir: str | os.PathLike[str] | None = None,
    progress: bool = False,
    batch_deals: int | None = None,
    make_agent: Callable[..., AgentLike] = make_baseline,
    blocks_file: str | os.PathLike[str] | None = None,
    fingerprint: Callable[[str], str] | None = None,
    workers: int = 1,
) -> dict[str, Any]:
    """Run the duplicate arena; returns the results dict (see the module docstring).

    ``agent_specs``: agent objects or spec strings; strings are built by ``make_agent(spec, seed=...)``
    (default: the baselines ``random`` and ``heuristic``; the CLI passes
    :func:`tarocchi_rl.agents.specs.make_agent`, which knows every spec). The deals: ``decks`` (int[n, C]), or
    ``deals`` deals dealt from ``seed``. ``progress``: a progress bar on stderr (the CLI's, on a terminal; quiet
    by default). The games are played in blocks: one pair of agents on ``batch_deals`` deals.

    Two modes. By default the agents are built once and play every block (:func:`_run_in_memory`; ``out_dir``
    gets the results, the games' records and a plot). ``blocks_file`` (with ``fingerprint``, a digest of what a
    spec names) makes the arena resumable (:func:`_run_resumable`): finished blocks are recorded there and the
    ones already recorded are not played again (:mod:`tarocchi_rl.arena.blocks`; spec strings only, every
    block's agents built afresh from seeds of their own; no ``out_dir``). A resumable arena plays its missing
    blocks in ``workers`` processes side by side (:func:`_play_missing_blocks`; the same results as one process:
    a block depends on its key alone).
    """
    spec = get_variant(variant)
    options = spec.resolve_options(options or {})
    _check_arena_args(agent_specs, out_dir, blocks_file, fingerprint, workers)
    _check_deal_count(deals, decks)
    # in memory, the agents are built before anything is dealt: a bad agent (a missing checkpoint) is reported at
    # once, without compiling the dealing kernels first
    agents = None if blocks_file is not None else [make_agent(s, seed=seed + 1000 * k)
                                                   for k, s in enumerate(agent_specs)]
    game_decks = _arena_decks(spec, deals, decks, seed, options)
    setup = _ArenaSetup(spec, variant, options, [agent_label(s) for s in agent_specs], game_decks, seed,
                        seatings(spec.n_players), progress, batch_deals)
    if agents is None:
        assert fingerprint is not None and blocks_file is not None  # checked above
        return _run_resumable(setup, [str(s) for s in agent_specs], make_agent, blocks_file, fingerprint, workers)
    return _run_in_memory(setup, agents, out_dir)


def _check_arena_args(agent_specs: Sequence[str | AgentLike], out_dir: str | os.PathLike[str] | None,
                      blocks_file: str | os.PathLike[str] | None, fingerprint: Callable[[str], str] | None,
                      workers: int = 1) -> None:
    """The arguments of :func:`run_arena` that are checked before any agent is built or game played (a ValueError
    saying what is wrong): a usable ``out_dir``, two agents at least, and a resumable arena's needs."""
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"--workers must be an integer in [1, {MAX_WORKERS}], got {workers!r}")
    if workers > 1 and blocks_file is None:
        raise ValueError("--workers above 1 plays the blocks of a resumable arena: it needs a blocks file "
                         "(--blocks FILE, or the leaderboard's --blocks-dir)")
    if out_dir:
        check_out_dir(out_dir)  # before any game: a bad --out must not cost the whole evaluation
    if len(agent_specs) < 2:
        raise ValueError("the arena needs at least two agents (e.g. --agents heuristic,random)")
    if blocks_file is not None:
        if out_dir:
            raise ValueError("a resumable arena (a blocks file) keeps no game records: no out_dir with it")
        if fingerprint is None or not all(isinstance(s, str) for s in agent_specs):
            raise ValueError("a resumable arena (a blocks file) needs agent spec strings and their fingerprint")


def _check_deal_count(deals: int | None, decks: NDArray[np.integer[Any]] | None) -> None:
    """A ValueError when there are neither deals nor decks, or their number is out of bounds (before any work)."""
    if decks is None:
        if deals is None:
            raise ValueError("run_arena needs a number of deals or the decks")
        if not 1 <= deals <= MAX_DEALS:
            raise ValueError(f"--deals must be >= 1 and <= {MAX_DEALS}, got {deals}")
    elif not 1 <= len(decks) <= MAX_DEALS:
        raise ValueError(f"an arena plays 1 to {MAX_DEALS} deals, got {len(decks)}")


def _arena_decks(spec: VariantSpec, deals: int | None, decks: NDArray[np.integer[Any]] | None, seed: int,
                 options: dict[str, Any]) -> NDArray[np.integer[Any]]:
    """The arena's deals (int[n, C], 1 <= n <= :data:`MAX_DEALS`): ``decks`` when given, else ``deals`` deals
    dealt from ``seed`` (their number checked by :func:`_check_deal_count` before)."""
    if decks is None:
        assert deals is not None  # checked
        decks = random_decks(spec, int(deals), seed, **options)
    return decks


@dataclass(frozen=True)
class _ArenaSetup:
    """What both modes of :func:`run_arena` share, checked: the variant, its resolved options, the agents'
    labels (K), the deals (int[n, C]), the seed, the seatings of a pair (int8[G, N]), the progress switch and
    the deals per block (None: about 4k games per block)."""

    spec: VariantSpec
    variant: str
    options: dict[str, Any]
    labels: list[str]
    decks: NDArray[np.integer[Any]]
    seed: int
    maps: NDArray[np.int8]
    progress: bool
    batch_deals: int | None


def _run_in_memory(setup: _ArenaSetup, agents: Sequence[AgentLike],
                   out_dir: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The arena with its agents built once (by :func:`run_arena`: agent k from seed ``seed + 1000 * k``) and kept
    for every block; with ``out_dir``, the games are recorded and the outputs written there
    (:func:`write_outputs`)."""
    records: list[dict[str, Any]] | None = [] if out_dir else None

    def play(a: int, b: int, lo: int, d: NDArray[np.integer[Any]], bar: Progress, base: int) -> tuple[Block, bool]:
        return _play_block(setup.spec, d, agents[a], agents[b], setup.maps, setup.options, bar, base, records), False

    t0 = time.perf_counter()
    results = _results(setup, _play_pairs(setup, play), t0)
    if out_dir:
        write_outputs(out_dir, results, records or [])
    return results


def _run_resumable(setup: _ArenaSetup, specs: list[str], make_agent: Callable[..., AgentLike],
                   blocks_file: str | os.PathLike[str], fingerprint: Callable[[str], str],
                   workers: int = 1) -> dict[str, Any]:
    """The arena kept in ``blocks_file``: each block read from there when recorded, else played by agents built
    afresh for it and recorded (:func:`_recorded_or_played`; with ``workers`` > 1 the missing blocks are played
    first, side by side, :func:`_play_missing_blocks`); the results count the blocks reused."""
    prints = [fingerprint(s) for s in specs]
    store = BlockFile(blocks_file)
    t0 = time.perf_counter()
    played_now = _play_missing_blocks(setup, specs, prints, store, make_agent, workers) if workers > 1 else set()

    def play(a: int, b: int, lo: int, d: NDArray[np.integer[Any]], bar: Progress, base: int) -> tuple[Block, bool]:
        block, recorded = _recorded_or_played(store, setup.spec, setup.options, (specs[a], specs[b]),
                                              (prints[a], prints[b]), setup.seed, lo, d, setup.maps, make_agent,
                                              bar, base)
        return block, recorded and (a, b, lo) not in played_now

    tally = _play_pairs(setup, play)
    results = _results(setup, tally, t0)
    results["blocks_reused"] = tally.reused
    return results


_BlockSource = Callable[[int, int, int, NDArray[np.integer[Any]], "Progress", int], tuple[Block, bool]]
"""How a mode gets a block: (agent a, agent b, its first deal's index, its deals int[k, C], the progress bar, the
games played before it) -> (the block, whether it was read from a blocks file instead of played)."""


def _play_pairs(setup: _ArenaSetup, play: _BlockSource) -> Tally:
    """Every pair of agents (a < b) on every deal, in blocks of deals got from ``play``; returns the tally."""
    n_agents, n_deals, per_pair = len(setup.labels), len(setup.decks), len(setup.maps)
    pairs = list(combinations(range(n_agents), 2))
    tally = Tally.empty(n_agents, n_deals)
    bar = Progress(len(pairs) * n_deals * per_pair, enabled=setup.progress)
    for a, b in pairs:
        pair_score = np.zeros((2, n_deals))
        for lo, d in _chunks(setup):
            block, recorded = play(a, b, lo, d, bar, tally.games)
            pair_score[:, lo : lo + len(d)] = block[0]
            tally.add_block(a, b, block, recorded)
            bar.update(tally.games)
        tally.add_pair(a, b, pair_score)
    bar.close()
    return tally


def _chunks(setup: _ArenaSetup) -> Iterator[tuple[int, NDArray[np.integer[Any]]]]:
    """A pair's blocks of deals: (the first deal's index, the decks int[k, C]), ``batch_deals`` deals each (by
    default about 4k games: the state stays in cache)."""
    chunk = setup.batch_deals or max(1, 4096 // len(setup.maps))
    for lo in range(0, len(setup.decks), chunk):
        yield lo, setup.decks[lo : lo + chunk]


def _play_missing_blocks(setup: _ArenaSetup, specs: list[str], prints: list[str], store: BlockFile,
                         make_agent: Callable[..., AgentLike], workers: int) -> set[tuple[int, int, int]]:
    """Every block missing from ``store`` played in ``workers`` spawned processes (each with its share of Numba's
    threads) and recorded by this one as it finishes; returns the blocks played, (agent a, agent b, first deal).
    A block is a function of its key (its agents are built from its own seeds), so the order does not matter."""
    missing = []
    for a, b in combinations(range(len(specs)), 2):
        for lo, d in _chunks(setup):
            seeds, key = _seeds_and_key(setup.spec, setup.options, (specs[a], specs[b]), (prints[a], prints[b]),
                                        setup.seed, lo, d, setup.maps)
            if store.get(key) is None:
                missing.append(((a, b, lo), key, (specs[a], specs[b]), seeds, d))
    if not missing:
        return set()
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    import numba

    threads = max(1, numba.config.NUMBA_NUM_THREADS // workers)
    bar = Progress(sum(len(m[4]) for m in missing) * len(setup.maps), enabled=setup.progress)
    done_games, played = 0, set()
    with ProcessPoolExecutor(min(workers, len(missing)), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_block_task, setup.spec, setup.options, pair, seeds, d, setup.maps, make_agent,
                               threads): (which, key) for which, key, pair, seeds, d in missing}
        try:
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    which, key = futures[f]
                    block = f.result()  # a failed block stops the arena; the finished ones stay recorded
                    store.add(key, *block)
                    played.add(which)
                    done_games += block[3]
                    bar.update(done_games)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    bar.close()
    return played


def _block_task(spec: VariantSpec, options: dict[str, Any], specs: tuple[str, str], seeds: tuple[int, int],
                d: NDArray[np.integer[Any]], maps: NDArray[np.int8], make_agent: Callable[..., AgentLike],
                threads: int) -> Block:
    """One block in a worker process of :func:`_play_missing_blocks`."""
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    return _play_block(spec, d, make_agent(specs[0], seed=seeds[0]),
                       make_agent(specs[1], seed=seeds[1]), maps, options, Progress(0, False), 0, None)


def _results(setup: _ArenaSetup, tally: Tally, t0: float) -> dict[str, Any]:
    """The results dict of :func:`run_arena` from the tally (``t0``: ``time.perf_counter()`` when play began)."""
    n_deals = len(setup.decks)
    elapsed = max(tally.seconds, 1e-9)
    table = agent_table(setup.labels, setup.seed, tally)
    pairs = head_to_head(setup.labels, setup.seed, tally)
    return {
        "variant": setup.variant, "options": setup.options, "agents": setup.labels, "deals": n_deals,
        "games": tally.games, "games_per_deal_per_pair": len(setup.maps), "seed": setup.seed,
        "seconds": elapsed, "deals_per_s": n_deals * len(tally.pair_diff) / elapsed,
        "games_per_s": tally.games / elapsed, "seconds_with_statistics": time.perf_counter() - t0,
        "table": table, "head_to_head": pairs,
    }


def _seeds_and_key(spec: VariantSpec, options: dict[str, Any], specs: tuple[str, str], prints: tuple[str, str],
                   seed: int, lo: int, d: NDArray[np.integer[Any]],
                   maps: NDArray[np.int8]) -> tuple[tuple[int, int], dict[str, Any]]:
    """The block of agents ``specs`` on the deals d (int[k, C], the first one deal ``lo``): its agents' seeds and
    its key in a blocks file (:mod:`tarocchi_rl.arena.blocks`)."""
    seeds = (block_seed(seed, specs[0], lo), block_seed(seed, specs[1], lo))
    return seeds, block_key(spec.name, options, specs, prints, seeds, len(maps), lo, d)


def _recorded_or_played(store: BlockFile, spec: VariantSpec, options: dict[str, Any], specs: tuple[str, str],
                        prints: tuple[str, str], seed: int, lo: int, d: NDArray[np.integer[Any]],
                        maps: NDArray[np.int8], make_agent: Callable[..., AgentLike], bar: "Progress",
                        base: int) -> tuple[Block, bool]:
    """The block of agents ``specs`` on the deals d (int[k, C], the first one deal ``lo`` of the set): read from
    the store when recorded there (True), else played by agents built afresh from the block's seeds and
    recorded (False)."""
    seeds, key = _seeds_and_key(spec, options, specs, prints, seed, lo, d, maps)
    rec = store.get(key)
    if rec is None:
        block = _play_block(spec, d, make_agent(specs[0], seed=seeds[0]), make_agent(specs[1], seed=seeds[1]),
                            maps, options, bar, base, None)
        store.add(key, *block)
        return block, False
    if len(rec["scores"][0]) != len(d):
        raise ValueError(f"blocks file {store.path}: the block of {specs} at deal {lo} has "
                         f"{len(rec['scores'][0])} scores for {len(d)} deals")
    return (np.array(rec["scores"], float), rec["declarer"], rec["bids"], rec["games"], rec["seconds"]), True


def _play_block(spec: VariantSpec, d: NDArray[np.integer[Any]], agent_a: AgentLike, agent_b: AgentLike,
                maps: NDArray[np.int8], options: dict[str, Any], bar: "Progress", base: int,
                records: list[dict[str, Any]] | None) -> Block:
    """One block: agents A and B on the deals d (int[k, C]) in every seating of ``maps`` (0 = A, 1 = B); the
    games' records are appended to ``records`` when given."""
    t0 = time.perf_counter()
    k, per_pair = len(d), len(maps)
    game_decks = np.repeat(d, per_pair, axis=0)
    seat_agents = np.tile(maps.astype(np.int64), (k, 1))

    def on_progress(done: int, total: int) -> None:
        bar.update(base + done)

    payoffs, meta, recs = play_games(spec.name, game_decks, seat_agents, [agent_a, agent_b], options,
                                     record=records is not None, progress=on_progress)
    if records is not None and recs is not None:
        records += recs
    scores = np.zeros((2, k))
    block_decl: list[dict[str, Any]] = [{}, {}]
    block_bids: list[dict[str, int]] = [{}, {}]
    for who in (0, 1):
        mine = seat_agents == who
        per_game = (payoffs * mine).sum(axis=1) / np.maximum(mine.sum(axis=1), 1)
        scores[who] = per_game.reshape(k, per_pair).mean(axis=1)
        declarer_stats(block_decl[who], meta, seat_agents, who, spec)
        bid_stats(block_bids[who], meta, seat_agents, who, spec)
    return scores, block_decl, block_bids, len(game_decks), time.perf_counter() - t0
