"""Record a core benchmark run as JSON: ``python experiments/bench/bench_core.py [--variant mineo] [--out FILE]``.

A thin wrapper over ``tarocchi-rl bench`` (medians of several runs) that stamps the machine and time.
"""

import argparse
import datetime
import json

from tarocchi_rl.bench import format_report, run
from tarocchi_rl.provenance import machine_stamp


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--variant", default="mineo")
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out", default=None, help="JSON file to write (default: print only)")
    a = p.parse_args()
    r = run(a.variant, a.batch, a.threads, a.seconds, a.repeats)
    r["machine"] = machine_stamp()
    r["when"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    print(format_report(r))
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(r, f, indent=1)


if __name__ == "__main__":
    main()
