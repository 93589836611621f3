"""The learning curve of a training run: arena score against each opponent over training time.

    python experiments/studies/learning_curve.py runs/mineo-XXXX [--out curve.png] [--markdown]

Reads ``RUN_DIR/eval.jsonl`` (written by ``tarocchi-rl train`` every ``eval.every`` updates and at the end) and
plots the greedy policy's mean payoff per deal with its 95% CI against minutes and learner decisions; with
``--markdown`` prints the same as a table.
"""

import argparse
import json
from pathlib import Path


def load_curve(run_dir) -> list:
    path = Path(run_dir) / "eval.jsonl"
    if not path.is_file():
        raise SystemExit(f"error: {path} not found (is {run_dir} a training run directory?)")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def markdown(rows) -> str:
    opps = list(rows[0]["vs"])
    head = "| update | minutes | learner decisions | " + " | ".join(f"vs {o} [95% CI]" for o in opps) + " |"
    lines = [head, "|" + "---|" * (3 + len(opps))]
    for r in rows:
        cells = [f"{r['vs'][o]['mean']:+.2f} [{r['vs'][o]['ci95'][0]:+.2f}, {r['vs'][o]['ci95'][1]:+.2f}]"
                 for o in opps]
        tag = f" (final, {r['deals']} deals)" if r.get("final") else ""
        lines.append(f"| {r['update']}{tag} | {r['minutes']:.1f} | {r['samples'] / 1e6:.1f} M | " + " | ".join(cells)
                     + " |")
    return "\n".join(lines)


def plot(rows, out) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    periodic = [r for r in rows if not r.get("final")]
    for opp in rows[0]["vs"]:
        x = [r["minutes"] for r in periodic]
        m = [r["vs"][opp]["mean"] for r in periodic]
        lo = [r["vs"][opp]["ci95"][0] for r in periodic]
        hi = [r["vs"][opp]["ci95"][1] for r in periodic]
        ax.plot(x, m, label=f"vs {opp}")
        ax.fill_between(x, lo, hi, alpha=0.25)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xlabel("minutes of training")
    ax.set_ylabel("mean payoff per deal (duplicate arena)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir")
    ap.add_argument("--out", default=None, help="PNG path (default RUN_DIR/learning_curve.png)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    rows = load_curve(args.run_dir)
    if not rows:
        raise SystemExit("error: no evaluation yet")
    out = args.out or str(Path(args.run_dir) / "learning_curve.png")
    plot(rows, out)
    print(f"wrote {out}")
    if args.markdown:
        print(markdown(rows))


if __name__ == "__main__":
    main()
