#!/usr/bin/env python3
"""A reference frontend for the tarocchi-bot/1 protocol, standard library only (docs/bot-protocol.md).

It plays complete deals: the table is ``tarocchi-rl referee`` (it deals and writes, for the seat to act, the
request that seat's bot must get); the bot is any program that speaks the protocol, by default
``tarocchi-rl bot --agent heuristic``, answering for every seat. Usage::

    python examples/python_client.py [--bot "tarocchi-rl bot --agent heuristic"] [--variants mineo,french4]
                                     [--deals 2] [--seed 0]

``--variants`` defaults to every variant the bot's hello lists. Exit status 0 when every deal was played to the
end; a bot error or a protocol violation is printed and ends the run with status 1.
"""

import argparse
import json
import shlex
import subprocess
import sys

PROTOCOL = "tarocchi-bot/1"


class Peer:
    """A child process spoken to in JSON lines."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.proc = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)

    def ask(self, message: dict) -> dict:
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.command!r} closed its output (exit status {self.proc.wait()})")
        return json.loads(line)

    def close(self) -> None:
        try:
            self.ask({"type": "quit"})
        except (RuntimeError, BrokenPipeError, ValueError):
            pass
        self.proc.wait(timeout=10)


def play_deal(referee: Peer, bot: Peer, variant: str, seed: int) -> list[int]:
    """One deal: the referee's requests go to the bot, the bot's actions back to the referee."""
    msg = referee.ask({"type": "new", "variant": variant, "seed": seed})
    while msg["type"] == "turn":
        answer = bot.ask(msg["request"])
        if answer.get("type") != "action" or answer.get("id") != msg["request"]["id"]:
            raise RuntimeError(f"the bot answered {answer} to request {msg['request']['id']}")
        msg = referee.ask({"type": "apply", "action": answer["action"]})
    if msg["type"] != "over":
        raise RuntimeError(f"the referee said {msg}")
    return msg["payoffs"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bot", default="tarocchi-rl bot --agent heuristic")
    p.add_argument("--referee", default="tarocchi-rl referee")
    p.add_argument("--variants", default=None, help="comma-separated (default: the variants the bot's hello lists)")
    p.add_argument("--deals", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    referee, bot = Peer(a.referee), Peer(a.bot)
    try:
        hello = bot.ask({"type": "hello", "id": 0, "protocol": PROTOCOL})
        if hello.get("protocol") != PROTOCOL:
            raise RuntimeError(f"the bot does not speak {PROTOCOL}: {hello}")
        print(f"bot: {hello['name']} (capabilities: {', '.join(hello['capabilities'])})")
        variants = a.variants.split(",") if a.variants else hello.get("variants")
        if not variants:
            raise RuntimeError("the bot's hello lists no variants: name them with --variants")
        for variant in variants:
            for k in range(a.deals):
                payoffs = play_deal(referee, bot, variant, a.seed + k)
                print(f"{variant} deal {a.seed + k}: payoffs {payoffs}")
    except (RuntimeError, KeyError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        bot.close()
        referee.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
