"""The contract every registered variant keeps, in the spirit of Pgx's api_test: run over
``tarocchi_rl.variants.VARIANTS``, each with its options at their defaults and, where it has options, with one
non-default combination (every option changed). A new variant gets these checks by its registry line alone.

- metadata: the spec's sizes, deck, action vocabulary, observation layout and facts agree with one another and
  with the Game and BatchEnv built from it;
- deal: ``make(v).new_state(seed)`` and ``BatchEnv`` deal every card once, reproducibly from the seed;
- legal masks: shape (B, n_actions), non-empty for a live game, empty when it is done; observations
  float32[obs_dim], finite, within [0, 1], for every seat at every step of random games played to the end;
- 10,000 random deals on the batched core (``auto_reset``, ``random_actions``): payoffs zero-sum (where the
  family's ZERO_SUM says so) and within
  ``utility_bounds(options)``, decisions per deal at most ``max_game_length(options)``;
- single games: ``outcome()`` has exactly the keys of OUTCOME_FIELDS with their documented types (card points
  numbers summing to the deck total / CARD_POINT_UNITS, bonuses [{name, side, points}], details keys among the
  family's OUTCOME_DETAILS), and ``to_record()`` then ``records.replay`` gives the same returns and outcome.

Run time: a few seconds per variant and options (the 10,000 deals take well under a second each with the JIT).
With NUMBA_DISABLE_JIT=1 the same checks run on fewer deals.
"""

import json
import math
import pathlib
import re

import numpy as np
import pytest
from numba import njit, typeof

import tarocchi_rl
from tarocchi_rl import BatchEnv
from tarocchi_rl.core.tables import P_FAMILY, P_PLAY_HOOK, P_TOTAL_POINTS, PlayRulesTables, RuleTables, has_play_rules
from tarocchi_rl.records import replay
from tarocchi_rl.variants import FAMILIES, OUTCOME_FIELDS, VARIANTS, dispatch, get_variant
from tarocchi_rl.variants.contract import KERNEL_HOOKS, check_family, contract_members, missing_members
from tarocchi_rl.variants.defaults import play_rules_unchanged
from tests.support.engine import JIT_DISABLED

pytestmark = pytest.mark.nojit

N_DEALS = 60 if JIT_DISABLED else 10_000  # random deals on the batched core, per variant and options
N_GAMES = 4 if JIT_DISABLED else 30  # single games played to the end and replayed from their records
BATCH = 8 if JIT_DISABLED else 64  # games stepped to the end with every check at every step

# A non-default value of each string option (bool options are flipped, int options moved by one).
OTHER_STRING_VALUE = {"honour_5": "angelo", "excuse_last_trick": "trick_winner"}


def non_default(variant: str) -> dict:
    out = {}
    for name, (typ, default) in get_variant(variant).options.items():
        if typ is bool:
            out[name] = not default
        elif typ is int:
            out[name] = default + 1
        else:
            assert name in OTHER_STRING_VALUE, f"give string option {name!r} a non-default value above"
            out[name] = OTHER_STRING_VALUE[name]
            assert out[name] != default
    return out


CONFIGS = [(v, {}) for v in VARIANTS] + [(v, non_default(v)) for v in VARIANTS if get_variant(v).options]
IDS = [v + "".join(f"-{k}={x}" for k, x in o.items()) for v, o in CONFIGS]


def test_every_variant_is_covered():
    assert {v for v, _ in CONFIGS} == set(VARIANTS)
    for v in VARIANTS:
        assert sum(cv == v for cv, _ in CONFIGS) == (2 if get_variant(v).options else 1)


# ----------------------------------------------------------------------------------------------------------
# the family contract (variants/contract.py; mypy checks the same members' types on the registry line)


@pytest.mark.parametrize("family", FAMILIES, ids=[f.__name__.rsplit(".", 1)[-1] for f in FAMILIES])
def test_family_keeps_the_contract(family):
    assert check_family(family) == []
    assert FAMILIES[family.FAMILY_ID] is family
    assert set(KERNEL_HOOKS) <= set(contract_members())


@pytest.mark.parametrize("variant", VARIANTS)
def test_variant_belongs_to_a_registered_family(variant):
    spec = get_variant(variant)
    assert spec.rules in FAMILIES
    assert spec.tables(spec.resolve_options({})).params[P_FAMILY] == spec.rules.FAMILY_ID


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_tables_type_says_whether_the_family_has_play_rules(variant):
    """A family with play_rules (params[P_PLAY_HOOK]) gets tables of their own type, so that the kernels compiled
    for the others carry no trace of the hook; the kernels read it as a constant of the type."""
    spec = get_variant(variant)
    tb = spec.tables(spec.resolve_options({}))
    hooked = bool(tb.params[P_PLAY_HOOK])
    assert isinstance(tb, RuleTables) and isinstance(tb, PlayRulesTables) == hooked
    assert has_play_rules(tb) == hooked and bool(njit(lambda t: has_play_rules(t))(tb)) == hooked
    assert hooked == (spec.rules.play_rules is not play_rules_unchanged)


@pytest.mark.parametrize("hook", KERNEL_HOOKS)
def test_every_hook_is_dispatched_to_every_family(hook):
    name, src = dispatch.dispatch_source(hook)
    assert hasattr(dispatch, hook)
    for k in range(len(FAMILIES)):
        assert f"fam == {k}:" in src or k == len(FAMILIES) - 1
        assert f"_family_{k}({', '.join(KERNEL_HOOKS[hook][0])})" in src
    # one more family: one more branch, and a dispatcher of another name (no stale cache entry)
    other, more = dispatch.dispatch_source(hook, (*FAMILIES, FAMILIES[0]))
    assert other != name and f"_family_{len(FAMILIES)}(" in more
    with pytest.raises(ValueError, match="unknown family hook"):
        dispatch.dispatch_source("no_such_hook")


# The shared modules that name no family: a new family needs no change there.
FAMILY_BLIND = ("engine/drivers.py", "engine/observation.py", "arena/deals.py", "arena/games.py", "arena/statistics.py",
                "arena/runner.py", "arena/report.py", "play.py", "web/table.py", "web/score_sheet.py",
                "policies/heuristic.py", "search/determinize.py", "search/inference.py", "search/seat_view.py",
                "core/tables.py", "core/known.py")
FAMILY_NAMED = re.compile(r"\bFAMILY_(?!ID\b)[A-Z]+\b|\b(mineo|piedmont|french)\.[A-Za-z_]"
                          r"|import[^\n]*\b(mineo|piedmont|french)\b"
                          r"|([=!]= *|startswith\()[\"'](mineo|piedmont|french)")


# ... and the adapters beside the package (envs/), from the repository's root
FAMILY_BLIND_ROOT = ("envs/gym.py", "envs/pettingzoo.py", "envs/openspiel.py")


@pytest.mark.parametrize("module", FAMILY_BLIND + FAMILY_BLIND_ROOT)
def test_shared_module_names_no_family(module):
    base = pathlib.Path(__file__).resolve().parents[2] if module in FAMILY_BLIND_ROOT else (
        pathlib.Path(tarocchi_rl.__file__).parent)
    source = (base / module).read_text()
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))
    assert not FAMILY_NAMED.search(code), f"{module} names a family: {FAMILY_NAMED.search(code).group(0)!r}"


def test_missing_members_names_what_a_family_lacks():
    class Half:  # a family module with only its identity
        FAMILY_ID = 0
        start_row = 3

    missing = missing_members(Half)
    assert "FAMILY_ID" not in missing and "settle" in missing and "make_rule_tables" in missing
    assert "start_row (not callable)" in missing


def test_check_family_names_what_a_family_gets_wrong():
    """check_family: a copy of a real family with bad phases and sections is refused, each fault named."""
    from types import SimpleNamespace

    from tarocchi_rl.core.phases import Phase
    from tarocchi_rl.variants import mineo

    bad = SimpleNamespace(**{k: getattr(mineo, k) for k in contract_members()})
    bad.__name__ = "bad"
    bad.PHASES = (Phase(5, "again", "bid"), Phase(20, "far", "bid"), Phase(0, "x", "bid"), Phase(0, "y", "bid"))
    bad.FAMILY_SECTIONS = ("hand",) + tuple(f"s{k}" for k in range(9))
    problems = "\n".join(check_family(bad))
    assert "takes the engine's code 5" in problems and "outside 0 .. 15" in problems
    assert "share a code" in problems and "more than 8" in problems and "'hand' is a shared section" in problems
    assert check_family(mineo) == []
    bad.Tables = RuleTables
    assert "not a RuleTables subclass of its own" in "\n".join(check_family(bad))


def test_each_family_has_a_tables_type_of_its_own_name():
    """Numba tells named-tuple types with the same fields apart by their class name only: two families' Tables of
    one name would share every compiled kernel. The registry refuses it, naming both."""
    from types import SimpleNamespace

    from tarocchi_rl.variants.contract import check_registry

    assert len({f.Tables.__name__ for f in FAMILIES}) == len(FAMILIES) and check_registry(FAMILIES) == []
    twin = SimpleNamespace(__name__="twin", Tables=type(FAMILIES[0].Tables.__name__, (RuleTables,), {}))
    assert check_registry((*FAMILIES, twin)) == [
        f"twin.Tables has the class name {FAMILIES[0].Tables.__name__!r} of {FAMILIES[0].__name__}.Tables"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_kernel_compiled_for_a_family_holds_that_familys_hooks_alone(variant):
    """The dispatch picks the hook from the tables' type when a kernel is compiled: a kernel compiled for one
    variant's tables holds its family's hook and no other family's (and tables of no family are refused)."""
    spec = get_variant(variant)
    tb = spec.resolved_tables({})
    assert dispatch.family_of(type(tb)) is spec.rules
    with pytest.raises(TypeError, match="belong to no family"):
        dispatch.family_of(RuleTables)
    if JIT_DISABLED:
        return
    kernel = njit(lambda st, i, tb: dispatch.settle(st, i, tb))
    st = BatchEnv(spec, 1, seed=1).state
    kernel.compile((typeof(st), typeof(np.int64(0)), typeof(tb)))
    code = "\n".join(kernel.inspect_llvm().values())
    named = {f.__name__.rsplit(".", 1)[-1] for f in FAMILIES if f.__name__.rsplit(".", 1)[-1] in code}
    assert named == {spec.rules.__name__.rsplit(".", 1)[-1]}


# Family concepts are the families' words: their modules, their own phases and observation sections. The shared
# layers below the families' users (core/, engine/) and the web layer above them name none in code (identifiers and
# strings; comments and docstrings may give an example).
SHARED_LAYERS = ("core", "engine", "web")


def family_words() -> set[str]:
    from tarocchi_rl.core.phases import ENGINE_PHASES

    # the engine's phases, the bidding (French tarot's and tarok's), and plain words a family's phase or section
    # is named by but that say nothing of its rules
    shared = {p.name for p in ENGINE_PHASES} | {"bid", "auction", "early", "doubled", "partner"}
    words = {f.__name__.rsplit(".", 1)[-1] for f in FAMILIES}
    for f in FAMILIES:
        words |= {p.name for p in f.PHASES} | set(f.FAMILY_SECTIONS)
    return {w.lower() for w in words - shared}


def code_words(source: str) -> set[str]:
    """The lower-case words of a module's identifiers and non-docstring strings."""
    import ast

    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    words: set[str] = set()
    for node in ast.walk(tree):
        text = ""
        if isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, (ast.alias,)):
            text = node.name + " " + (node.asname or "")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
        words |= {w.lower() for w in re.split(r"[^A-Za-z]+|_", text) if w}
    return words


@pytest.mark.parametrize("layer", SHARED_LAYERS)
def test_the_shared_layers_name_no_family_concept(layer):
    vocabulary = family_words()
    assert {"mineo", "tarok", "poignee", "accuso", "scommessa", "chelem"} <= vocabulary
    root = pathlib.Path(tarocchi_rl.__file__).parent / layer
    named = {}
    for path in sorted(root.rglob("*.py")):
        found = code_words(path.read_text()) & vocabulary
        if found:
            named[str(path.relative_to(root.parent))] = sorted(found)
    assert named == {}, f"family concepts named in code of {layer}/: {named}"


# ----------------------------------------------------------------------------------------------------------
# metadata


@pytest.mark.parametrize("variant", VARIANTS)
def test_metadata(variant):
    spec = get_variant(variant)
    rules = spec.rules
    assert spec.name == variant and get_variant(variant) is spec
    assert isinstance(spec.long_name, str) and spec.long_name
    assert spec.n_players in (3, 4) and len(spec.hand_sizes) == spec.n_players
    deck = spec.deck
    assert len(deck.names) == len(set(deck.names)) == deck.n_cards == sum(spec.hand_sizes) + spec.stock_size
    assert all(deck.card_id(name) == c for c, name in enumerate(deck.names))
    # the action vocabulary: card actions, then the special actions; strings round-trip
    assert spec.special_actions and all(isinstance(a, str) for a in spec.special_actions)
    assert spec.n_actions == 2 * deck.n_cards + len(spec.special_actions) == rules.N_ACTIONS
    for a in range(2 * deck.n_cards):
        assert rules.string_to_action(rules.action_to_string(a, -1)) == a
    for k, name in enumerate(spec.special_actions):
        assert rules.string_to_action(name) == 2 * deck.n_cards + k
    # the observation layout: contiguous sections from 0 to obs_dim
    end = 0
    for off, size, name in spec.obs_rows:
        assert off == end and size > 0 and isinstance(name, str)
        end = off + size
    assert end == spec.obs_dim
    # facts
    assert math.isfinite(spec.payoff_scale) and spec.payoff_scale > 0
    assert isinstance(spec.declarer_role, str) and spec.declarer_role
    assert isinstance(rules.BONUS_UNIT, str) and rules.BONUS_UNIT
    assert isinstance(rules.CARD_POINT_UNITS, int) and rules.CARD_POINT_UNITS >= 1
    assert isinstance(rules.OUTCOME_DETAILS, dict) and all(isinstance(k, str) for k in rules.OUTCOME_DETAILS)
    for options in ({}, non_default(variant)):
        lo, hi = spec.utility_bounds(options)
        assert isinstance(lo, int) and isinstance(hi, int) and lo < 0 < hi
        longest = spec.max_game_length(options)
        assert isinstance(longest, int) and longest >= spec.n_players * spec.hand_sizes[0]
        game = tarocchi_rl.make(variant, **options)
        env = BatchEnv(variant, 2, seed=0, **options)
        assert game.options == env.options == spec.resolve_options(options)
        assert (game.num_players, game.num_actions, game.obs_dim) == (spec.n_players, spec.n_actions, spec.obs_dim)
        assert (env.num_players, env.num_actions, env.obs_dim) == (spec.n_players, spec.n_actions, spec.obs_dim)
        assert game.deck is deck


# ----------------------------------------------------------------------------------------------------------
# deals, masks and observations


def check_deal(deal: dict, spec) -> None:
    assert [len(h) for h in deal["hands"]] == list(spec.hand_sizes) and len(deal["stock"]) == spec.stock_size
    cards = [c for h in deal["hands"] for c in h] + deal["stock"]
    assert sorted(cards) == sorted(spec.deck.names)


@pytest.mark.parametrize("variant, options", CONFIGS, ids=IDS)
def test_deal_is_every_card_once_and_reproducible(variant, options):
    spec = get_variant(variant)
    game = tarocchi_rl.make(variant, **options)
    deals = [game.new_state(seed).deal() for seed in range(5)]
    for d in deals:
        check_deal(d, spec)
    assert game.new_state(3).deal() == deals[3]
    assert len({json.dumps(d) for d in deals}) == len(deals)
    env, again = BatchEnv(variant, 6, seed=11, **options), BatchEnv(variant, 6, seed=11, **options)
    assert (env.state.deck == again.state.deck).all()
    n = spec.deck.n_cards
    for i in range(6):
        assert sorted(env.state.deck[i, :n].tolist()) == list(range(n))
    assert len({tuple(env.state.deck[i, :n]) for i in range(6)}) == 6


def check_observations(env, spec, live) -> None:
    for seat in range(spec.n_players):
        obs = env.observe(np.full(env.batch_size, seat))
        assert obs.shape == (env.batch_size, spec.obs_dim) and obs.dtype == np.float32
        assert np.isfinite(obs).all() and obs.min() >= 0.0 and obs.max() <= 1.0
    obs = env.observe()  # each game seen by its player to act; finished games give zero rows
    assert obs.shape == (env.batch_size, spec.obs_dim) and obs.dtype == np.float32
    assert not obs[~live].any()


@pytest.mark.parametrize("variant, options", CONFIGS, ids=IDS)
def test_masks_and_observations_through_random_games(variant, options):
    spec = get_variant(variant)
    env = BatchEnv(variant, BATCH, seed=5, **options)
    lo, hi = spec.utility_bounds(options)
    steps = 0
    while True:
        live = ~env.done()
        mask = env.legal_mask()
        assert mask.shape == (BATCH, spec.n_actions) and mask.dtype == bool
        assert mask[live].any(axis=1).all() and not mask[~live].any()
        player = env.current_player()
        assert (player[~live] == -1).all() and ((player[live] >= 0) & (player[live] < spec.n_players)).all()
        check_observations(env, spec, live)
        if not live.any():
            break
        actions = env.random_actions()
        assert mask[np.nonzero(live)[0], actions[live]].all() and (actions[~live] == -1).all()
        env.step(actions)
        steps += 1
        assert steps <= spec.max_game_length(options)
    returns = env.returns()
    assert returns.shape == (BATCH, spec.n_players)
    assert (returns.sum(axis=1) == 0).all() or not spec.zero_sum
    assert lo <= returns.min() and returns.max() <= hi
    # a finished game ignores further actions
    payoffs, done = env.step(np.zeros(BATCH, np.int64))
    assert not done.any() and not payoffs.any() and (env.returns() == returns).all()


@pytest.mark.parametrize("variant, options", CONFIGS, ids=IDS)
def test_random_deals_within_bounds_and_longest_game(variant, options):
    """N_DEALS random deals on the batched core: zero-sum payoffs within the utility bounds, and no deal with
    more decisions than max_game_length (decisions counted per game between re-deals)."""
    spec = get_variant(variant)
    lo, hi = spec.utility_bounds(options)
    longest = spec.max_game_length(options)
    batch = min(N_DEALS, 1024)
    env = BatchEnv(variant, batch_size=batch, seed=2024, auto_reset=True, **options)
    decisions = np.zeros(batch, np.int64)
    finished, lengths, low, high = 0, [], 0, 0
    while finished < N_DEALS:
        payoffs, done = env.step(env.random_actions())
        decisions += 1
        assert not env.done().any()  # auto-reset: every game is live
        if done.any():
            p = payoffs[done]
            assert (p.sum(axis=1) == 0).all() or not spec.zero_sum
            low, high = min(low, int(p.min())), max(high, int(p.max()))
            lengths.append(decisions[done].copy())
            finished += int(done.sum())
            decisions[done] = 0
    lengths = np.concatenate(lengths)
    assert lo <= low and high <= hi, f"payoffs in [{low}, {high}], bounds [{lo}, {hi}]"
    assert lengths.min() >= 1 and lengths.max() <= longest, f"{lengths.max()} decisions, longest {longest}"


# ----------------------------------------------------------------------------------------------------------
# the single-game API: outcome schema and records


def is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check_outcome(out: dict, state, spec) -> None:
    assert set(out) == set(OUTCOME_FIELDS)
    n = spec.n_players
    assert out["payoffs"] == state.returns() and len(out["payoffs"]) == n
    assert all(type(x) is int for x in out["payoffs"])
    assert out["contract"] is None or isinstance(out["contract"], str)
    assert out["declarer"] is None or (type(out["declarer"]) is int and 0 <= out["declarer"] < n)
    sides = out["sides"]
    assert isinstance(sides, list) and all(isinstance(s, list) for s in sides)
    units, points = out["card_point_units"], out["card_points"]
    assert isinstance(units, list) and isinstance(points, list) and len(units) == len(points) == len(sides)
    if sides:  # a deal played out (no contract: no sides, no card points, no bonuses)
        assert sorted(s for side in sides for s in side) == list(range(n))
        if out["contract"] is not None:  # side 0 is the declarer's (Piedmontese: no contract, fixed sides)
            assert out["declarer"] in sides[0]
        assert all(type(u) is int for u in units) and all(is_number(p) for p in points)
        unit = spec.rules.CARD_POINT_UNITS
        assert [p * unit for p in points] == pytest.approx(units)
        total = int(state.game.spec.tables(state.game.options).params[P_TOTAL_POINTS])
        assert sum(units) == total and sum(points) == pytest.approx(total / unit)
    else:
        assert out["declarer"] is None and out["bonuses"] == [] and not any(out["payoffs"])
    assert isinstance(out["bonuses"], list)
    for b in out["bonuses"]:
        assert set(b) == {"name", "side", "points"}
        assert isinstance(b["name"], str) and type(b["side"]) is int and 0 <= b["side"] < len(sides)
        assert type(b["points"]) is int
    assert isinstance(out["details"], dict) and set(out["details"]) <= set(spec.rules.OUTCOME_DETAILS)
    assert json.loads(json.dumps(out)) == out


@pytest.mark.parametrize("variant, options", CONFIGS, ids=IDS)
def test_single_games_outcome_schema_and_record_round_trip(variant, options):
    spec = get_variant(variant)
    game = tarocchi_rl.make(variant, **options)
    played = 0
    for seed in range(N_GAMES):
        state = game.new_state(seed)
        check_deal(state.deal(), spec)
        rng = np.random.default_rng(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            assert legal and state.legal_mask().shape == (spec.n_actions,)
            assert 0 <= state.current_player() < spec.n_players
            for a in legal:
                assert state.string_to_action(state.action_to_string(a)) == a
            obs = state.observation()
            assert obs.shape == (spec.obs_dim,) and obs.dtype == np.float32
            assert np.isfinite(obs).all() and obs.min() >= 0.0 and obs.max() <= 1.0
            state.apply(int(rng.choice(legal)))
        assert state.legal_actions() == [] and state.current_player() == -1
        with pytest.raises(ValueError):
            state.apply(0)
        out = state.outcome()
        check_outcome(out, state, spec)
        played += bool(out["sides"])
        rec = json.loads(json.dumps(state.to_record()))
        assert rec["variant"] == variant and rec["options"] == game.options
        again = replay(rec)
        assert again.returns() == state.returns() == rec["result"]["payoffs"]
        assert again.history == state.history
        assert again.outcome() == out
    assert played > 0
