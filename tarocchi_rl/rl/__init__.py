"""Self-play reinforcement learning: PPO on the batched core (``tarocchi-rl train``).

| module           | what                                                                                   |
|------------------|----------------------------------------------------------------------------------------|
| config           | the typed config (YAML + ``--set``), validated, documented field by field              |
| network          | the shared policy/value MLP with masked logits                                         |
| losses           | GAE over each seat's decision chain and the clipped PPO objective (unit-tested)        |
| rollout          | a rollout worker: a batched core, the league of opponents, trajectories per seat       |
| workers          | the rollout workers behind one interface: in process (LocalPool) or Ray (RayPool)      |
| imitation        | the warm start: imitate the heuristic (or recorded games) before PPO                   |
| record_imitation | the decisions of recorded games (imitation.records: people's), replayed and checked    |
| checkpoint       | checkpoints: save / load / validate (clear errors for missing or corrupt files)        |
| policy           | a trained network as an arena agent (PPOAgent)                                         |
| trainer          | the learner loop: rollouts, PPO updates, TensorBoard, evaluations, checkpoints         |
"""
