// Duplicate challenges on the page of `tarocchi-rl serve` (loaded after app.js, whose table it uses): the server's
// challenges (GET /v1/challenges), each a fixed list of deals played at one seat against fixed bots; the challenged
// bot played the same deals from the same seat offline. A deal is started with {type: "challenge", name, deal,
// player} over /ws; after it the page shows "you X, bot Y" for that deal and the totals so far. The player token the
// server gives (challenge.player in its answers: who one person is for games stats) and the results of the first
// play of each deal are kept in localStorage (no accounts).
"use strict";

const PLAYER_KEY = "tarocchi-player";          // the player token the server gave (sent as player)
const RESULTS_KEY = "tarocchi-challenge:";     // + the challenge's key -> {deal: {you, bot}}

const challenges = { list: [], byName: {}, current: null };

function playerId() {
  try {
    const id = localStorage.getItem(PLAYER_KEY);
    return id && /^[A-Za-z0-9_-]{8,40}$/.test(id) ? id : undefined;  // none yet: the server gives one
  } catch (e) {
    return undefined;  // storage off: the connection keeps the token the server gives it
  }
}

function keepPlayer(token) {
  try { if (localStorage.getItem(PLAYER_KEY) !== token) localStorage.setItem(PLAYER_KEY, token); } catch (e) { /* off */ }
}

function savedResults(ch) {
  try {
    const got = JSON.parse(localStorage.getItem(RESULTS_KEY + ch.key) || "{}");
    return got && typeof got === "object" ? got : {};
  } catch (e) {
    return {};
  }
}

function saveResult(ch, deal, you, bot) {
  const results = savedResults(ch);
  if (results[deal]) return results;  // the first play of a deal counts (as in games stats)
  results[deal] = { you, bot };
  try { localStorage.setItem(RESULTS_KEY + ch.key, JSON.stringify(results)); } catch (e) { /* storage off */ }
  return results;
}

function totals(ch, results) {
  let you = 0, bot = 0, played = 0;
  for (let k = 0; k < ch.deals; k++) {
    if (!results[k]) continue;
    you += results[k].you;
    bot += results[k].bot;
    played += 1;
  }
  return { you, bot, played };
}

function signed(x) {
  return x > 0 ? `+${x}` : String(x);
}

function nextDeal(ch, results) {
  for (let k = 0; k < ch.deals; k++) if (!results[k]) return k;
  return null;
}

// -- the section --------------------------------------------------------------------------------------------------
function challengeSection() {
  let box = $("challenges");
  if (box) return box;
  box = el("section", { id: "challenges", "data-testid": "challenges", "aria-labelledby": "challenges-title" },
    el("h2", { id: "challenges-title", text: "Challenges" }),
    el("p", { text: "The same deals for everyone: play them from your seat, then see how the bot did on the same " +
      "cards from the same seat against the same opponents." }),
    el("ul", { id: "challenge-list", "data-testid": "challenge-list" }));
  const after = $("friends") || $("setup");
  after.after(box);
  return box;
}

function renderChallenges() {
  const list = $("challenge-list");
  list.textContent = "";
  for (const ch of challenges.list) {
    const results = savedResults(ch);
    const t = totals(ch, results);
    const next = nextDeal(ch, results);
    const against = ch.players.filter((p, k) => k !== ch.seat).join(", ");
    const select = el("select", { id: `challenge-deal-${ch.name}`, "data-testid": `challenge-deal-${ch.name}`,
      "aria-label": `deal of ${ch.name}` });
    for (let k = 0; k < ch.deals; k++) {
      const r = results[k];
      select.append(el("option", { value: k, selected: k === (next ?? 0) ? true : null,
        text: `deal ${k + 1}${r ? ` (you ${r.you}, bot ${r.bot})` : ""}` }));
    }
    const score = t.played ? `${t.played} of ${ch.deals} played: you ${t.you}, bot ${t.bot} (${signed(t.you - t.bot)})`
      : "not played yet";
    list.append(el("li", { "data-name": ch.name, "data-played": t.played },
      el("strong", { text: ch.name }),
      ` — ${ch.variant}, ${ch.deals} deals, you at seat ${ch.seat} against ${against}; the bot: ${ch.bot}. `,
      el("span", { class: "challenge-score", "data-testid": `challenge-score-${ch.name}`, text: score }), " ",
      select,
      el("button", { type: "button", "data-testid": `challenge-play-${ch.name}`, text: "Play",
        onclick: () => startChallenge(ch, Number(select.value)) })));
  }
  if (!challenges.list.length) list.append(el("li", { class: "none", text: "this server offers no challenge" }));
}

// -- playing --------------------------------------------------------------------------------------------------------
function startChallenge(ch, deal) {
  leaveShared();
  app.seed = null;
  app.practice = false;
  app.seats = ch.players;
  app.mySeat = ch.seat;
  app.table = null;
  app.record = null;
  $("moves").textContent = "";
  $("result").hidden = true;
  $("result").textContent = "";
  $("game").hidden = false;
  showError("");
  challenges.current = { name: ch.name, deal };
  const msg = { type: "challenge", name: ch.name, deal };
  const player = playerId();
  if (player) msg.player = player;
  send(msg);
}

// app.js calls this with every state and over message: at the end of a challenge's deal, the two scores
function challengeMessage(msg) {
  const info = msg.challenge;
  if (info && info.player) keepPlayer(info.player);
  if (!info || msg.type !== "over") return;
  const ch = challenges.byName[info.name];
  const box = $("result");
  if (info.error || info.you === undefined) {
    box.prepend(el("p", { "data-testid": "challenge-result", text: info.error || "the bot's result is missing" }));
    return;
  }
  const results = ch ? saveResult(ch, info.deal, info.you, info.bot_payoff) : {};
  const line = el("p", { class: "challenge-result", "data-testid": "challenge-result", "data-you": info.you,
    "data-bot": info.bot_payoff, "data-deal": info.deal },
    `${info.name}, deal ${info.deal + 1} of ${info.deals}: you ${info.you}, bot ${info.bot_payoff} ` +
    `(${signed(info.difference)}) on the same cards from seat ${info.seat}` +
    (info.counted === false ? ` (not counted: ${info.why})` : ""));
  const parts = [line];
  if (ch) {
    const t = totals(ch, results);
    const done = t.played === ch.deals;
    parts.push(el("p", { "data-testid": "challenge-totals", "data-you": t.you, "data-bot": t.bot,
      "data-played": t.played, "data-done": String(done),
      text: `${done ? "Challenge done" : "So far"} (${t.played} of ${ch.deals} deals): you ${t.you}, ` +
        `bot ${t.bot} (${signed(t.you - t.bot)})` }));
    const next = nextDeal(ch, results);
    if (next !== null) {
      parts.push(el("button", { type: "button", "data-testid": "challenge-next", text: `Play deal ${next + 1}`,
        onclick: () => startChallenge(ch, next) }));
    }
    if (info.bot_record) {
      parts.push(el("button", { type: "button", "data-testid": "challenge-bot-replay", text: "Replay the bot's deal",
        onclick: () => { setMode("replay"); loadReplay(info.bot_record); } }));
    }
  }
  box.prepend(el("div", { class: "challenge-outcome", "data-testid": "challenge-outcome" }, ...parts));
  renderChallenges();
}

async function initChallenges() {
  challengeSection();
  try {
    const got = await getJSON("/v1/challenges");
    challenges.list = got.challenges;
    challenges.byName = Object.fromEntries(got.challenges.map((c) => [c.name, c]));
    renderChallenges();
  } catch (e) {
    $("challenge-list").textContent = `the challenges could not be read: ${e.message}`;
  }
}

document.addEventListener("DOMContentLoaded", initChallenges);
