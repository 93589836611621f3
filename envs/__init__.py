"""Adapters of the core to other ecosystems (installed as ``tarocchi_rl.envs``): OpenSpiel, Gymnasium,
PettingZoo. Adapters only: the rules live in ``tarocchi_rl`` and are never copied here."""
