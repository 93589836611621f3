"""The duplicate arena: agents play the same deals with the seats rotated, so deal luck cancels.

Format. For each pair of agents (A, B) and each deal, the deal is played with every seating of
:func:`seatings`: A alone in seat s against N-1 copies of B, for every s, and B alone against copies of A
(2N games); with 4 players also every 2+2 split (6 more games: the pairwise rotations, which include team
against team in ``piedmont4``). Agents never see other hands; duplicates differ only by who sits where.

Scores. In each game an agent's payoff is the mean payoff of the seats it holds. Its score on a deal is the
mean over that deal's games (payoffs in the game's own units: Mineo jochi, Piedmontese thirds, French
marks). Reported per agent: the mean score per deal with a 95% bootstrap confidence interval over deals,
the win rate (share of deals with a positive score, ties count half), declarer statistics per contract (how
often the agent's seats said each auction word, took each contract, and how often the declarer's side won),
and a rating table
(Bradley-Terry on the pairwise deal wins, shown as Elo-scale points, 400 * log10 odds, first agent = 0). Per
pair (``head_to_head``): A's score minus B's, mean per deal with its 95% bootstrap CI (an agent's mean above is
averaged over all its pairings, so it can rank an agent below one it beats head to head).

Deals come from a seed or from a frozen deals file (``tarocchi-rl deals``, JSON lines; see README) so runs
are comparable. ``out_dir`` gets ``results.json``, ``games.jsonl`` (every game as ``tarocchi-record/1``,
replayable with ``tarocchi-rl replay``) and ``ratings.png``.
"""

import gzip
import io
import json
import os
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import IO, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import bounded
from .arena_blocks import BlockFile, block_key, block_seed
from .batch import BatchEnv
from .bounded import shown
from .core.state import CONTRACT, DECLARER, PAYOFF, PHASE
from .game import make
from .policies import AgentLike, agent_label, make_baseline
from .variants import VariantSpec, get_variant

#: deals of one arena: its bootstrap holds int64[2000, deals] resampled counts (1.6 GB at the bound)
MAX_DEALS = 100_000
MAX_WORKERS = 64  # processes of a resumable arena playing its blocks side by side
MAX_DEAL_LINE = 1 << 14  # bytes of one line of a deals file (a deal with its options is about 600 bytes)
MAX_DEALS_FILE_BYTES = 1 << 27  # bytes of a deals file, gunzipped: MAX_DEALS deals twice over
MAX_DEALS_FILE_LINES = 2 * MAX_DEALS  # lines of a deals file, blank ones included
GZIP_WBITS = 16 + zlib.MAX_WBITS  # zlib's code for the gzip format


def seatings(n_players: int) -> NDArray[np.int8]:
    """Seat maps for a pair (A=0, B=1): int8[G, N], who sits where in each duplicate game.

    Each agent alone against copies of the other in every seat (2N maps); with 4 players also every 2+2
    split (6 maps: the pairwise rotations, which include the fixed partnerships 0+2 / 1+3 of piedmont4).
    """
    maps = []
    for s in range(n_players):
        for alone, rest in ((0, 1), (1, 0)):
            m = [rest] * n_players
            m[s] = alone
            maps.append(m)
    if n_players == 4:
        for pair in combinations(range(4), 2):
            maps.append([0 if k in pair else 1 for k in range(4)])
    return np.array(maps, np.int8)


def random_decks(variant: str, n: int, seed: int, **options: Any) -> NDArray[np.int16]:
    """n deals (int16[n, C] dense card ids in deal order) from the core's shuffle."""
    env = BatchEnv(variant, n, seed=seed, **options)
    return env.state.deck[:, : env.spec.deck.n_cards].copy()


def _open_text(path: str | os.PathLike[str], mode: str) -> IO[str]:
    """A deals file as text: gzip-compressed when its name ends in ``.gz`` (the committed benchmark sets)."""
    if os.fspath(path).endswith(".gz"):
        raw = gzip.GzipFile(path, mode + "b", mtime=0)  # mtime 0: the same deals give the same bytes
        return io.TextIOWrapper(raw, encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def write_deals_file(path: str | os.PathLike[str], variant: str, n: int, seed: int, **options: Any) -> None:
    """A frozen evaluation set: one JSON object per line, {"variant", "options", "deal": {hands, stock}}
    (gzip-compressed when ``path`` ends in ``.gz``).

    A path that cannot be written (a directory, a missing parent, no permission) is a ValueError naming it,
    raised before any deal is made."""
    spec = get_variant(variant)
    opts = spec.resolve_options(options)
    names = spec.deck.names
    if os.path.isdir(path):
        raise ValueError(f"deals file {os.fspath(path)!s}: is a directory")
    try:
        f = _open_text(path, "w")
    except OSError as e:
        raise ValueError(f"cannot write deals file {os.fspath(path)!s}: {e.strerror or e}") from None
    with f:
        for deck in random_decks(variant, n, seed, **opts):
            hands: list[list[str]] = []
            k = 0
            for size in spec.hand_sizes:
                hands.append([names[c] for c in deck[k : k + size]])
                k += size
            stock = [names[c] for c in deck[k : k + spec.stock_size]]
            f.write(json.dumps({"variant": variant, "options": opts, "deal": {"hands": hands, "stock": stock}}) + "\n")




def read_deals_file(path: str | os.PathLike[str], variant: str) -> NDArray[np.int16]:
    """Decks (int16[n, C]) from a deals file; every line is checked (variant, sizes, cards;
    the options a line records are not needed to deal and are not read).

    Anything wrong is a ValueError naming the file (and the line): a missing or unreadable file, a directory,
    text that is not UTF-8, a line that is not a JSON object of the format :func:`write_deals_file` writes, a
    deal of another variant, a wrong hand size or an unknown or repeated card, no deal at all. The file is read
    line by line within bounds: :data:`MAX_DEALS_FILE_BYTES` (gunzipped), :data:`MAX_DEALS_FILE_LINES` lines of
    at most :data:`MAX_DEAL_LINE` bytes, :data:`MAX_DEALS` deals, and a stream (a pipe, a FIFO) that delivers within
    :data:`tarocchi_rl.bounded.READ_SECONDS`."""
    game = make(variant)
    where = os.fspath(path)
    if os.path.isdir(path):
        raise ValueError(f"deals file {where}: is a directory")
    decks: list[NDArray[np.int16]] = []
    try:
        for k, line in enumerate(_deal_lines(path, where), 1):
            if k > MAX_DEALS_FILE_LINES:
                raise ValueError(f"deals file {where}: more than {MAX_DEALS_FILE_LINES:,} lines")
            if not line.strip():
                continue
            if len(decks) == MAX_DEALS:
                raise ValueError(f"deals file {where}: more than {MAX_DEALS:,} deals")
            decks.append(_read_deal_line(game, variant, line, f"{where}:{k}"))
    except bounded.BoundedInputError as e:
        raise ValueError(str(e)) from None
    if not decks:
        raise ValueError(f"{where}: no deals")
    return np.array(decks)


def _deal_lines(path: str | os.PathLike[str], where: str) -> Iterator[bytes]:
    """The lines of a deals file, gunzipped when its name ends in ``.gz``, within :data:`MAX_DEALS_FILE_BYTES`
    (a line longer than :data:`MAX_DEAL_LINE` comes cut, for :func:`_read_deal_line` to refuse)."""
    chunks = bounded.iter_chunks(path, MAX_DEALS_FILE_BYTES, what=f"deals file {where}")
    if where.endswith(".gz"):
        chunks = _gunzip(chunks, MAX_DEALS_FILE_BYTES, f"deals file {where}")
    return bounded.iter_lines(chunks, MAX_DEAL_LINE)


def _gunzip(chunks: Iterable[bytes], max_bytes: int, what: str) -> Iterator[bytes]:
    """The bytes of gzip data (one member or several) given in chunks, at most ``max_bytes`` of them, never more
    than :data:`tarocchi_rl.bounded.CHUNK` at a time; a ValueError naming ``what`` when there are more, or the
    data is damaged or cut short."""
    d, size = zlib.decompressobj(GZIP_WBITS), 0
    try:
        for chunk in chunks:
            data = chunk
            while data:
                if d.eof:  # the next member
                    d = zlib.decompressobj(GZIP_WBITS)
                piece = d.decompress(data, bounded.CHUNK)
                data = d.unused_data if d.eof else d.unconsumed_tail
                size += len(piece)
                if size > max_bytes:
                    raise ValueError(f"{what}: more than {max_bytes:,} bytes once gunzipped")
                yield piece
        while not d.eof and (piece := d.decompress(b"", bounded.CHUNK)):  # output zlib still holds
            size += len(piece)
            if size > max_bytes:
                raise ValueError(f"{what}: more than {max_bytes:,} bytes once gunzipped")
            yield piece
    except zlib.error as e:
        raise ValueError(f"{what}: damaged gzip data ({' '.join(str(e).split())})") from None
    if not d.eof:
        raise ValueError(f"{what}: damaged gzip data (cut short)")


def _read_deal_line(game: Any, variant: str, line: bytes, where: str) -> NDArray[np.int16]:
    """One line of a deals file as a deck (ValueError starting with ``FILE:LINE:``)."""
    if len(line) > MAX_DEAL_LINE:
        raise ValueError(f"{where}: longer than {MAX_DEAL_LINE:,} bytes")
    try:
        obj = bounded.loads(line.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ValueError(f"{where}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except bounded.BoundedInputError as e:
        raise ValueError(f"{where}: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: a deal must be a JSON object with variant and deal, got {shown(obj)}")
    if obj.get("variant") != variant:
        raise ValueError(f"{where}: deal of variant {shown(obj.get('variant'))}, expected {variant!r}")
    deal = obj.get("deal")
    if not isinstance(deal, dict) or "hands" not in deal or "stock" not in deal:
        raise ValueError(f"{where}: deal must be an object with 'hands' and 'stock'")
    try:
        state = game.state_from_deal(deal["hands"], deal["stock"])
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    return state._env.state.deck[0, : game.deck.n_cards].copy()


def play_games(
    variant: str,
    decks: NDArray[np.integer[Any]],
    seat_agents: NDArray[np.integer[Any]],
    agents: Sequence[AgentLike],
    options: dict[str, Any] | None = None,
    record: bool = False,
    progress: Callable[[int, int], object] | None = None,
) -> tuple[NDArray[np.int32], NDArray[np.int32], list[dict[str, Any]] | None]:
    """Play every game to the end. decks int[G, C]; seat_agents int[G, N] agent index per seat.

    Returns (payoffs int32[G, N], meta int32[G, ...] final state columns, records or None).
    """
    g = len(decks)
    env = BatchEnv(variant, g, seed=0, **(options or {}))
    env.set_deals(decks)
    rows = np.arange(g)
    need_obs = any(getattr(a, "needs_obs", True) for a in agents)
    need_mask = any(getattr(a, "needs_mask", True) for a in agents)
    trusted = all(getattr(a, "legal_by_construction", False) for a in agents)  # else every action is checked
    if any(getattr(a, "needs_history", False) for a in agents):  # e.g. an external bot: it gets the seat's view
        env.keep_history()
    mask_buf = np.empty((g, env.num_actions), bool)
    actions = np.zeros(g, np.int64)
    history: list[tuple[NDArray[np.int64], NDArray[np.int32]]] = []
    step = 0
    while True:
        cur = env.current_player().astype(np.int64)
        live = cur >= 0
        if not live.any():
            break
        mask = env.legal_mask(out=mask_buf) if need_mask else None
        obs = env.observe() if need_obs else None
        who = np.where(live, seat_agents[rows, np.maximum(cur, 0)], -1)
        actions[:] = -1
        for k, agent in enumerate(agents):
            idx = np.nonzero(who == k)[0]
            if len(idx):
                o = None if obs is None else obs[idx]
                actions[idx] = agent.act(o, None if mask is None else mask[idx], env, idx)
        if record:
            history.append((actions.copy(), env.state.meta[:, PHASE].copy()))
        env.step(actions, check=not trusted)
        step += 1
        if progress is not None:
            progress(int((~live).sum()), g)
    records: list[dict[str, Any]] | None = None
    if record:
        records = _records(env, decks, history)
    return env.returns(), env.state.meta.copy(), records


def check_plays(agent: AgentLike, variant: str, options: dict[str, Any] | None = None) -> None:
    """``agent`` (a throwaway copy) takes the first decision of one deal of ``variant``: an agent that cannot play
    it (a bot trained on another variant, a program that does not answer, ...) raises its error here, before a long
    run starts. The copy is closed afterwards when it can be (a ``cmd:`` program's process)."""
    try:
        env = BatchEnv(variant, 1, seed=0, **(options or {}))
        if getattr(agent, "needs_history", False):
            env.keep_history()
        agent.act(env.observe(), env.legal_mask(), env, np.zeros(1, np.int64))
    finally:
        close = getattr(agent, "close", None)
        if callable(close):
            close()


def _records(env: BatchEnv, decks: NDArray[np.integer[Any]],
             history: list[tuple[NDArray[np.int64], NDArray[np.int32]]]) -> list[dict[str, Any]]:
    spec = env.spec
    names = spec.deck.names
    out = []
    for i in range(len(decks)):
        hands: list[list[str]] = []
        k = 0
        for size in spec.hand_sizes:
            hands.append([names[c] for c in decks[i][k : k + size]])
            k += size
        acts = [spec.rules.action_to_string(a[i], ph[i]) for a, ph in history if a[i] >= 0]
        out.append({
            "format": "tarocchi-record/1", "variant": env.variant, "options": env.options,
            "deal": {"hands": hands, "stock": [names[c] for c in decks[i][k : k + spec.stock_size]]},
            "actions": acts, "result": {"payoffs": [int(x) for x in env.returns()[i]]},
        })
    return out


def bootstrap_ci(x: ArrayLike, rng: np.random.Generator, n_boot: int = 2000,
                 alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of x (float[n]): resampled deal counts drawn multinomially."""
    x = np.asarray(x, float)
    counts = rng.multinomial(len(x), np.full(len(x), 1.0 / len(x)), size=n_boot)
    means = counts @ x / len(x)
    return float(np.quantile(means, alpha / 2)), float(np.quantile(means, 1 - alpha / 2))


def bradley_terry(wins: NDArray[np.float64], iters: int = 200, prior: float = 0.5) -> NDArray[np.float64]:
    """Strengths from a pairwise win matrix (wins[i, j]: deals i beat j; ties as halves), MM algorithm.

    ``prior`` pseudo-wins each way between every pair that met keep a clean sweep finite.
    """
    k = len(wins)
    met = (wins + wins.T) > 0
    wins = wins + prior * met * (1 - np.eye(k))
    p = np.ones(k)
    games = wins + wins.T
    for _ in range(iters):
        for i in range(k):
            denom = sum(games[i, j] / (p[i] + p[j]) for j in range(k) if j != i and games[i, j] > 0)
            num = wins[i].sum()
            p[i] = max(num, 1e-9) / denom if denom > 0 else p[i]
        p /= np.exp(np.mean(np.log(p)))
    return p


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
    ones already recorded are not played again (:mod:`tarocchi_rl.arena_blocks`; spec strings only, every
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
    game_decks = _arena_decks(variant, deals, decks, seed, options)
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


def _arena_decks(variant: str, deals: int | None, decks: NDArray[np.integer[Any]] | None, seed: int,
                 options: dict[str, Any]) -> NDArray[np.integer[Any]]:
    """The arena's deals (int[n, C], 1 <= n <= :data:`MAX_DEALS`): ``decks`` when given, else ``deals`` deals
    dealt from ``seed`` (their number checked by :func:`_check_deal_count` before)."""
    if decks is None:
        assert deals is not None  # checked
        decks = random_decks(variant, int(deals), seed, **options)
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
    (:func:`_write_outputs`)."""
    records: list[dict[str, Any]] | None = [] if out_dir else None

    def play(a: int, b: int, lo: int, d: NDArray[np.integer[Any]], bar: _Progress, base: int) -> tuple[Block, bool]:
        return _play_block(setup.spec, d, agents[a], agents[b], setup.maps, setup.options, bar, base, records), False

    t0 = time.perf_counter()
    results = _results(setup, _play_pairs(setup, play), t0)
    if out_dir:
        _write_outputs(out_dir, results, records or [])
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

    def play(a: int, b: int, lo: int, d: NDArray[np.integer[Any]], bar: _Progress, base: int) -> tuple[Block, bool]:
        block, recorded = _recorded_or_played(store, setup.spec, setup.options, (specs[a], specs[b]),
                                              (prints[a], prints[b]), setup.seed, lo, d, setup.maps, make_agent,
                                              bar, base)
        return block, recorded and (a, b, lo) not in played_now

    tally = _play_pairs(setup, play)
    results = _results(setup, tally, t0)
    results["blocks_reused"] = tally.reused
    return results


Block = tuple[NDArray[np.float64], list[dict[str, Any]], list[dict[str, int]], int, float]
"""A block's result: (scores float[2, k]: A's and B's score per deal, declarer stats [A, B], bid stats [A, B],
games, seconds)."""

BlockSource = Callable[[int, int, int, NDArray[np.integer[Any]], "_Progress", int], tuple[Block, bool]]
"""How a mode gets a block: (agent a, agent b, its first deal's index, its deals int[k, C], the progress bar, the
games played before it) -> (the block, whether it was read from a blocks file instead of played)."""


@dataclass
class _Tally:
    """The blocks of every pair added up, for K agents on n deals."""

    score: NDArray[np.float64]  # float[K, n]: an agent's score per deal, summed over its pairings
    count: NDArray[np.float64]  # float[K]: the agent's pairings
    wins: NDArray[np.float64]  # float[K, K]: deals on which i beat j, ties counting half
    decl: list[dict[str, dict[str, int]]]  # per agent: declarer statistics per contract
    bids: list[dict[str, int]]  # per agent: auction words said
    pair_diff: dict[tuple[int, int], NDArray[np.float64]] = field(default_factory=dict)  # float[n]: A minus B
    games: int = 0
    seconds: float = 0.0  # playing the games (dealing, agents, core steps), recorded blocks included
    reused: int = 0  # blocks read from a blocks file

    @classmethod
    def empty(cls, n_agents: int, n_deals: int) -> "_Tally":
        """Nothing counted yet."""
        return cls(np.zeros((n_agents, n_deals)), np.zeros(n_agents), np.zeros((n_agents, n_agents)),
                   [{} for _ in range(n_agents)], [{} for _ in range(n_agents)])

    def add_block(self, a: int, b: int, block: Block, recorded: bool) -> None:
        """Count a block's statistics, games and time for agents a and b (its scores go to :meth:`add_pair`)."""
        _, block_decl, block_bids, games, seconds = block
        for who, col in ((a, 0), (b, 1)):
            _merge_counts(self.decl[who], block_decl[col])
            _merge_counts(self.bids[who], block_bids[col])
        self.games += games
        self.seconds += seconds
        self.reused += recorded

    def add_pair(self, a: int, b: int, pair_score: NDArray[np.float64]) -> None:
        """Count the scores (float[2, n]: A's and B's per deal) of the pair (a, b), all its blocks played."""
        self.score[a] += pair_score[0]
        self.score[b] += pair_score[1]
        self.count[a] += 1
        self.count[b] += 1
        diff = self.pair_diff[a, b] = pair_score[0] - pair_score[1]
        self.wins[a, b] += (diff > 0).sum() + 0.5 * (diff == 0).sum()
        self.wins[b, a] += (diff < 0).sum() + 0.5 * (diff == 0).sum()


def _play_pairs(setup: _ArenaSetup, play: BlockSource) -> _Tally:
    """Every pair of agents (a < b) on every deal, in blocks of deals got from ``play``; returns the tally."""
    n_agents, n_deals, per_pair = len(setup.labels), len(setup.decks), len(setup.maps)
    pairs = list(combinations(range(n_agents), 2))
    tally = _Tally.empty(n_agents, n_deals)
    bar = _Progress(len(pairs) * n_deals * per_pair, enabled=setup.progress)
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
    bar = _Progress(sum(len(m[4]) for m in missing) * len(setup.maps), enabled=setup.progress)
    done_games, played = 0, set()
    with ProcessPoolExecutor(min(workers, len(missing)), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_block_task, setup.variant, setup.options, pair, seeds, d, setup.maps, make_agent,
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


def _block_task(variant: str, options: dict[str, Any], specs: tuple[str, str], seeds: tuple[int, int],
                d: NDArray[np.integer[Any]], maps: NDArray[np.int8], make_agent: Callable[..., AgentLike],
                threads: int) -> Block:
    """One block in a worker process of :func:`_play_missing_blocks`."""
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    return _play_block(get_variant(variant), d, make_agent(specs[0], seed=seeds[0]),
                       make_agent(specs[1], seed=seeds[1]), maps, options, _Progress(0, False), 0, None)


def _results(setup: _ArenaSetup, tally: _Tally, t0: float) -> dict[str, Any]:
    """The results dict of :func:`run_arena` from the tally (``t0``: ``time.perf_counter()`` when play began)."""
    n_deals = len(setup.decks)
    elapsed = max(tally.seconds, 1e-9)
    table = _agent_table(setup, tally)
    head_to_head = _head_to_head(setup, tally)
    return {
        "variant": setup.variant, "options": setup.options, "agents": setup.labels, "deals": n_deals,
        "games": tally.games, "games_per_deal_per_pair": len(setup.maps), "seed": setup.seed,
        "seconds": elapsed, "deals_per_s": n_deals * len(tally.pair_diff) / elapsed,
        "games_per_s": tally.games / elapsed, "seconds_with_statistics": time.perf_counter() - t0,
        "table": table, "head_to_head": head_to_head,
    }


def _agent_table(setup: _ArenaSetup, tally: _Tally) -> list[dict[str, Any]]:
    """One row per agent: mean score per deal (averaged over its pairings) with its bootstrap CI, win rate,
    Bradley-Terry rating (Elo scale, first agent 0), declarer and bid statistics."""
    rng = np.random.default_rng(setup.seed)
    score = tally.score / tally.count[:, None]
    strength = bradley_terry(tally.wins)
    elo = 400 * np.log10(strength / strength[0])
    table = []
    for k, label in enumerate(setup.labels):
        lo_ci, hi_ci = bootstrap_ci(score[k], rng)
        played = tally.wins[k].sum() + tally.wins[:, k].sum()
        table.append({
            "agent": label, "mean_payoff_per_deal": float(score[k].mean()), "ci95": [lo_ci, hi_ci],
            "win_rate": float(tally.wins[k].sum() / played) if played else None, "rating": float(elo[k]),
            "declarer": tally.decl[k], "bids": tally.bids[k],
        })
    return table


def _head_to_head(setup: _ArenaSetup, tally: _Tally) -> list[dict[str, Any]]:
    """Per pair: A's score minus B's, mean per deal with its bootstrap CI."""
    pair_rng = np.random.default_rng([setup.seed, 2])  # apart from the agents' CIs (which stay those of earlier runs)
    rows = []
    for (a, b), diff in tally.pair_diff.items():
        lo_ci, hi_ci = bootstrap_ci(diff, pair_rng)
        rows.append({"agents": [setup.labels[a], setup.labels[b]], "mean_difference_per_deal": float(diff.mean()),
                     "ci95": [lo_ci, hi_ci]})
    return rows


def head_to_head_of(result: dict[str, Any], a: str, b: str) -> tuple[float, float, float] | None:
    """Agent a's score minus agent b's in an arena result (its ``head_to_head``, either order): (mean per deal,
    CI low, CI high); None when the result has no such pair."""
    for p in result.get("head_to_head") or []:
        d, (lo, hi) = p["mean_difference_per_deal"], p["ci95"]
        if p["agents"] == [a, b]:
            return d, lo, hi
        if p["agents"] == [b, a]:
            return -d, -hi, -lo
    return None


def _seeds_and_key(spec: VariantSpec, options: dict[str, Any], specs: tuple[str, str], prints: tuple[str, str],
                   seed: int, lo: int, d: NDArray[np.integer[Any]],
                   maps: NDArray[np.int8]) -> tuple[tuple[int, int], dict[str, Any]]:
    """The block of agents ``specs`` on the deals d (int[k, C], the first one deal ``lo``): its agents' seeds and
    its key in a blocks file (:mod:`tarocchi_rl.arena_blocks`)."""
    seeds = (block_seed(seed, specs[0], lo), block_seed(seed, specs[1], lo))
    return seeds, block_key(spec.name, options, specs, prints, seeds, len(maps), lo, d)


def _recorded_or_played(store: BlockFile, spec: VariantSpec, options: dict[str, Any], specs: tuple[str, str],
                        prints: tuple[str, str], seed: int, lo: int, d: NDArray[np.integer[Any]],
                        maps: NDArray[np.int8], make_agent: Callable[..., AgentLike], bar: "_Progress",
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
                maps: NDArray[np.int8], options: dict[str, Any], bar: "_Progress", base: int,
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
        _declarer_stats(block_decl[who], meta, seat_agents, who, spec)
        _bid_stats(block_bids[who], meta, seat_agents, who, spec)
    return scores, block_decl, block_bids, len(game_decks), time.perf_counter() - t0


def _merge_counts(into: dict[str, Any], more: dict[str, Any]) -> None:
    """Add the counts of ``more`` to ``into`` (nested dicts of counts: bid words, contract statistics)."""
    for key, v in more.items():
        if isinstance(v, dict):
            _merge_counts(into.setdefault(key, {}), v)
        else:
            into[key] = into.get(key, 0) + v


def check_out_dir(out_dir: str | os.PathLike[str]) -> None:
    """``out_dir`` can take the arena's outputs: an existing directory, or a new one whose nearest existing
    ancestor is a writable directory (a ValueError naming the path otherwise). Creates nothing."""
    where = os.fspath(out_dir)
    if os.path.exists(out_dir):
        if not os.path.isdir(out_dir):
            raise ValueError(f"output directory {where}: exists and is not a directory")
        if not os.access(out_dir, os.W_OK):
            raise ValueError(f"output directory {where}: the directory is not writable")
        return
    parent = os.path.dirname(os.path.abspath(out_dir))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ValueError(f"output directory {where}: {parent} is not a directory")
    if not os.access(parent, os.W_OK):
        raise ValueError(f"output directory {where}: cannot create it in {parent} (not writable)")


def _bid_stats(stats: dict[str, int], meta: NDArray[np.int32], seat_agents: NDArray[np.integer[Any]], who: int,
               spec: VariantSpec) -> None:
    """How often the agent's seats said each word of each bidding round (the family's BID_ROUNDS: Mineo early
    round and auction, French bids), the last round first."""
    words = spec.rules.BID_WORDS
    n = spec.n_players
    mine = seat_agents == who
    for col, _, prefix in reversed(spec.rules.BID_ROUNDS):
        said = meta[:, col : col + n]
        for w, name in enumerate(words):
            k = int(((said == w) & mine).sum())
            if k:
                stats[prefix + name] = stats.get(prefix + name, 0) + k


def _declarer_stats(stats: dict[str, dict[str, int]], meta: NDArray[np.int32],
                    seat_agents: NDArray[np.integer[Any]], who: int, spec: VariantSpec) -> None:
    """Per contract: how often the agent's seat declared, and how often the declarer's side won."""
    names = spec.rules.CONTRACT_NAMES
    if names is None:
        return
    decl = meta[:, DECLARER]
    has = decl >= 0
    rows = np.nonzero(has)[0]
    mine = seat_agents[rows, decl[rows]] == who
    for i in rows[mine]:
        c = names[meta[i, CONTRACT]]
        won = meta[i, PAYOFF + decl[i]] > 0
        e = stats.setdefault(c, {"declared": 0, "made": 0})
        e["declared"] += 1
        e["made"] += int(won)


def _write_outputs(out_dir: str | os.PathLike[str], results: dict[str, Any], records: list[dict[str, Any]]) -> None:
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "results.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(out_dir, "games.jsonl"), "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = results["table"]
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
    names = [r["agent"] for r in t]
    means = [r["mean_payoff_per_deal"] for r in t]
    err = np.array([[m - r["ci95"][0], r["ci95"][1] - m] for m, r in zip(means, t, strict=True)]).T
    ax[0].bar(names, means, yerr=err, capsize=6, color="#4c72b0")
    ax[0].axhline(0, color="black", lw=0.8)
    ax[0].set_title(f"{results['variant']}: mean payoff per deal (95% CI)")
    ax[1].bar(names, [r["rating"] for r in t], color="#dd8452")
    ax[1].set_title("rating (Bradley-Terry, Elo scale)")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "ratings.png"), dpi=100)
    plt.close(fig)


class _Progress:
    def __init__(self, total: int, enabled: bool) -> None:
        self.bar: Any = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="game", file=sys.stderr, leave=False)
        self.last = 0

    def update(self, done: int) -> None:
        if self.bar is not None and done > self.last:
            self.bar.update(done - self.last)
            self.last = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def format_results(r: dict[str, Any]) -> str:
    """An arena result as text (``tarocchi-rl eval``): each agent's mean per deal, win rate and rating, its bids and
    contracts, then every pair head to head (:func:`head_to_head_lines`)."""
    lines = [
        f"{r['variant']}: {r['deals']} duplicate deals x {r['games_per_deal_per_pair']} seatings per pair "
        f"({r['games']} games in {r['seconds']:.2f} s: {r['deals_per_s']:,.0f} duplicate deals/s, "
        f"{r['games_per_s']:,.0f} games/s)",
        f"{'agent':>12} {'mean payoff/deal':>17} {'95% CI':>22} {'win rate':>9} {'rating':>7}",
    ]
    for t in r["table"]:
        lo, hi = t["ci95"]
        wr = f"{100 * t['win_rate']:.1f}%" if t["win_rate"] is not None else "-"
        lines.append(f"{t['agent']:>12} {t['mean_payoff_per_deal']:>17.3f} {f'[{lo:.3f}, {hi:.3f}]':>22} "
                     f"{wr:>9} {t['rating']:>7.0f}")
    for t in r["table"]:
        if t.get("bids"):
            lines.append(f"  {t['agent']} bids: " + ", ".join(f"{w} {c}" for w, c in t["bids"].items()))
        if t["declarer"]:
            parts = [f"{c}: {v['declared']} ({100 * v['made'] / v['declared']:.0f}% won)"
                     for c, v in sorted(t["declarer"].items())]
            lines.append(f"  {t['agent']} as declarer: " + ", ".join(parts))
    return "\n".join(lines + head_to_head_lines(r))


def head_to_head_lines(r: dict[str, Any]) -> list[str]:
    """Every pair of an arena result head to head (the first agent's score minus the second's, mean per deal, with
    its 95% CI: the figure the README and the leaderboard quote), as lines of text; none for a result without it."""
    pairs = r.get("head_to_head") or []
    lines = ["head to head: the first agent's score minus the second's, mean per deal [95% CI]"] if pairs else []
    for p in pairs:
        (a, b), (lo, hi) = p["agents"], p["ci95"]
        lines.append(f"  {a} - {b}: {p['mean_difference_per_deal']:+.3f} [{lo:+.3f}, {hi:+.3f}]")
    return lines
