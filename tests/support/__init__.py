"""Helpers the tests share (no tests here), one module per area:

- ``engine``: the JIT mode, the oracles' action spelling, bonuses per side, observation offsets
- ``scenarios``: scenarios written once as data and run on the engine and an oracle
- ``cards78``: 78-card deals written by card name
- ``checkpoints``: small training checkpoints, the overrides of a tiny training run and ``train_tiny``
- ``determinize``: the determinizer's explicit predicate (what an observer knows), random and small positions
- ``search``: positions and a uniform evaluator for the search tests (ISMCTS, guided search)
- ``numbers_close``: computed numbers against committed ones (exact, or within a stated tolerance)
- ``web_client``: a Starlette TestClient that addresses the app as a loopback server does
- ``web_views``: what a browser game message may show its human
- ``no_torch``: a ``sitecustomize.py`` that blocks ``import torch`` in a subprocess
- ``reliability``: Hypothesis strategies for JSON-ish values and checks that nothing is written
- ``ray_cluster``: a private two-node Ray cluster on this machine
"""
