#!/usr/bin/env node
// A reference frontend for the tarocchi-bot/1 protocol in Node.js, with no dependencies (docs/bot-protocol.md).
// It is examples/python_client.py again, for frontend authors who write JavaScript.
//
// It plays complete deals: the table is `tarocchi-rl referee` (it deals and writes, for the seat to act, the
// request that seat's bot must get); the bot is any program that speaks the protocol, by default
// `tarocchi-rl bot --agent heuristic`, answering for every seat. Both are child processes spoken to in JSON
// lines: one request line in, exactly one answer line out. Usage:
//
//   node examples/node_client.mjs [--bot "tarocchi-rl bot --agent heuristic"] [--referee "tarocchi-rl referee"]
//                                 [--variants mineo,french4] [--deals 2] [--seed 0] [--timeout 30]
//
// --variants defaults to every variant the bot's hello lists. Exit status 0 when every deal was played to the end; a
// bot error, a protocol violation or a request left unanswered for --timeout seconds is printed as one `error: ...`
// line on stderr and ends the run with status 1.

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

const PROTOCOL = "tarocchi-bot/1";

// "a 'b c' \"d e\"" -> ["a", "b c", "d e"]: whitespace separates words, quotes group them, a backslash
// escapes the next character (in double quotes only \" and \\), as Python's shlex.split (and a POSIX shell) would.
function splitCommand(command) {
  const words = [];
  let word = null, quote = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote === "'") { if (c === "'") quote = null; else word += c; continue; }
    if (quote === '"') {
      if (c === "\\" && (command[i + 1] === '"' || command[i + 1] === "\\")) word += command[++i];
      else if (c === '"') quote = null;
      else word += c;
      continue;
    }
    if (c === "\\" && i + 1 < command.length) { word = (word ?? "") + command[++i]; continue; }
    if (c === "'" || c === '"') { quote = c; word = word ?? ""; }
    else if (/\s/.test(c)) { if (word !== null) words.push(word); word = null; }
    else word = (word ?? "") + c;
  }
  if (quote) throw new Error(`unclosed ${quote} in ${JSON.stringify(command)}`);
  if (word !== null) words.push(word);
  if (!words.length) throw new Error("empty command");
  return words;
}

// A child process spoken to in JSON lines. Lines it writes wait in a queue until asked for, so an answer
// is never lost whichever comes first, the line or the call that awaits it.
class Peer {
  constructor(command, timeoutMs) {
    const [file, ...args] = splitCommand(command);
    this.command = command;
    this.timeoutMs = timeoutMs;
    this.lines = []; // lines read and not yet taken
    this.waiting = null; // the pending ask's {resolve, reject}
    this.ended = null; // why no more lines will come
    this.child = spawn(file, args, { stdio: ["pipe", "pipe", "inherit"] }); // its stderr is ours
    createInterface({ input: this.child.stdout, crlfDelay: Infinity }).on("line", (line) => this.push(line));
    this.child.on("error", (e) => this.end(`cannot run ${JSON.stringify(command)}: ${e.message}`));
    this.child.on("close", (code) => this.end(`${JSON.stringify(command)} closed its output (exit status ${code})`));
    this.child.stdin.on("error", () => {}); // a broken pipe: reported as the closed output above
  }

  push(line) {
    if (!line.trim()) return;
    if (this.waiting) this.waiting.resolve(line);
    else this.lines.push(line);
  }

  end(why) {
    this.ended ??= why;
    if (this.waiting) this.waiting.reject(new Error(this.ended));
  }

  // The next line, or an error when the child ends or says nothing for timeoutMs.
  nextLine(timeoutMs) {
    if (this.lines.length) return Promise.resolve(this.lines.shift());
    if (this.ended) return Promise.reject(new Error(this.ended));
    return new Promise((resolve, reject) => {
      const done = (settle) => (value) => { clearTimeout(timer); this.waiting = null; settle(value); };
      const timer = setTimeout(done(reject), timeoutMs,
        new Error(`${JSON.stringify(this.command)} gave no answer within ${timeoutMs / 1000} s`));
      this.waiting = { resolve: done(resolve), reject: done(reject) };
    });
  }

  // One request, one answer.
  async ask(message, timeoutMs = this.timeoutMs) {
    if (!this.ended) this.child.stdin.write(JSON.stringify(message) + "\n");
    const line = await this.nextLine(timeoutMs);
    try {
      return JSON.parse(line);
    } catch {
      throw new Error(`${JSON.stringify(this.command)} wrote a line that is not JSON: ${line.slice(0, 200)}`);
    }
  }

  // Say quit (a polite child answers bye and exits); one that does not is killed.
  async close() {
    try { await this.ask({ type: "quit" }, 2000); } catch { /* it is gone or stuck: killed below */ }
    this.child.stdin.end();
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once("exit", resolve));
      const timer = setTimeout(() => this.child.kill("SIGKILL"), 2000);
      await exited;
      clearTimeout(timer);
    }
  }
}

// One deal: the referee's requests go to the bot, the bot's actions back to the referee. On the first
// request, a bot that can give probabilities is asked for them too, and they are checked.
async function playDeal(referee, bot, variant, seed, wantProbabilities) {
  let msg = await referee.ask({ type: "new", variant, seed });
  let first = true;
  while (msg.type === "turn") {
    const request = first && wantProbabilities ? { ...msg.request, want: ["probabilities"] } : msg.request;
    const answer = await bot.ask(request);
    if (answer.type === "error") {
      throw new Error(`the bot answered request ${request.id} with an error: ${answer.error}`);
    }
    if (answer.type !== "action" || answer.id !== request.id || typeof answer.action !== "string") {
      throw new Error(`the bot answered ${JSON.stringify(answer)} to request ${request.id}`);
    }
    if (request.want) checkProbabilities(answer);
    msg = await referee.ask({ type: "apply", action: answer.action });
    first = false;
  }
  if (msg.type !== "over") throw new Error(`the referee said ${JSON.stringify(msg)}`);
  return msg.payoffs;
}

// The probabilities map each legal action to its chance; they sum to 1 (each is rounded to 6 decimals).
function checkProbabilities(answer) {
  const p = answer.probabilities;
  if (typeof p !== "object" || p === null || !(answer.action in p)) {
    throw new Error(`the bot's probabilities do not cover its action: ${JSON.stringify(answer)}`);
  }
  const sum = Object.values(p).reduce((s, x) => s + x, 0);
  if (Math.abs(sum - 1) > 1e-3) throw new Error(`the bot's probabilities sum to ${sum}, not 1`);
}

async function main() {
  const { values: a } = parseArgs({
    options: {
      bot: { type: "string", default: "tarocchi-rl bot --agent heuristic" },
      referee: { type: "string", default: "tarocchi-rl referee" },
      variants: { type: "string" }, // default: the variants the bot's hello lists
      deals: { type: "string", default: "2" },
      seed: { type: "string", default: "0" },
      timeout: { type: "string", default: "30" }, // seconds per request
    },
  });
  const [deals, seed, timeoutMs] = [Number(a.deals), Number(a.seed), Number(a.timeout) * 1000];
  const referee = new Peer(a.referee, timeoutMs), bot = new Peer(a.bot, timeoutMs);
  let status = 0;
  try {
    const hello = await bot.ask({ type: "hello", id: 0, protocol: PROTOCOL });
    if (hello.protocol !== PROTOCOL) throw new Error(`the bot does not speak ${PROTOCOL}: ${JSON.stringify(hello)}`);
    const capabilities = hello.capabilities ?? [];
    console.log(`bot: ${hello.name} (capabilities: ${capabilities.join(", ")})`);
    const variants = a.variants ? a.variants.split(",") : hello.variants;
    if (!Array.isArray(variants) || !variants.length) throw new Error("the bot's hello lists no variants: name them with --variants");
    for (const variant of variants) {
      for (let k = 0; k < deals; k++) {
        const payoffs = await playDeal(referee, bot, variant, seed + k, capabilities.includes("probabilities"));
        console.log(`${variant} deal ${seed + k}: payoffs [${payoffs.join(", ")}]`);
      }
    }
  } catch (e) {
    console.error(`error: ${e.message}`);
    status = 1;
  } finally {
    await Promise.all([bot.close(), referee.close()]);
  }
  process.exit(status);
}

main().catch((e) => { console.error(`error: ${e.message}`); process.exit(1); });
