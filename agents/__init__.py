"""Agents by kind (installed as ``tarocchi_rl.agents``): every kind of agent spec, declared in one module here.

| spec kind                  | declared in      | the agent itself                                             |
|----------------------------|------------------|--------------------------------------------------------------|
| ``random``, ``heuristic``  | ``baselines``    | :mod:`tarocchi_rl.policies` (``RandomAgent``, ``HeuristicAgent``) |
| ``ppo:PATH``               | ``ppo``          | :class:`tarocchi_rl.rl.policy.PPOAgent` (torch)              |
| ``onnx:DIR``, ``bot:NAME`` | ``onnx``         | :class:`tarocchi_rl.policies.onnx_policy.OnnxAgent` (no torch) |
| ``ismcts:...``             | ``ismcts``       | :class:`.ismcts.ISMCTSAgent` (kernels: :mod:`tarocchi_rl.search`) |
| ``cmd:"PROGRAM ARGS"``     | ``cmd``          | :class:`.cmd.CmdAgent` (an external tarocchi-bot/1 program)  |
| ``compose:bid=SPEC,...``   | ``compose_bot``  | :class:`tarocchi_rl.policies.ComposeAgent`; composed bot directories |

The agents that the learners and the arena use themselves live in the layers below (policies, rl, search); a
kind module here declares the spec (its arguments, once: :mod:`.args`) and builds the agent. :mod:`.registry`
holds the kinds and the one spec parser; :mod:`.specs` is the entry point (``make_agent``, ``split_agent_specs``).
A new kind is one module here calling :func:`.registry.register_kind` (the registry imports every module of this
package), plus its tests.
"""
