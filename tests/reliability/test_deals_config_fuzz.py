"""Deals files and training configs: whatever the input, a result or the documented ValueError (ConfigError
for configs), naming the file and line or the key, quickly, writing nothing."""

import json
import math
import os
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tarocchi_rl.arena import read_deals_file, run_arena, write_deals_file
from tarocchi_rl.rl.config import ConfigError, TrainConfig, load_config
from tests.support.reliability import JSON, in_empty_dir

_VALID: list[str] = []


def _valid_lines() -> list[str]:
    """Two lines of a deals file written by write_deals_file (mineo)."""
    if not _VALID:
        with tempfile.TemporaryDirectory() as d:
            write_deals_file(os.path.join(d, "d.jsonl"), "mineo", 2, 0)
            with open(os.path.join(d, "d.jsonl")) as f:
                _VALID.extend(f.read().splitlines())
    return _VALID


def _read(content: bytes):
    with open("d.jsonl", "wb") as f:
        f.write(content)
    try:
        decks = read_deals_file("d.jsonl", "mineo")
    except ValueError as e:
        assert str(e).startswith("d.jsonl") or "d.jsonl" in str(e)  # the message names the file
        decks = None
    finally:
        os.remove("d.jsonl")
    return decks


@given(st.binary(max_size=400) | st.text(max_size=400).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_a_deals_file_of_any_content(content):
    with in_empty_dir():
        _read(content)


@given(st.lists(JSON, min_size=1, max_size=3))
def test_a_deals_file_of_json_lines(values):
    with in_empty_dir():
        _read("\n".join(json.dumps(v) for v in values).encode())


@given(st.data())
def test_a_deals_file_with_one_damaged_deal(data):
    line = json.loads(_valid_lines()[0])
    where = data.draw(st.sampled_from(["variant", "deal", "hands", "stock", "card", "options"]))
    value = data.draw(JSON)
    if where in ("variant", "deal", "options"):
        line[where] = value
    elif where in ("hands", "stock"):
        line["deal"][where] = value
    else:
        seat = data.draw(st.integers(0, 3))
        line["deal"]["hands"][seat][data.draw(st.integers(0, 14))] = value
    with in_empty_dir():
        decks = _read((_valid_lines()[1] + "\n" + json.dumps(line) + "\n").encode())
    if decks is not None:
        assert decks.shape == (2, 63)


def test_the_observed_deals_file_bugs(tmp_path):
    (tmp_path / "list.jsonl").write_text(_valid_lines()[0] + "\n[1,2,3]\n")
    with pytest.raises(ValueError, match=r"list\.jsonl:2: a deal must be a JSON object"):
        read_deals_file(tmp_path / "list.jsonl", "mineo")
    with pytest.raises(ValueError, match=r"cannot read deals file .*missing\.jsonl: No such file"):
        read_deals_file(tmp_path / "missing.jsonl", "mineo")
    with pytest.raises(ValueError, match="is a directory"):
        read_deals_file(tmp_path, "mineo")
    with pytest.raises(ValueError, match="is a directory"):
        write_deals_file(tmp_path, "mineo", 2, 0)
    with pytest.raises(ValueError, match="cannot write deals file"):
        write_deals_file(tmp_path / "no" / "such" / "dir.jsonl", "mineo", 2, 0)


def test_the_arena_checks_out_dir_before_any_game(tmp_path):
    f = tmp_path / "results"
    f.write_text("keep me")
    played = []

    def make_agent(spec, seed=0):
        played.append(spec)
        raise AssertionError("no agent may be built before out_dir is checked")

    with pytest.raises(ValueError, match="exists and is not a directory"):
        run_arena("mineo", ["random", "heuristic"], deals=2, out_dir=f, progress=False, make_agent=make_agent)
    with pytest.raises(ValueError, match="is not a directory"):
        run_arena("mineo", ["random", "heuristic"], deals=2, out_dir=f / "sub", progress=False,
                  make_agent=make_agent)
    assert not played and f.read_text() == "keep me"


# -- configs ----------------------------------------------------------------------------------------------------
KEYS = sorted({f.name for f in TrainConfig.__dataclass_fields__.values()}
              | {"ppo.lr", "ppo.epochs", "ppo.clip", "network.hidden", "network.activation", "league.pool_size",
                 "eval.opponents", "imitation.lr", "options.early_solo", "options.accuso_points", "options.x",
                 "reward_scale", "ppo", "a.b.c"})
YAML_VALUES = st.sampled_from([".inf", "-.inf", ".nan", "inf", "nan", "1e400", "1e-400", "-1", "0", "1e20",
                               "99999999999999999999999", "[1,", "{a: 1", "[]", "{}", "true", "no", "null", "~",
                               "2024-13-45", "!!python/object:os.system", "&a [*a]", "'", '"', "1_000", "0x10",
                               "[1, [2, [3]]]", "- a\n- b", "a: b: c"])


SET_STRINGS = (st.tuples(st.sampled_from(KEYS), YAML_VALUES | st.text(max_size=30)).map(lambda kv: "=".join(kv))
               | st.text(max_size=40))


@given(st.lists(SET_STRINGS, max_size=4))
def test_config_from_any_set_strings(overrides):
    with in_empty_dir():
        try:
            cfg = load_config(None, overrides)
        except ConfigError:
            return
        assert isinstance(cfg, TrainConfig)
        _finite_and_bounded(cfg)


@given(st.text(max_size=300) | JSON.map(json.dumps))
def test_config_file_of_any_content(text):
    with in_empty_dir():
        with open("c.yaml", "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
        try:
            cfg = load_config("c.yaml")
        except ConfigError:
            cfg = None
        os.remove("c.yaml")
        if cfg is not None:
            _finite_and_bounded(cfg)


def _finite_and_bounded(cfg):
    d = cfg.to_dict()
    stack = [d]
    while stack:
        node = stack.pop()
        for v in (node.values() if isinstance(node, dict) else node):
            if isinstance(v, (dict, list)):
                stack.append(v)
            elif isinstance(v, float):
                assert math.isfinite(v)
            elif isinstance(v, int) and not isinstance(v, bool):
                assert abs(v) < 2**63


def test_the_observed_config_bugs(tmp_path):
    with pytest.raises(ConfigError, match=r"network\.hidden: not a valid YAML value"):
        load_config(None, ["network.hidden=[1,"])
    with pytest.raises(ConfigError, match="cannot read config file .*Is a directory"):
        load_config(tmp_path)
    for value in (".inf", "inf", "-.inf", ".nan", "nan", "1e400"):
        with pytest.raises(ConfigError, match="ppo.lr: must be a finite number"):
            load_config(None, [f"ppo.lr={value}"])
    (tmp_path / "c.yaml").write_text("ppo: {lr: .inf}\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: ppo\.lr: must be a finite number"):
        load_config(tmp_path / "c.yaml")
    for key in ("max_minutes", "payoff_scale", "league.heuristic_share", "ppo.gamma", "imitation.value_coef"):
        with pytest.raises(ConfigError, match=f"{key}: must be a finite number"):
            load_config(None, [f"{key}=.nan"])
    assert load_config(None, ["options.early_solo=false"]).options == {"early_solo": False}
    cfg = load_config(None, ["variant=piedmont4", "options.accuso=true", "options.accuso_points=3"])
    assert cfg.options == {"accuso": True, "accuso_points": 3}
    with pytest.raises(ConfigError, match=r"options: option 'accuso_points'.*must be in \[0, 10000\]"):
        load_config(None, ["variant=piedmont4", f"options.accuso_points={2**31}"])
    with pytest.raises(ConfigError, match=r"seed: must be in \[0, 2\^63 - 1\]"):
        load_config(None, ["seed=-1"])
    with pytest.raises(ConfigError, match="num_envs: must be <= "):
        load_config(None, ["num_envs=1e12"])
    assert load_config(None, ["total_samples=1e6"]).total_samples == 1_000_000
