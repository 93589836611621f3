"""The command line: every bad input of issue 14's list is one ``error: ...`` line and exit status 2, before
any work, with nothing written."""

import os

import pytest

from tarocchi_rl.cli import main
from tests.support.reliability import files_under


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """An empty working directory with a few inputs: a file, a directory, a deep record, bad deals files."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("keep")
    (tmp_path / "adir").mkdir()
    (tmp_path / "deep.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    (tmp_path / "listvariant.json").write_text('{"format": "tarocchi-record/1", "variant": [], "deal": {}, '
                                               '"actions": []}')
    (tmp_path / "list.jsonl").write_text("[1,2,3]\n")
    (tmp_path / "model.pt").write_bytes(b"not a run directory")
    return tmp_path


CASES = {
    "deep record": (["replay", "deep.json"], "nested too deeply"),
    "variant []": (["replay", "listvariant.json"], "variant must be a string"),
    "record is a directory": (["replay", "adir"], "Is a directory"),
    "deals line [1,2,3]": (["eval", "--agents", "random,heuristic", "--deals-file", "list.jsonl"],
                           "list.jsonl:1: a deal must be a JSON object"),
    "deals file missing": (["eval", "--agents", "random,heuristic", "--deals-file", "none.jsonl"],
                           "cannot read deals file none.jsonl"),
    "deals file a directory": (["eval", "--agents", "random,heuristic", "--deals-file", "adir"], "is a directory"),
    "eval --out a file": (["eval", "--agents", "random,heuristic", "--deals", "100000", "--out", "afile"],
                          "output directory afile: exists and is not a directory"),
    "deals --out a directory": (["deals", "--out", "adir", "--n", "3"], "is a directory"),
    "ismcts iterations=1e20": (["eval", "--agents", "ismcts:iterations=1e20,random", "--deals", "1"],
                               "iterations must be >= 1 and <= 10000000"),
    "ismcts time=inf": (["eval", "--agents", "ismcts:time=inf,random", "--deals", "1"], "time must be a finite"),
    "ismcts c=nan": (["eval", "--agents", "ismcts:c=nan,random", "--deals", "1"], "c must be a finite"),
    "accuso_points 2^31": (["play", "--variant", "piedmont4", "--option", "accuso_points=2147483648", "--seats",
                            "random,random,random,random"], "accuso_points"),
    "--set hidden=[1,": (["train", "--set", "network.hidden=[1,"], "network.hidden: not a valid YAML value"),
    "--set ppo.lr=.inf": (["train", "--set", "ppo.lr=.inf"], "ppo.lr: must be a finite number"),
    "config a directory": (["train", "--config", "adir"], "cannot read config file adir: Is a directory"),
    "--resume a .pt file": (["train", "--resume", "model.pt"], "--resume model.pt: not a run directory"),
    "--resume missing": (["train", "--resume", "nowhere"], "run directory not found"),
    "train --out a file": (["train", "--out", "afile"], "output directory afile: exists and is not a directory"),
    "play --record a directory": (["play", "--seats", "random,random,random,random", "--record", "adir"],
                                  "--record adir: is a directory"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_one_error_line_and_nothing_written(name, workdir, capsys):
    argv, message = CASES[name]
    before = files_under(str(workdir))
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert message in err and "Traceback" not in err
    assert files_under(str(workdir)) == before
    assert (workdir / "afile").read_text() == "keep"


def test_set_options_are_read_as_yaml_scalars(workdir, capsys):
    from tarocchi_rl.rl.config import load_config

    assert load_config(None, ["options.early_solo=false"]).options == {"early_solo": False}
    # the whole command accepts it too (it stops at the next error, an impossible total_samples)
    assert main(["train", "--set", "options.early_solo=false", "--set", "total_samples=0"]) == 2
    err = capsys.readouterr().err
    assert "early_solo" not in err and "total_samples: must be > 0" in err
    assert not os.path.exists("runs")
