"""Agents (installed as ``tarocchi_rl.agents``): baselines, PPO, ISMCTS, the arena and export."""
