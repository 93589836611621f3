"""Helpers the tests share (no tests here), one module per area:

- ``engine``: the JIT mode, the oracles' action spelling, bonuses per side, observation offsets
- ``scenarios``: scenarios written once as data and run on the engine and an oracle
- ``cards78``: 78-card deals written by card name
- ``checkpoints``: small training checkpoints and the overrides of a tiny training run
- ``numbers_close``: computed numbers against committed ones (exact, or within a stated tolerance)
- ``web_client``: a Starlette TestClient that addresses the app as a loopback server does
- ``reliability``: Hypothesis strategies for JSON-ish values and checks that nothing is written
- ``ray_cluster``: a private two-node Ray cluster on this machine
"""
