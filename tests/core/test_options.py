"""Variant options are checked when a game is made: unknown names, wrong types and values the rules do not allow
are a ValueError naming the option (before any state exists)."""

import pytest

import tarocchi_rl


@pytest.mark.parametrize(
    ("variant", "options", "message"),
    [
        ("french3", {"excuse_last_trick": "bogus"}, "excuse_last_trick"),
        ("french4", {"excuse_last_trick": 1}, "excuse_last_trick"),
        ("piedmont3", {"honour_5": "x"}, "honour_5"),
        ("piedmont4", {"accuso_points": -1}, "accuso_points"),
        ("mineo", {"early_solo": "yes"}, "early_solo"),
        ("mineo", {"no_such_option": True}, "no_such_option"),
    ],
)
def test_bad_option_is_refused_at_make(variant, options, message):
    with pytest.raises(ValueError, match=message):
        tarocchi_rl.make(variant, **options)


def test_allowed_values_are_accepted():
    assert tarocchi_rl.make("french3", excuse_last_trick="trick_winner").options["excuse_last_trick"] == "trick_winner"
    assert tarocchi_rl.make("piedmont3", honour_5="angelo").new_state(seed=1).current_player() >= 0
