"""The ``tarocchi-rl`` command: one subcommand per task, listed by ``tarocchi-rl --help`` (each one's options:
``tarocchi-rl COMMAND --help``).

Each subcommand imports its modules when it runs, so that a light command (``replay``, ``play``) never loads
torch, Ray or TensorBoard; these imports point down the layers like any other (docs/architecture.md).
"""

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .variants import VARIANTS


def _cmd_replay(args: argparse.Namespace) -> int:
    from .records import RecordError, describe_outcome, load, replay

    if args.file.endswith(".jsonl"):
        return _replay_lines(args)
    try:
        state = replay(load(args.file))
    except RecordError as e:
        print(f"error: {args.file}: " + " ".join(str(e).split()), file=sys.stderr)
        return 2
    out = state.outcome()
    if args.json:
        print(json.dumps({"file": args.file, "valid": True, "actions": len(state.history), **out}))
        return 0
    print(f"{args.file}: valid {state.game.variant} record, {len(state.history)} actions")
    for line in describe_outcome(out, state.game.variant):
        print(line)
    return 0


def _replay_lines(args: argparse.Namespace) -> int:
    """``replay FILE.jsonl``: every record of a JSON-lines file checked (the first bad one: its line, exit 2)."""
    from .records import RecordError, load_lines, replay

    variants: dict[str, int] = {}
    try:
        for line, record in load_lines(args.file):  # a line that is not a JSON object: "line K: ..."
            try:
                variant = replay(record).game.variant
            except RecordError as e:
                raise RecordError(f"line {line}: {e}") from None
            variants[variant] = variants.get(variant, 0) + 1
    except RecordError as e:
        print(f"error: {args.file}: " + " ".join(str(e).split()), file=sys.stderr)
        return 2
    n = sum(variants.values())
    if args.json:
        print(json.dumps({"file": args.file, "valid": True, "records": n, "variants": variants}))
    else:
        counts = ", ".join(f"{k} {v}" for v, k in variants.items())
        print(f"{args.file}: {n} valid record{'' if n == 1 else 's'}" + (f" ({counts})" if counts else ""))
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    from .game import make
    from .play import make_bot, make_seat_agents, new_seed, parse_options, parse_seats, play_game

    seed = new_seed() if args.seed is None else args.seed
    try:  # everything is checked (and every bot built) before the deal starts; a mistake is one line
        options = parse_options(args.option)
        game = make(args.variant, **options)
        seats = make_seat_agents(parse_seats(args.seats, game.num_players), seed)
        hint = make_bot(args.hint, seed, "--hint")
        if args.record and os.path.isdir(args.record):  # checked before the deal: the record is written at its end
            raise ValueError(f"--record {args.record}: is a directory (give the record's file name)")
    except ValueError as e:
        print("error: " + " ".join(str(e).split()), file=sys.stderr)
        return 2
    seats_or_human = ["human" if s is None else s for s in seats]
    play_game(args.variant, seats_or_human, seed=seed, record_path=args.record, options=options, hint=hint)
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import format_report, run

    if args.batch < 1 or args.threads < 1 or args.seconds <= 0 or args.repeats < 1:
        raise ValueError("--batch, --threads and --repeats must be >= 1 and --seconds > 0")
    import numba

    if args.threads > numba.config.NUMBA_NUM_THREADS:
        most = numba.config.NUMBA_NUM_THREADS
        raise ValueError(f"--threads {args.threads}: this machine allows at most {most}")
    r = run(args.variant, args.batch, args.threads, args.seconds, args.repeats)
    print(json.dumps(r) if args.json else format_report(r))
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    import numba

    from .arena import format_results, read_deals_file, run_arena

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    from .agents.specs import make_agent, split_agent_specs

    specs = split_agent_specs(args.agents)
    decks = read_deals_file(args.deals_file, args.variant) if args.deals_file else None
    resumable: dict[str, Any] = {"workers": args.workers}  # run_arena says when --workers lacks --blocks
    if args.blocks:
        from .agents.specs import agent_fingerprint
        from .arena.blocks import BLOCK_DEALS

        resumable |= {"blocks_file": args.blocks, "fingerprint": agent_fingerprint, "batch_deals": BLOCK_DEALS}
    r = run_arena(args.variant, specs, deals=args.deals, seed=args.seed, decks=decks, out_dir=args.out,
                  progress=not (args.json or args.no_progress) and sys.stderr.isatty(), make_agent=make_agent,
                  **resumable)
    print(json.dumps(r) if args.json else format_results(r))
    if args.out:
        print(f"wrote {args.out}/results.json, games.jsonl, ratings.png", file=sys.stderr)
    return 0


def _cmd_agents(args: argparse.Namespace) -> int:
    from .agents.specs import spec_help, spec_table_markdown

    print(spec_table_markdown() if args.markdown else spec_help())
    return 0


def _cmd_deals(args: argparse.Namespace) -> int:
    from .arena import write_deals_file

    if args.n < 1:
        raise ValueError("--n must be >= 1")
    write_deals_file(args.out, args.variant, args.n, args.seed)
    print(f"wrote {args.n} {args.variant} deals to {args.out}")
    return 0


def _train_job(args: argparse.Namespace) -> Any:
    """What ``train`` will run, checked without torch (a hostile config is refused before the seconds and hundreds of
    MB that importing torch costs): a function of no arguments that runs it."""
    import datetime

    from .agents.specs import make_agent
    from .arena import check_out_dir
    from .rl.config import ConfigError, check_run_dir, load_config, parse_overrides

    if args.resume:
        if args.config:
            raise ConfigError("--resume continues a run with its own config: drop --config")
        check_run_dir(args.resume)
        overrides = parse_overrides(args.set or [])

        def run_resume() -> Any:
            from .rl.trainer import resume

            return resume(args.resume, overrides, ray_address=args.ray_address, progress=not args.no_progress,
                          agent_factory=make_agent)
        return run_resume
    config = args.config
    if args.variant is not None:
        from .shipped import shipped_config

        if config is not None:
            raise ConfigError("give --config FILE or --variant V (its shipped config), not both")
        config = shipped_config(args.variant)
    cfg = load_config(config, args.set or [])
    out = args.out or f"runs/{cfg.variant}-{datetime.datetime.now():%Y%m%d-%H%M%S}"
    check_out_dir(out)  # a file there, or an unwritable parent: one line before any work

    def run_train() -> Any:
        from .rl.trainer import train

        print(f"training {cfg.variant} in {out}", file=sys.stderr)
        return train(cfg, out, ray_address=args.ray_address, progress=not args.no_progress, agent_factory=make_agent)
    return run_train


def _cmd_train(args: argparse.Namespace) -> int:
    from .rl.checkpoint_file import CheckpointError
    from .rl.config import ConfigError

    try:
        job = _train_job(args)
    except (ConfigError, CheckpointError) as e:
        print("error: " + " ".join(str(e).split()), file=sys.stderr)
        return 2
    from .rl.workers import WorkerError  # torch

    try:
        result = job()
    except (ConfigError, CheckpointError) as e:
        print("error: " + " ".join(str(e).split()), file=sys.stderr)
        return 2
    except WorkerError as e:  # the rollout workers could not go on: latest.pt already holds the last update
        print("error: " + " ".join(str(e).split()), file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


def _cmd_bot(args: argparse.Namespace) -> int:
    from .agents.specs import make_agent
    from .bot import run_bot

    return run_bot(args.agent, make_agent, args.name)


def _cmd_exploit(args: argparse.Namespace) -> int:
    from .agents.specs import make_agent
    from .arena import check_out_dir
    from .rl.exploit import exploit

    if args.out:
        check_out_dir(args.out)
        if Path(args.out, "checkpoints").exists():
            raise ValueError(f"--out {args.out} already holds a run")
    r = exploit(args.target, args.variant, args.minutes, make_agent, deals=args.deals, seed=args.seed,
                sets=args.set, out=args.out, progress=not args.no_progress)
    if args.json:
        print(json.dumps(r))
    else:
        lo, hi = r["ci95"]
        im = r["imitation"]
        clone = (f"imitating {im['teacher']} ({im['decisions']:,} decisions, accuracy {im['accuracy']:.3f}; "
                 f"the clone: {r['start']['mean']:+.3f}), then " if im.get("decisions") else "")
        print(f"{r['variant']}: an exploiter {clone}trained {r['training']['minutes']:.1f} min "
              f"({r['training']['updates']} updates) wins {r['exploitability']:+.3f} per deal [{lo:+.3f}, {hi:+.3f}] "
              f"against {r['target']} over {r['deals']} duplicate deals "
              "(the target against itself: 0; lower is better)")
    return 0


def _cmd_expert(args: argparse.Namespace) -> int:
    from .rl.checkpoint_file import CheckpointError
    from .rl.config import ConfigError, parse_overrides

    try:
        if args.resume:
            if args.config:
                raise ConfigError("--resume continues a run with its own config: drop --config")
            overrides = parse_overrides(args.set or [])

            def job() -> Any:
                from .expert import resume

                return resume(args.resume, args.out, args.carry, overrides, ray_address=args.ray_address,
                              progress=not args.no_progress)
        else:
            if not args.config or not args.out:
                raise ConfigError("a new run needs --config FILE and --out DIR (or --resume DIR to continue one)")
            from .expert.config import load_expert_config

            cfg = load_expert_config(args.config, args.set or [])

            def job() -> Any:
                from .expert import start

                return start(cfg, args.out, args.carry, ray_address=args.ray_address, progress=not args.no_progress)
        result = job()
    except (ConfigError, CheckpointError, ValueError) as e:
        print("error: " + " ".join(str(e).split()), file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


def _cmd_leaderboard(args: argparse.Namespace) -> int:
    from .agents.specs import agent_fingerprint, make_agent, split_agent_specs
    from .leaderboard import default_agents, format_markdown, run_leaderboard, write_results
    from .variants import VARIANTS

    variants = VARIANTS if args.variants == "all" else [v.strip() for v in args.variants.split(",")]
    for v in variants:
        if v not in VARIANTS:
            raise ValueError(f"--variants: unknown variant {v!r} (known: {', '.join(VARIANTS)})")
    command = "tarocchi-rl leaderboard " + " ".join(sys.argv[2:]) if len(sys.argv) > 1 else "tarocchi-rl leaderboard"
    for v in variants:
        deals = Path(args.deals_dir) / f"{v}.jsonl.gz"
        agents = split_agent_specs(args.agents) if args.agents else default_agents(v, args.models)
        board = run_leaderboard(v, deals, agents, make_agent, search_deals=args.search_deals,
                                progress=not args.no_progress and sys.stderr.isatty(), blocks_dir=args.blocks_dir,
                                fingerprint=agent_fingerprint, workers=args.workers)
        if args.out:
            print(f"wrote {write_results(board, args.out, command)}", file=sys.stderr)
        print(format_markdown(board, command))
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    try:
        from .rl.export import checkpoint_of_spec, export_policy
    except ImportError as e:  # torch and onnx: the train extra
        raise ValueError(f"export needs torch and onnx (pip install 'tarocchi-rl[train]'): {e}") from None

    if args.agent.strip().lower().startswith("compose:"):
        from .agents.compose_bot import export_composed

        c = export_composed(args.agent, args.out, eval_deals=args.eval_deals, golden=args.golden, seed=args.seed,
                            progress=sys.stderr.isatty())
        print(f"wrote {args.out}: compose.json, parts/, README.md", file=sys.stderr)
        for opp, r in ((c.get("evaluation") or {}).get("opponents") or {}).items():
            lo, hi = r["ci95"]
            print(f"  vs {opp}: {r['mean_payoff_per_deal']:.3f} per deal [{lo:.3f}, {hi:.3f}]", file=sys.stderr)
        return 0
    path = checkpoint_of_spec(args.agent)  # errors (ValueError subclasses) are one line: see main
    m = export_policy(path, args.out, eval_deals=args.eval_deals, golden=args.golden, seed=args.seed,
                      progress=sys.stderr.isatty())
    print(f"wrote {args.out}: policy.onnx, manifest.json, golden.jsonl ({m['golden']['positions']} positions), "
          "README.md" + (", belief.onnx" if m.get("belief") else ""), file=sys.stderr)
    for opp, r in ((m.get("evaluation") or {}).get("opponents") or {}).items():
        lo, hi = r["ci95"]
        print(f"  vs {opp}: {r['mean_payoff_per_deal']:.3f} per deal [{lo:.3f}, {hi:.3f}] over {r['deals']} deals",
              file=sys.stderr)
    return 0


def _cmd_referee(args: argparse.Namespace) -> int:
    from .bot import run_referee

    return run_referee()


def _cmd_serve(args: argparse.Namespace) -> int:
    try:
        from .web.app import ServerConfig
        from .web.serve import run_server
    except ImportError as e:  # starlette, uvicorn: the web extra
        raise ValueError(f"serve needs the web extra (pip install 'tarocchi-rl[web]'): {e}") from None
    from .agents.specs import split_agent_specs
    from .web.bots import agent_entries

    config = ServerConfig(agents=agent_entries(args.agents or []),
                          seats=split_agent_specs(args.seats) if args.seats else None,
                          ismcts=args.ismcts, idle_timeout=args.idle_timeout, max_tables=args.max_tables,
                          allowed_hosts=args.allow_host or [], allowed_origins=args.allow_origin or [],
                          db=None if args.db.strip().lower() == "none" else args.db, seat_grace=args.seat_grace,
                          challenges=args.challenges,
                          **{k: getattr(args, k) for k in ("max_tables_per_client", "max_connections_per_client")
                             if getattr(args, k) is not None})  # unset: ServerConfig's defaults
    run_server(config, args.host, args.port, args.workers, public=args.public)
    return 0


def _cmd_games(args: argparse.Namespace) -> int:
    try:
        from .web.games import export_games, format_stats, games_stats
    except ImportError as e:  # sqlalchemy, alembic: the web extra
        raise ValueError(f"games needs the web extra (pip install 'tarocchi-rl[web]'): {e}") from None
    if args.action == "export":  # errors (StoreError and the rest: ValueErrors) are one line: see main
        n = export_games(args.db, args.out, args.variant, args.since, args.practice)
        print(f"wrote {n} game{'' if n == 1 else 's'} to {args.out}", file=sys.stderr)
        return 0
    stats = games_stats(args.db)
    print(json.dumps(stats) if args.json else format_stats(stats))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    print(run_demo(args.deals, args.seed))
    return 0


def _cmd_warm(args: argparse.Namespace) -> int:
    from .warm import warm

    seconds = warm(lambda line: print(line, flush=True))
    print(f"the kernels are in Numba's cache ({seconds:.0f} s)")
    return 0


_VARIANT_HELP = ", ".join(VARIANTS)
_GAMES_DB = "sqlite:///tarocchi-games.db"  # serve's --db: a file in the working directory
_Subparsers = Any  # argparse's _SubParsersAction (private)


def _add_replay(sub: _Subparsers) -> None:
    r = sub.add_parser("replay", help="validate and score a tarocchi-record/1 game record")
    r.add_argument("file", help="record file (JSON), or FILE.jsonl: a record a line, every one checked")
    r.add_argument("--json", action="store_true", help="print the result as JSON")
    r.set_defaults(func=_cmd_replay)


def _add_play(sub: _Subparsers) -> None:
    pl = sub.add_parser("play", help="play a deal in the terminal against bots")
    pl.add_argument("--variant", default="mineo", help=_VARIANT_HELP)
    pl.add_argument("--seats", default=None, help="comma-separated, one per seat: human or an agent spec "
                    "(random, heuristic, ismcts:iterations=200,seed=3, ppo:PATH, ...; "
                    "default: human at seat 0, random bots elsewhere)")
    pl.add_argument("--option", action="append", metavar="KEY=VALUE", help="a variant option, e.g. "
                    "early_solo=false (values read as JSON when they parse, else strings); repeatable")
    pl.add_argument("--hint", default="heuristic", metavar="SPEC", help="the bot that `hint` asks at your "
                    "prompt (default heuristic; ppo: agents also show their probabilities)")
    pl.add_argument("--seed", type=int, default=None)
    pl.add_argument("--record", default="game.json", help="where to save the record at the end")
    pl.set_defaults(func=_cmd_play)


def _add_bench(sub: _Subparsers) -> None:
    b = sub.add_parser("bench", help="core throughput (fused rollout kernel and BatchEnv step loop)")
    b.add_argument("--variant", default="mineo", help=_VARIANT_HELP)
    b.add_argument("--batch", type=int, default=4096)
    b.add_argument("--threads", type=int, default=1)
    b.add_argument("--seconds", type=float, default=2.0, help="length of each timed run")
    b.add_argument("--repeats", type=int, default=5, help="runs per benchmark; medians are reported")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=_cmd_bench)


def _add_eval(sub: _Subparsers) -> None:
    e = sub.add_parser("eval", help="duplicate arena: agents on the same deals with seats rotated",
                       epilog="Every agent spec and its arguments: tarocchi-rl agents")
    e.add_argument("--variant", default="mineo", help=_VARIANT_HELP)
    e.add_argument("--agents", required=True, help="comma-separated agent specs: random, heuristic, "
                   "ppo:PATH[,greedy=false] (a checkpoint or run directory), onnx:DIR (an exported bot), "
                   "ismcts:iterations=N[,...], cmd:\"PROGRAM ARGS\"[,timeout=S] (a tarocchi-bot/1 program)")
    e.add_argument("--deals", type=int, default=2000, help="number of deals (ignored with --deals-file)")
    e.add_argument("--deals-file", default=None, help="a frozen deal set written by `tarocchi-rl deals`")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--threads", type=int, default=1)
    e.add_argument("--out", default=None, help="directory for results.json, games.jsonl, ratings.png")
    e.add_argument("--json", action="store_true")
    e.add_argument("--no-progress", action="store_true", help="no progress bar (there is none with --json or "
                   "when stderr is not a terminal)")
    e.add_argument("--blocks", default=None, metavar="FILE", help="resumable: keep every finished block (a pair "
                   "of agents on 100 deals) in FILE (JSON lines); a rerun plays only the blocks missing there")
    e.add_argument("--workers", type=int, default=1, help="with --blocks: play the missing blocks in this many "
                   "processes side by side (the same results as one)")
    e.set_defaults(func=_cmd_eval)


def _add_agents(sub: _Subparsers) -> None:
    a = sub.add_parser("agents", help="every kind of agent spec and its arguments (type, range, default)")
    a.add_argument("--markdown", action="store_true", help="as one Markdown table (the docs' table)")
    a.set_defaults(func=_cmd_agents)


def _add_deals(sub: _Subparsers) -> None:
    dl = sub.add_parser("deals", help="write a frozen set of deals for comparable evaluations")
    dl.add_argument("--variant", default="mineo")
    dl.add_argument("--n", type=int, default=2000)
    dl.add_argument("--seed", type=int, default=0)
    dl.add_argument("--out", required=True)
    dl.set_defaults(func=_cmd_deals)


def _add_train(sub: _Subparsers) -> None:
    t = sub.add_parser("train", help="PPO self-play training (TensorBoard logs and checkpoints in the run dir)")
    t.add_argument("--config", default=None, help="YAML config, e.g. configs/ppo_mineo.yaml")
    t.add_argument("--variant", default=None, help="train with the shipped config of this variant (the file "
                   "configs/ppo_VARIANT.yaml, package data of an installed wheel)")
    t.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a config key (dotted for sections: ppo.lr=1e-4); repeatable")
    t.add_argument("--out", default=None, help="run directory (default runs/VARIANT-TIMESTAMP)")
    t.add_argument("--resume", default=None, metavar="RUN_DIR", help="continue a run from its latest checkpoint")
    t.add_argument("--ray-address", default=None, help="join a Ray cluster (e.g. auto or HOST:6379)")
    t.add_argument("--no-progress", action="store_true", help="no progress bar")
    t.set_defaults(func=_cmd_train)


def _add_leaderboard(sub: _Subparsers) -> None:
    lb = sub.add_parser("leaderboard", help="every agent on the frozen deal sets of benchmarks/: a Markdown table "
                        "per variant (mean per deal with 95%% CI, win rate, Elo, declarer success)")
    lb.add_argument("--variants", default="all", help="comma-separated variants, or all")
    lb.add_argument("--agents", default=None, help="agent specs (default: tarocchi_rl/leaderboard.py)")
    lb.add_argument("--deals-dir", default="benchmarks/deals", help="VARIANT.jsonl.gz deal sets")
    lb.add_argument("--models", default=None,
                    help="the bots of the default agents: DIR/VARIANT (default: the shipped bots, bot:VARIANT)")
    lb.add_argument("--search-deals", type=int, default=500, help="deals of the table with search agents")
    lb.add_argument("--out", default=None, help="write VARIANT.md and VARIANT.json here (e.g. benchmarks/results)")
    lb.add_argument("--blocks-dir", default=None, help="resumable: keep every finished block (a pair of agents on a "
                    "chunk of deals) in BLOCKS_DIR/VARIANT.jsonl; a rerun plays only the blocks missing there")
    lb.add_argument("--workers", type=int, default=1, help="with --blocks-dir: play the missing blocks in this many "
                    "processes side by side (the same results as one)")
    lb.add_argument("--no-progress", action="store_true")
    lb.set_defaults(func=_cmd_leaderboard)


def _add_exploit(sub: _Subparsers) -> None:
    xp = sub.add_parser("exploit", help="exploitability probe: train a best response to a frozen agent for M "
                        "minutes and report how much it wins per deal (duplicate arena, 95%% CI)")
    xp.add_argument("--target", required=True, metavar="SPEC", help="the frozen agent (any agent spec)")
    xp.add_argument("--variant", default="mineo", help=_VARIANT_HELP)
    xp.add_argument("--minutes", type=float, required=True, help="training time of the exploiter")
    xp.add_argument("--deals", type=int, default=1000, help="duplicate deals of the measurement (default 1000)")
    xp.add_argument("--seed", type=int, default=0)
    xp.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a training config key")
    xp.add_argument("--out", default=None, help="keep the exploiter's run directory here")
    xp.add_argument("--json", action="store_true")
    xp.add_argument("--no-progress", action="store_true")
    xp.set_defaults(func=_cmd_exploit)


def _add_expert(sub: _Subparsers) -> None:
    ei = sub.add_parser("expert", help="expert iteration: the network learns what the search decides (search targets "
                        "from Ray workers, a replay buffer, a gate each round); resumable on another machine",
                        epilog="Config keys: tarocchi_rl/expert/config.py; configs/expert_VARIANT.yaml")
    ei.add_argument("--config", default=None, help="YAML config, e.g. configs/expert_french3.yaml")
    ei.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config key (dotted for "
                    "sections: search.budget.play=800); repeatable; with --resume only the stopping rules, "
                    "num_workers, device, torch_threads and carry_every_minutes")
    ei.add_argument("--out", default=None, metavar="DIR", help="the run directory (new or empty; with --resume: "
                    "where to continue, default the resumed run directory)")
    ei.add_argument("--carry", default=None, metavar="DIR", help="also keep the resumable state, the log and the "
                    "config here (e.g. runs-carry/NAME, committed), every carry_every_minutes and at the stop")
    ei.add_argument("--resume", default=None, metavar="DIR", help="continue the run whose resume.pt is in DIR (a "
                    "run directory or a carry directory)")
    ei.add_argument("--ray-address", default=None, help="join a Ray cluster (e.g. auto or HOST:6379)")
    ei.add_argument("--no-progress", action="store_true")
    ei.set_defaults(func=_cmd_expert)


def _add_export(sub: _Subparsers) -> None:
    ex = sub.add_parser("export", help="export a trained policy as a bot directory (ONNX, manifest, golden "
                        "positions, model card) that runs without torch as onnx:DIR")
    ex.add_argument("--agent", required=True, metavar="ppo:PATH", help="the policy: ppo:RUN_DIR or ppo:CHECKPOINT; "
                    "or compose:bid=SPEC,play=SPEC[,rest=SPEC] of ppo:, onnx:, bot: policies and baselines (a "
                    "composed bot directory: one policy per kind of decision)")
    ex.add_argument("--out", required=True, metavar="DIR", help="the bot directory to write (a previous export "
                    "there is replaced)")
    ex.add_argument("--eval-deals", type=int, default=500, help="duplicate deals of the evaluation against "
                    "heuristic and against random, written to the manifest and the model card (0: none)")
    ex.add_argument("--golden", type=int, default=256, help="reference positions in golden.jsonl (every phase)")
    ex.add_argument("--seed", type=int, default=0, help="seeds the golden positions and the evaluation deals")
    ex.set_defaults(func=_cmd_export)


def _add_bot(sub: _Subparsers) -> None:
    bt = sub.add_parser("bot", help="answer for one seat over the tarocchi-bot/1 protocol (JSON lines on "
                        "stdin/stdout, docs/bot-protocol.md)")
    bt.add_argument("--agent", required=True, help="the agent spec: heuristic, ismcts:..., ppo:PATH, onnx:DIR")
    bt.add_argument("--name", default=None, help="the name the bot gives in its hello")
    bt.set_defaults(func=_cmd_bot)


def _add_referee(sub: _Subparsers) -> None:
    rf = sub.add_parser("referee", help="a table for testing bots and frontends: deals and writes each seat's "
                        "tarocchi-bot/1 request (JSON lines, docs/bot-protocol.md)")
    rf.set_defaults(func=_cmd_referee)


def _add_serve(sub: _Subparsers) -> None:
    sv = sub.add_parser("serve", help="the browser game and the HTTP API (Starlette under uvicorn; the web extra)")
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=int, default=8000)
    sv.add_argument("--seats", default=None, help="the seating the page offers first, e.g. human,heuristic,ismcts,"
                    "heuristic: human once, the others bots of this server (built in or --agents)")
    sv.add_argument("--agents", action="append", default=None, metavar="NAME=SPEC", help="an extra bot offered "
                    "besides random, heuristic and ismcts, shown to clients as NAME (e.g. strong=onnx:bots/mineo; "
                    "repeatable); a bare SPEC,... gets neutral names bot1, bot2, ... (clients never see a spec)")
    sv.add_argument("--ismcts", default="ismcts:time=0.2", metavar="SPEC", help="the built-in ismcts bot's spec "
                    "(default ismcts:time=0.2: 0.2 s a decision)")
    sv.add_argument("--workers", type=int, default=1, help="server processes (tables live in their "
                    "connection's process)")
    sv.add_argument("--idle-timeout", type=float, default=1800.0, help="seconds without a message before a "
                    "table is closed")
    sv.add_argument("--max-tables", type=int, default=1000, help="tables (deals held by WebSocket connections) "
                    "per process")
    sv.add_argument("--max-tables-per-client", type=int, default=None, metavar="N", help="tables one client address "
                    "may hold at once (default 8; behind a proxy that does not forward addresses, raise it)")
    sv.add_argument("--max-connections-per-client", type=int, default=None, metavar="N", help="HTTP requests in "
                    "progress and WebSocket connections of one client address at once (default 16)")
    sv.add_argument("--public", action="store_true", help="serve a --host other than loopback (0.0.0.0, a LAN "
                    "address): refused without it; prints the routes, bots and limits exposed")
    sv.add_argument("--allow-host", action="append", default=None, metavar="NAME", help="a Host name served "
                    "besides the bound host (and localhost when bound to loopback), e.g. a LAN name; repeatable")
    sv.add_argument("--allow-origin", action="append", default=None, metavar="URL", help="a page origin allowed "
                    "to open /ws tables besides the server's own, e.g. https://example.org; repeatable")
    sv.add_argument("--db", default=_GAMES_DB, metavar="URL", help="where every game is stored: an SQLAlchemy URL "
                    f"(default {_GAMES_DB}, a file in the working directory; postgresql://USER@HOST/DB with a driver "
                    "installed; none: nothing stored)")
    sv.add_argument("--seat-grace", type=float, default=60.0, metavar="SECONDS", help="at a table for several "
                    "people, how long a seat waits for a person who left before a bot plays it (they take it back "
                    "with their seat token; default 60)")
    sv.add_argument("--challenges", default=None, metavar="FILE", help="duplicate challenges besides the built-in "
                    "ones (JSON, or YAML for .yaml/.yml): fixed deals people play against a bot's results on the same "
                    "deals (GET /v1/challenges)")
    sv.set_defaults(func=_cmd_serve)


def _add_games(sub: _Subparsers) -> None:
    gm = sub.add_parser("games", help="the games a web server stored (serve --db): export them as records, "
                        "or the bots' results against people")
    acts = gm.add_subparsers(dest="action", required=True)
    ex = acts.add_parser("export", help="the finished games as tarocchi-record/1 JSON lines (replay, "
                         "eval --deals-file)")
    ex.add_argument("--db", default=_GAMES_DB, metavar="URL", help=f"the database (default {_GAMES_DB})")
    ex.add_argument("--out", required=True, metavar="FILE.jsonl", help="the file to write")
    ex.add_argument("--variant", default=None, help=f"only this variant ({_VARIANT_HELP})")
    ex.add_argument("--since", default=None, metavar="YYYY-MM-DD", help="only the games dealt since that day (UTC)")
    ex.add_argument("--practice", action="store_true", help="the practice tables too (a client chose the seed)")
    ex.set_defaults(func=_cmd_games)
    st = acts.add_parser("stats", help="per bot against people and per person (anonymous ids): deals, mean per "
                         "deal with 95%% CI, win rate (practice tables left out); per challenged bot, people's "
                         "duplicate challenges: person - bot on the same deals")
    st.add_argument("--db", default=_GAMES_DB, metavar="URL", help=f"the database (default {_GAMES_DB})")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=_cmd_games)


def _add_demo(sub: _Subparsers) -> None:
    d = sub.add_parser("demo", help="the shipped bots against the heuristic and the heuristic against "
                       "random bots in the duplicate arena, every variant")
    d.add_argument("--deals", type=int, default=1000)
    d.add_argument("--seed", type=int, default=0)
    d.set_defaults(func=_cmd_demo)


def _add_warm(sub: _Subparsers) -> None:
    w = sub.add_parser("warm", help="compile the Numba kernels into Numba's cache once (a cold cache otherwise "
                       "makes every process that starts compile them: minutes each)")
    w.set_defaults(func=_cmd_warm)


#: the subcommands in the order ``tarocchi-rl --help`` lists them, each added by its own function
_SUBCOMMANDS = (_add_replay, _add_play, _add_bench, _add_eval, _add_agents, _add_deals, _add_train, _add_leaderboard,
               _add_exploit, _add_expert, _add_export, _add_bot, _add_referee, _add_serve, _add_games, _add_demo,
               _add_warm)


def build_parser() -> argparse.ArgumentParser:
    """The ``tarocchi-rl`` parser: one subparser per subcommand (:data:`_SUBCOMMANDS`)."""
    p = argparse.ArgumentParser(prog="tarocchi-rl", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    for add in _SUBCOMMANDS:
        add(sub)
    return p


def _extras_providing(module: str) -> list[str]:
    """The extras of this package (its metadata: pyproject's optional-dependencies, ``dev`` left out) that install
    the top-level ``module`` (by its distribution's name: ``torch``, ``starlette``, ``onnxruntime``)."""
    import importlib.metadata
    import re

    try:
        requires = importlib.metadata.requires("tarocchi-rl") or []
    except importlib.metadata.PackageNotFoundError:  # a checkout run without pip install
        return []
    wanted = module.lower().replace("_", "-")
    out = []
    for r in requires:
        name, extra = re.match(r"[A-Za-z0-9._-]+", r), re.search(r"extra\s*==\s*[\"']([^\"']+)", r)
        dist = name.group(0).lower().replace("_", "-") if name else ""
        if extra and extra.group(1) != "dev" and wanted in (dist, dist.removeprefix("py")):
            out.append(extra.group(1))
    return list(dict.fromkeys(out))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if getattr(args, "seed", None) is not None:  # every command's --seed, against one bound
            from .bits import check_seed

            check_seed("--seed", args.seed)
        return args.func(args)
    except ValueError as e:  # bad input (unknown variant, option, ...): a message, not a traceback
        print("error: " + " ".join(str(e).split()), file=sys.stderr)  # one line
        return 2
    except ModuleNotFoundError as e:  # an optional dependency (torch for train, ...): which extra installs it
        extras = _extras_providing((e.name or "").partition(".")[0])
        if not extras:
            raise
        print(f"error: tarocchi-rl {args.command} needs {e.name}, which is not installed: pip install "
              f"'tarocchi-rl[{extras[0]}]'" + (f" (or one of: {', '.join(extras[1:])})" if extras[1:] else ""),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C where a command has nothing to save (e.g. while Ray starts): one line
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the output's reader went away (e.g. `| head`): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's flush at exit must not fail
        return 141


if __name__ == "__main__":
    sys.exit(main())
