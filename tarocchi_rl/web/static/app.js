// The page of `tarocchi-rl serve`: play a deal over the /ws WebSocket, replay records with POST /v1/replay.
// Plain JavaScript, no build step, no external resources. Hooks for automation: data-testid on every control,
// data-action on every legal move, data-phase / data-to-act / data-your-turn on the status element, the
// payoffs as data attributes of the result. One card table (renderTable) draws the play view and the replay view.
// Tables for several people: friends.js; challenges: challenge.js (their own view). Seeds are kept as strings
// (JavaScript numbers round above 2**53): the server names a deal's seed only with its result; a seed typed here
// makes a practice deal. A deal against bots is kept for a reload: its code and token (the server's first answer)
// in the tab's sessionStorage, sent back as `resume`. Hints follow the device: taps on a touch screen, keys else.
"use strict";

const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") e.textContent = v;
    else if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
};

const app = {
  variants: {},      // name -> /v1/variants entry
  bots: [],          // /v1/bots
  defaultBot: "heuristic",
  defaultSeats: null,
  ws: null,
  queue: [],         // messages waiting for the socket to open
  busy: false,
  lastSent: null,    // the last message sent and how often it was sent again (a busy server: retried)
  table: null,       // the last snapshot
  seats: [],         // names per seat
  legal: [],         // the legal moves shown, in order
  selected: -1,
  record: null,
  seed: null,        // a string: typed (a practice deal) or from the result; null while the server keeps it
  practice: false,
  replay: null,      // {steps, index, result, bottom}
  showLast: false,   // the middle of the table shows the last trick (its button, the key L)
  mySeat: null,      // the page's seat at the table
  shared: null,      // a table for several people (friends.js): {code, seat, token, people, started, over, ...}
  own: null,         // a deal against bots that a reload takes back: {code, token, seed, practice, tries}
  touch: false,      // hints for a touch screen (taps) rather than keys
  mode: "play",
};
const DEAL_KEY = "tarocchi-deal";  // sessionStorage: this tab's deal against bots {code, token, seed, practice}
const VIEWS = ["play", "challenges", "replay"];
const DEAL_MESSAGES = new Set(["start", "open", "join", "challenge", "resume"]);  // a message that seats the page

// -- cards -----------------------------------------------------------------------------------------------
// each suit pattern's symbols and colour classes, by suit letter (a variant's suit_system; the server names the
// cards: its card_labels)
const SUIT_SYMBOLS = {
  french: { S: ["♠", "black"], H: ["♥", "red"], D: ["♦", "red"], C: ["♣", "black"] },
  italian: { C: ["☕", "coppe"], D: ["◉", "denari"], S: ["⚔", "spade"], B: ["♧", "bastoni"] },
};

// the card in words, as the server names it for the variant ("King of Hearts", "Trump 1 (Pagat)")
function cardLabel(name, variant) {
  const v = app.variants[variant];
  if (v && !v.labelOf) v.labelOf = Object.fromEntries(v.cards.map((c, k) => [c, v.card_labels[k]]));
  return (v && v.labelOf[name]) || name;
}

function cardInfo(name, variant) {
  const label = cardLabel(name, variant);
  if (name === "EX") return { rank: "EX", sym: "☆", suit: "fool", label };
  if (/^T\d+$/.test(name)) return { rank: name.slice(1), sym: "✦", suit: "trump", label };
  const v = app.variants[variant];
  const [sym, colour] = ((v && SUIT_SYMBOLS[v.suit_system]) || {})[name.slice(-1)] || ["?", "black"];
  return { rank: name.slice(0, -1), sym, suit: colour, label };
}

// a card face: the corner (rank over suit, what shows of a card overlapped by the next) and a big pip; extra.mini:
// a small card (rank and suit only), extra.button: a button (the hand), extra.attrs: more attributes
function cardEl(name, variant, extra = {}) {
  const info = cardInfo(name, variant);
  const tag = extra.button ? "button" : "span";
  const attrs = { class: `card suit-${info.suit}${extra.mini ? " mini" : ""}`, "data-card": name, title: info.label };
  if (extra.button) {
    attrs.type = "button";
  } else {
    attrs.role = "img";
    attrs["aria-label"] = info.label;
  }
  for (const [k, v] of Object.entries(extra.attrs || {})) attrs[k] = v;
  const corner = el("span", { class: "corner", "aria-hidden": "true" }, el("span", { class: "rank", text: info.rank }),
    info.suit === "fool" ? null : el("span", { class: "sym", text: info.sym }));
  if (extra.mini) return el(tag, attrs, corner);
  return el(tag, attrs, corner, el("span", { class: "pip", "aria-hidden": "true",
    text: info.suit === "trump" ? info.rank : info.sym }));
}

function cardsEl(cards, variant, testid, mini = false) {
  const box = el("span", { class: `cards${mini ? " mini-cards" : ""}`, "data-testid": testid, "data-cards": (cards || []).join(",") });
  for (const c of cards || []) box.append(cardEl(c, variant, { mini }));
  if (!cards || !cards.length) box.append(el("span", { class: "none", text: "—" }));
  return box;
}

// a seat in the move list: "seat 2 (heuristic)", "seat 1 (you)", "seat 2 (a person)"; a move a bot played for a
// person who was away (by: replacement, bot: its name): "seat 2 (heuristic for a person)"
function seatName(seat, move) {
  const who = app.mode === "replay" ? null : app.seats[seat];
  const person = seat === app.mySeat ? "you" : "a person";
  if (move && move.by === "replacement") return `seat ${seat} (${move.bot || "a bot"} for ${person})`;
  if (who === "human") return `seat ${seat} (${person})`;
  return who ? `seat ${seat} (${who})` : `seat ${seat}`;
}

// an action in words: "bid solo three", "talon 0"; an action naming a card adds its label ("call KH (King of Hearts)")
function actionText(action) {
  return action.replace(":", " ").replace(/_/g, " ");
}

function actionLabel(action, variant) {
  const [kind, arg] = action.split(/:(.*)/s);
  if (kind === "discard" && (!arg || arg === "?")) return "discard a card face down";
  const label = arg ? cardLabel(arg, variant) : arg;
  return label && label !== arg ? `${kind} ${arg} (${label})` : actionText(action);
}

// -- server --------------------------------------------------------------------------------------------------
async function getJSON(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: ${r.status}`);
  return r.json();
}

function setConnection(state, text) {
  const c = $("connection");
  c.dataset.state = state;
  c.textContent = text;
}

function connect() {
  if (app.ws && (app.ws.readyState === WebSocket.OPEN || app.ws.readyState === WebSocket.CONNECTING)) return app.ws;
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  app.ws = ws;
  setConnection("connecting", "connecting…");
  ws.addEventListener("open", () => {
    setConnection("open", "connected");
    for (const m of app.queue.splice(0)) ws.send(m);
  });
  ws.addEventListener("message", (ev) => onMessage(JSON.parse(ev.data)));
  ws.addEventListener("close", (ev) => {
    if (app.ws !== ws) return;  // a connection the page left (another table): no concern of the page
    app.ws = null;
    if (app.busy) setBusy(false);
    if (sharedClosed()) return;  // a table for several people: the seat is taken back with its token
    if (ownClosed(ev.code)) return;  // a deal against bots: taken back with its token
    const why = { 4000: "table closed (idle): deal again", 4001: "table closed (open too long): deal again",
      1013: "the server is full: try again later", 4002: "this deal goes on in another tab (or page)" }[ev.code];
    setConnection("closed", why || "not connected");
  });
  ws.addEventListener("error", () => showError("the connection to the server failed"));
  return ws;
}

const MAX_RETRIES = 3;  // a move refused as busy (the deal unchanged) is sent again after Retry-After, this often

function send(msg, retry = 0) {
  if (DEAL_MESSAGES.has(msg.type) && retry === 0) {  // the table comes first: the setup folds away
    setMode("play");
    $("setup-panel").open = false;
  }
  const text = JSON.stringify(msg);
  app.lastSent = { msg, retry };
  const ws = connect();
  if (ws.readyState === WebSocket.OPEN) ws.send(text);
  else app.queue.push(text);
  setBusy(true);
}

function setBusy(b, render = true) {
  app.busy = b;
  $("status").dataset.busy = String(b);
  for (const id of ["start", "open-table", "join"]) $(id).disabled = b;
  for (const b2 of document.querySelectorAll("#hand button, #actions button")) {
    if (b) b2.disabled = true;
  }
  if (!b && render && app.table) renderDecisions(app.table);
}

function showError(text) {
  $("error").textContent = text || "";
  $("error").dataset.error = text ? "true" : "false";
}

function onMessage(msg) {
  if (sharedMessage(msg)) return;  // joined, people: friends.js
  setBusy(false, false);
  if (msg.type === "error" && msg.busy && app.lastSent && app.lastSent.retry < MAX_RETRIES) {
    const again = app.lastSent;
    const seconds = Math.min(Number(msg.retry_after) || 1, 30);
    showError(`the server is busy: trying again in ${seconds} s`);
    setBusy(true);
    setTimeout(() => send(again.msg, again.retry + 1), seconds * 1000);
    return;
  }
  if (msg.type === "error") {
    if (app.own && app.own.resuming) return resumeFailed(msg.error);
    showError(msg.error);
    if (msg.fatal) { app.table = null; $("status").dataset.over = "true"; forgetDeal(); }
    if (app.table) renderDecisions(app.table);
    return;
  }
  if (msg.type === "pong") {
    if (app.table) renderDecisions(app.table);
    return;
  }
  showError("");
  if (msg.seed !== undefined) app.seed = String(msg.seed);
  if (msg.practice !== undefined) app.practice = !!msg.practice;
  if (msg.resume) keepDeal(msg.resume);
  if (msg.resumed) resumed(msg);
  if (msg.type === "over") forgetDeal();
  addMoves(msg.moves || [], msg.table.variant);
  renderGame(msg.table);
  if (msg.type === "over") renderResult($("result"), msg, msg.table.variant, true);
  if (msg.challenge && typeof challengeMessage === "function") challengeMessage(msg);  // challenge.js
}

// -- a deal against bots taken back after a reload or a dropped connection (the server keeps it --seat-grace s) ----
const RESUME_TRIES = 4;  // a dropped connection asks for its deal back this often (1 s, then twice as long each time)

function keepDeal(resume) {
  app.own = { code: resume.code, token: resume.token, seed: app.seed, practice: app.practice, tries: 0 };
  try {
    sessionStorage.setItem(DEAL_KEY, JSON.stringify({ code: resume.code, token: resume.token, seed: app.seed,
      practice: app.practice }));
  } catch (e) { /* storage off: a reload starts afresh */ }
}

function forgetDeal() {
  app.own = null;
  try { sessionStorage.removeItem(DEAL_KEY); } catch (e) { /* storage off */ }
}

function savedDeal() {
  try {
    const got = JSON.parse(sessionStorage.getItem(DEAL_KEY) || "null");
    return got && typeof got.code === "string" && typeof got.token === "string" ? got : null;
  } catch (e) {
    return null;
  }
}

// the page reloaded: the tab's deal asked back
function resumeDeal(saved) {
  app.own = { ...saved, tries: 0, resuming: true };
  app.seed = typeof saved.seed === "string" ? saved.seed : null;
  app.practice = !!saved.practice;
  app.table = null;
  app.record = null;
  $("moves").textContent = "";
  $("result").hidden = true;
  $("game").hidden = false;
  $("status").textContent = "taking your deal back…";
  send({ type: "resume", code: saved.code, token: saved.token });
}

function resumed(msg) {
  const t = msg.table;
  app.own = { ...(app.own || {}), resuming: false, tries: 0 };
  app.seats = t.seats.map((s) => s.player);
  app.mySeat = t.seat;
  app.showLast = false;
  $("result").hidden = true;
  $("result").textContent = "";
  setConnection("open", "connected");
}

function resumeFailed(error) {
  forgetDeal();
  app.table = null;
  $("game").hidden = true;
  $("setup-panel").open = true;
  showError(`your last deal could not be taken back (${error}): deal again`);
}

// the connection of a deal against bots closed: ask for the deal back unless it is over or closed for good
function ownClosed(code) {
  const own = app.own;
  if (!own || app.shared || !app.table || app.table.over || [4000, 4001, 4002, 1013].includes(code) ||
      own.tries >= RESUME_TRIES) return false;
  const delay = 1000 * 2 ** own.tries;
  own.tries += 1;
  setConnection("connecting", `connection lost: taking your deal back in ${Math.round(delay / 1000)} s…`);
  setTimeout(() => {
    if (app.own !== own || app.ws) return;
    own.resuming = true;
    send({ type: "resume", code: own.code, token: own.token });
  }, delay);
  return true;
}

// -- setup ----------------------------------------------------------------------------------------------------
function buildVariantSelect() {
  const sel = $("variant");
  sel.textContent = "";
  for (const v of Object.values(app.variants)) sel.append(el("option", { value: v.name, text: `${v.name} — ${v.long_name}` }));
  sel.addEventListener("change", buildVariantForm);
  buildVariantForm();
}

function buildVariantForm() {
  const v = app.variants[$("variant").value];
  $("variant-name").textContent = `${v.players} players`;
  const opts = $("options");
  opts.replaceChildren(el("legend", { text: "Options" }));
  if (!v.options.length) opts.append(el("span", { text: "none" }));
  for (const o of v.options) {
    const id = `opt-${o.name}`;
    let input;
    if (o.type === "boolean") {
      input = el("input", { type: "checkbox", id, "data-testid": `option-${o.name}`, "data-option": o.name,
        "data-type": o.type, checked: o.default ? true : null });
    } else if (o.choices) {
      input = el("select", { id, "data-testid": `option-${o.name}`, "data-option": o.name, "data-type": o.type });
      for (const c of o.choices) input.append(el("option", { value: c, text: c, selected: c === o.default ? true : null }));
    } else {
      input = el("input", { type: o.type === "integer" ? "number" : "text", id, "data-testid": `option-${o.name}`,
        "data-option": o.name, "data-type": o.type, value: o.default, min: o.minimum, max: o.maximum });
    }
    opts.append(el("span", { class: "option" }, el("label", { for: id, text: o.name.replace(/_/g, " ") }), input));
  }
  const human = $("human-seat");
  human.textContent = "";
  const defaults = app.defaultSeats && app.defaultSeats.length === v.players ? app.defaultSeats : null;
  const humanAt = defaults ? defaults.indexOf("human") : 0;
  for (let k = 0; k < v.players; k++) human.append(el("option", { value: k, text: `seat ${k}`, selected: k === humanAt ? true : null }));
  human.onchange = buildSeatBots;
  buildSeatBots(defaults);
}

function buildSeatBots(defaults) {
  const v = app.variants[$("variant").value];
  const humanAt = Number($("human-seat").value);
  const box = $("seat-bots");
  const previous = {};
  for (const s of box.querySelectorAll("select")) previous[s.dataset.seat] = s.value;
  box.textContent = "";
  for (let k = 0; k < v.players; k++) {
    if (k === humanAt) continue;
    const id = `seat-bot-${k}`;
    const sel = el("select", { id, "data-testid": id, "data-seat": k });
    const want = (Array.isArray(defaults) && defaults[k] !== "human" && defaults[k]) || previous[k] || app.defaultBot;
    for (const b of botsFor(v.name)) {
      sel.append(el("option", { value: b.name, text: botText(b), selected: b.name === want ? true : null }));
    }
    box.append(el("span", { class: "seat-bot" }, el("label", { for: id, text: `seat ${k}` }), sel));
  }
}

// the server's bots that play a variant (the built-in ones play every variant, a trained bot its own)
function botsFor(variant) {
  return app.bots.filter((b) => !b.variants || b.variants.includes(variant));
}

function botText(b) {
  if (/^bot:/.test(b.name)) return `${b.name} (trained)`;
  return /^strong:/.test(b.name) ? `${b.name} (trained + search)` : b.name;
}

// ?variant=NAME in the address picks the variant of the form; a name the server does not play says so
function variantFromAddress() {
  const want = new URLSearchParams(location.search).get("variant");
  if (want === null) return;
  if (Object.prototype.hasOwnProperty.call(app.variants, want)) {
    $("variant").value = want;
    buildVariantForm();
  } else {
    showError(`unknown variant "${want.slice(0, 40)}" in the address (?variant=): this server plays ` +
      `${Object.keys(app.variants).join(", ")}`);
  }
}

function readSetup() {
  const v = app.variants[$("variant").value];
  const options = {};
  for (const input of $("options").querySelectorAll("[data-option]")) {
    const t = input.dataset.type;
    options[input.dataset.option] = t === "boolean" ? input.checked : t === "integer" ? Number(input.value) : input.value;
  }
  const humanAt = Number($("human-seat").value);
  const seats = [];
  for (let k = 0; k < v.players; k++) seats.push(k === humanAt ? "human" : $(`seat-bot-${k}`).value);
  const msg = { type: "start", variant: v.name, options, seats };
  const seed = $("seed").value.trim();
  if (seed !== "") msg.seed = seed;  // the digits as a string: never rounded
  return msg;
}

function startDeal(ev) {
  if (ev) ev.preventDefault();
  const msg = readSetup();
  if (msg.seed !== undefined && !/^[0-9]{1,20}$/.test(msg.seed)) {
    showError("seed: digits only (or leave it empty)");
    return;
  }
  app.seed = msg.seed === undefined ? null : msg.seed;
  app.practice = msg.seed !== undefined;
  leaveShared();
  app.seats = msg.seats;
  app.mySeat = msg.seats.indexOf("human");
  app.showLast = false;
  app.table = null;
  app.record = null;
  $("moves").textContent = "";
  $("result").hidden = true;
  $("result").textContent = "";
  $("game").hidden = false;
  showError("");
  send(msg);
}

// -- the table ----------------------------------------------------------------------------------------------------
function phaseText(t) {
  if (t.over) return "the deal is over";
  if (t.forced) return `${t.phase}: your only legal move, ${actionText(t.forced)}, is played for you`;
  const who = t.to_act === t.seat ? "your turn" : `${seatName(t.to_act)} to act`;
  return `${t.phase}: ${who}`;
}

function renderGame(t) {
  app.table = t;
  const st = $("status");
  Object.assign(st.dataset, { phase: t.phase, toAct: t.to_act, yourTurn: t.your_turn, over: t.over,
    steps: t.steps, variant: t.variant, seat: t.seat, seed: app.seed ?? "", practice: app.practice,
    legal: t.legal.length, forced: t.forced || "" });
  const seed = app.seed === null ? "" : `, seed ${app.seed}`;
  st.dataset.code = app.shared ? app.shared.code : "";
  const where = app.shared ? `table ${app.shared.code}, ` : "";
  st.textContent = `${where}${t.variant}${seed}${app.practice ? " (practice)" : ""} — ${phaseText(t)}`;
  renderTable($("board"), t, { bottom: t.seat, notes: $("table-notes") });
  renderHand(t);
  renderDecisions(t);
}

// who sits at seat s as the board says it: a bot's name; at a table for several people, another seat of a person
// is "a person" ("away, bot B plays" while its bot plays it)
function playerText(t, s) {
  const seat = t.seats[s];
  if (seat.player !== "human" || !app.shared || s === t.seat) return seat.player || "";
  return seat.replaced_by ? `a person (away, bot ${seat.replaced_by} plays)` : "a person";
}

// -- the card table: one component for the play view and the replay view ----------------------------------------
// The seats around a green table, counter-clockwise in the order of play from the seat at the bottom (the page's
// person, or the replay's chosen seat); the trick in the middle, each card towards the seat that played it; the
// auction and the contract in a strip above; the last trick on demand (its button or the key L).
const POSITIONS = { 3: ["bottom", "right", "left"], 4: ["bottom", "right", "top", "left"] };
const BIDDING_PHASES = new Set(["early", "auction", "bid"]);

function seatPosition(t, bottom, s) {
  return (POSITIONS[t.players] || POSITIONS[4])[(s - bottom + t.players) % t.players];
}

// the seat's name on the table: "you", the bot's name, "a person"; a replay names seats only
function seatTitle(t, s, live) {
  if (!live) return `seat ${s}`;
  if (s === t.seat) return "you";
  return playerText(t, s) || `seat ${s}`;
}

function bidText(action) {
  return actionText(action.replace(/^bid:/, ""));
}

// a seat in a sentence: "you", "seat 2", "heuristic (seat 2)"
function seatLabel(t, s, live) {
  const title = seatTitle(t, s, live);
  return title === "you" || title === `seat ${s}` ? title : `${title} (seat ${s})`;
}

// the seat's roles shown as markers: declarer (taker, dealer), partner when public
function seatRoles(t, s) {
  const roles = [];
  if (t.declarer === s) roles.push(t.declarer_role);
  const side = t.sides && t.declarer !== null ? t.sides.find((x) => x.includes(t.declarer)) : null;
  if (t.partner === s || (t.declarer !== s && side && side.length > 1 && side.includes(s))) roles.push("partner");
  return roles;
}

function backsEl(count, testid) {
  const box = el("span", { class: "backs", "data-testid": testid, "data-count": count, role: "img",
    "aria-label": `${count} card${count === 1 ? "" : "s"} face down` });
  for (let k = 0; k < Math.min(count, 5); k++) box.append(el("span", { class: "card back", "aria-hidden": "true" }));
  box.append(el("span", { class: "count", "aria-hidden": "true", text: String(count) }));
  return box;
}

function seatPlate(t, s, opts) {
  const { prefix, bottom, live, hands } = opts;
  const pos = seatPosition(t, bottom, s);
  const count = t.hand_counts ? t.hand_counts[s] : hands ? hands[s].length : 0;
  const plate = el("div", { class: `seat-plate pos-${pos}${t.to_act === s && !t.over ? " to-act" : ""}`,
    "data-testid": `${prefix}seat-${s}`, "data-seat": s, "data-pos": pos, "data-player": t.seats[s].player,
    "data-to-act": t.to_act === s, "data-tricks": t.tricks_won[s], "data-points": t.card_points[s],
    "data-count": count });
  const title = seatTitle(t, s, live);
  plate.append(el("div", { class: "who" }, el("strong", { text: title }),
    title === `seat ${s}` ? null : el("span", { class: "seat-no", text: ` seat ${s}` })));
  const markers = el("div", { class: "markers" });
  for (const r of seatRoles(t, s)) markers.append(el("span", { class: `marker ${r === "partner" ? "partner" : "declarer"}`, text: r }));
  if (t.to_act === s && !t.over) markers.append(el("span", { class: "marker acting", text: "to act" }));
  plate.append(markers);
  if (hands && pos !== "bottom") plate.append(cardsEl(hands[s], t.variant, `${prefix}hand-${s}`, true));
  else if (!hands && s !== t.seat) plate.append(backsEl(count, `${prefix}backs-${s}`));
  plate.append(el("div", { class: "score", text: `${t.tricks_won[s]} trick${t.tricks_won[s] === 1 ? "" : "s"} · ${fmt(t.card_points[s])} pts` }));
  return plate;
}

function placedCard(c, t, bottom, winner) {
  return el("figure", { class: `placed pos-${seatPosition(t, bottom, c.seat)}${c.seat === winner ? " winner" : ""}`,
    "data-seat": c.seat, "data-card": c.card }, cardEl(c.card, t.variant));
}

// the middle of the table: the last trick (shown on demand), the trick being played, or the stock
function tableCentre(t, opts) {
  const { prefix, bottom, live } = opts;
  const centre = el("div", { class: "centre", "data-testid": `${prefix}trick` });
  const lt = t.last_trick;
  const caption = el("p", { class: "caption", "data-testid": `${prefix}trick-caption` });
  if (app.showLast && lt) {
    centre.dataset.showing = "last";
    centre.dataset.winner = lt.winner;
    for (const c of lt.cards) centre.append(placedCard(c, t, bottom, lt.winner));
    caption.append(el("span", { "data-testid": `${prefix}last-trick-winner`, "data-winner": lt.winner,
      text: `last trick, won by ${seatLabel(t, lt.winner, live)}` }));
  } else if (t.trick) {
    centre.dataset.showing = "trick";
    for (const c of t.trick.cards) centre.append(placedCard(c, t, bottom, null));
    const leader = seatLabel(t, t.trick.leader, live);
    caption.textContent = `trick ${t.trick.number + 1}${t.trick.cards.length ? "" : `: ${leader} lead${leader === "you" ? "" : "s"}`}`;
  } else {
    centre.dataset.showing = "stock";
    const size = (app.variants[t.variant] || {}).stock_size || 0;
    if (t.stock && t.stock.length) centre.append(cardsEl(t.stock, t.variant, `${prefix}stock`, true));
    else if (size && !t.over) centre.append(backsEl(size, `${prefix}stock`));
    caption.textContent = t.over ? "the deal is over" : BIDDING_PHASES.has(t.phase) ? "the auction" : t.phase;
  }
  return [centre, caption];
}

// the auction and the contract at a glance: each seat's last bid, the contract, the declarer, the called card
function auctionStrip(t, opts) {
  const { prefix, live } = opts;
  const strip = el("div", { class: "strip", "data-testid": `${prefix}auction-strip` });
  const last = {};
  // each seat's last bid (a king call or a talon set taken in the bidding phase does not hide it)
  for (const a of t.auction) if (a.action.startsWith("bid:") || !(a.seat in last)) last[a.seat] = a.action;
  const bidding = BIDDING_PHASES.has(t.phase);
  for (let s = 0; s < t.players; s++) {
    const bid = last[s];
    strip.append(el("span", { class: `chip bid${bidding && t.to_act === s ? " to-act" : ""}`, "data-seat": s,
      "data-bid": bid ?? "" }, el("b", { text: s === t.seat ? "you" : `seat ${s}` }), ` ${bid === undefined ? "—" : bidText(bid)}`));
  }
  strip.append(el("span", { class: "chip contract", "data-testid": `${prefix}contract`, "data-contract": t.contract ?? "",
    "data-declarer": t.declarer ?? "", text: t.declarer === null ? `contract: ${t.contract || "not yet"}` :
      `${t.contract || "contract"}: ${t.declarer_role} ${seatLabel(t, t.declarer, live)}` }));
  if (t.called) strip.append(el("span", { class: "chip called" }, "called ", cardEl(t.called, t.variant, { mini: true })));
  if (t.partner !== null && t.partner !== undefined) strip.append(el("span", { class: "chip", "data-testid": `${prefix}partner`,
    text: `partner: ${seatLabel(t, t.partner, live)}` }));
  return strip;
}

// what else is public: the stock once shown, what the declarer took and discarded, cards shown, the sides, the
// whole auction
function tableNotes(t, opts) {
  const { prefix, live } = opts;
  const v = t.variant;
  const notes = el("div", { class: "notes", "data-testid": `${prefix}info` });
  const add = (term, ...def) => notes.append(el("div", { class: "note" }, el("span", { class: "term", text: term }), ...def));
  if (t.trick && t.stock && t.stock.length) add(t.stock_shown ? "stock (shown)" : "stock", cardsEl(t.stock, v, `${prefix}stock`, true));
  if (t.taken && t.taken.length) add("you took", cardsEl(t.taken, v, `${prefix}taken`, true));
  if (t.discard && t.discard.length) add(t.seat === null ? "discard" : "your discard", cardsEl(t.discard, v, `${prefix}discard`, true));
  if (t.shown && t.shown.length) add("shown to all", cardsEl(t.shown, v, `${prefix}shown`, true));  // discarded trumps, klop's talon cards
  for (const sb of t.shown_by) add(`${seatLabel(t, sb.seat, live)} showed`, cardsEl(sb.cards, v, `${prefix}shown-by-${sb.seat}`, true));
  for (const d of t.declarations.filter((d) => d.action !== "pass")) add(d.phase, `${seatLabel(t, d.seat, live)}: ${d.action}`);
  if (t.sides) add("sides", el("span", { "data-testid": `${prefix}sides`, text: t.sides.map((s, k) =>
    `${s.map((q) => seatLabel(t, q, live)).join(" + ")}${t.side_points ? ` (${fmt(t.side_points[k])} pts)` : ""}`).join(" vs ") }));
  const auction = el("ol", { class: "auction", "data-testid": `${prefix}auction` });
  for (const a of t.auction) auction.append(el("li", { "data-seat": a.seat, "data-bid": a.action,
    text: `${a.phase === "early" ? "early round, " : ""}${seatLabel(t, a.seat, live)}: ${bidText(a.action)}` }));
  if (t.auction.length) notes.append(el("details", { class: "note" }, el("summary", { text: "the whole auction" }), auction));
  const end = (app.variants[v] || {}).end_count;
  if (end && t.phase === "play") {  // the seats' points are their tricks' so far: the rest is counted at the end
    notes.append(el("details", { class: "note tally-note", "data-testid": `${prefix}tally-note` },
      el("summary", { text: "pts: the card points of the tricks won so far" }),
      el("span", { text: `counted at the end: ${end}` })));
  }
  return notes;
}

// the table of snapshot t in root: opts {prefix (of the test ids), bottom (the seat at the bottom), live (the play
// view: names and face-down cards; else a replay), hands (a replay: every hand, drawn face up), notes (where the
// notes go: the play view puts them under the hand, so that on a phone the table and the hand share the screen)}
function renderTable(root, t, opts) {
  const o = { prefix: "", live: true, hands: null, ...opts };
  root.textContent = "";
  Object.assign(root.dataset, { players: t.players, bottom: o.bottom, phase: t.phase });
  const felt = el("div", { class: `felt players-${t.players}` });
  for (let s = 0; s < t.players; s++) felt.append(seatPlate(t, s, o));
  felt.append(...tableCentre(t, o));
  felt.append(el("button", { type: "button", class: "last-trick-button", "data-testid": `${o.prefix}last-trick-button`,
    "aria-pressed": String(!!(app.showLast && t.last_trick)), disabled: t.last_trick ? null : true,
    title: app.touch ? "show the last trick" : "show the last trick (key L)", onclick: toggleLastTrick,
    text: lastTrickText(!!(app.showLast && t.last_trick)) }));
  const notes = tableNotes(t, o);
  if (o.notes) o.notes.replaceChildren(notes);
  root.append(auctionStrip(t, o), felt, ...(o.notes ? [] : [notes]));
}

// the last trick on demand: shown in the middle of the table until pressed again (or until the next move)
function toggleLastTrick() {
  const t = app.mode === "replay" ? app.replay && app.replay.steps[app.replay.index].table : app.table;
  app.showLast = !app.showLast && !!(t && t.last_trick);  // before the first trick is over: nothing to show
  if (app.mode === "replay") showStep(app.replay ? app.replay.index : 0);
  else if (app.table) renderTable($("board"), app.table, { bottom: app.table.seat, notes: $("table-notes") });
}

function fmt(x) {
  return Number.isInteger(x) ? String(x) : x.toFixed(2).replace(/0$/, "");
}

function renderHand(t) {
  const hand = $("hand");
  hand.textContent = "";
  hand.dataset.cards = (t.hand || []).join(",");
  for (const c of t.hand || []) {
    hand.append(cardEl(c, t.variant, { button: true, attrs: { "data-testid": `card-${c}`, disabled: true,
      "aria-label": `${cardInfo(c, t.variant).label}` } }));
  }
  layoutHand(hand);
}

// A hand's cards in rows, each card overlapping the one before it at most up to that card's corner (rank and suit),
// so that every card's index shows at every width: as many cards a row as fit so, the rows as even as can be (a
// 390 px phone: an 18-card hand in two rows of 9). A card raised (legal, picked) keeps its place in the stacking
// order: it never covers its neighbour's corner. Laid out again when the window's width changes.
const CORNER_MARGIN = 6;  // px of a card's face shown beyond its corner's right edge (a raised card's outline)

function layoutHand(box) {
  const cards = [...box.querySelectorAll(".card")];
  for (const row of [...box.querySelectorAll(".hand-row")]) row.replaceWith(...row.childNodes);
  delete box.dataset.rows;
  const holder = cards.length ? cards[0].parentElement : null;
  if (!cards.length || !box.clientWidth) return;  // hidden: laid out when shown
  const style = getComputedStyle(box);
  const width = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const cw = cards[0].offsetWidth;
  const corner = Math.max(...cards.map((c) => {
    const k = c.querySelector(".corner");
    return k ? k.offsetLeft + k.offsetWidth : cw / 2;
  })) + CORNER_MARGIN;
  const gap = 4;
  const fit = Math.max(1, Math.floor((width - cw) / Math.min(corner, cw + gap)) + 1);
  const rows = Math.ceil(cards.length / fit);
  const per = Math.ceil(cards.length / rows);
  const step = per > 1 ? Math.min(cw + gap, (width - cw) / (per - 1)) : cw + gap;
  box.style.setProperty("--hand-step", `${Math.floor(step - cw)}px`);
  box.dataset.rows = rows;
  box.dataset.perRow = per;
  for (let k = 0; k < cards.length; k += per) {
    const row = el("div", { class: "hand-row" });
    row.append(...cards.slice(k, k + per));
    holder.append(row);
  }
}

function layoutHands() {
  for (const box of [$("hand"), $("replay-hands")]) layoutHand(box);
}

function renderDecisions(t) {
  const legal = app.busy || !t.your_turn ? [] : t.legal;
  app.legal = legal;
  const actions = $("actions");
  actions.textContent = "";
  $("hand").dataset.turn = String(legal.length > 0);
  for (const b of $("hand").querySelectorAll("button")) {
    b.disabled = true;
    b.classList.remove("legal");
    b.removeAttribute("data-action");
    b.removeAttribute("data-key");
    b.classList.remove("selected");
    b.setAttribute("aria-label", cardInfo(b.dataset.card, t.variant).label);
  }
  const hand = {};
  for (const b of $("hand").querySelectorAll("button")) hand[b.dataset.card] = b;
  legal.forEach((a, k) => {
    const [kind, arg] = a.action.split(/:(.*)/s);
    const key = k < 9 ? String(k + 1) : null;
    let b = (kind === "play" || kind === "discard") ? hand[arg] : null;
    if (b) {
      b.disabled = false;
      b.classList.add("legal");
      b.setAttribute("aria-label", `${kind} ${cardInfo(arg, t.variant).label}${key ? ` (key ${key})` : ""}`);
    } else {
      // a move that takes cards lying face up (tarok's talon sets) names them
      const takes = a.cards && a.cards.length ? a.cards : [];
      const taking = takes.length ? `, taking ${takes.map((c) => cardLabel(c, t.variant)).join(", ")}` : "";
      b = el("button", { type: "button", class: "action", "data-testid": `action-${a.action}`,
        text: `${actionText(a.action)}${takes.length ? `: ${takes.join(" ")}` : ""}`,
        "aria-label": `${actionLabel(a.action, t.variant)}${taking}${key ? ` (key ${key})` : ""}` });
      actions.append(b);
    }
    b.dataset.action = a.action;
    b.dataset.actionId = a.id;
    b.dataset.index = k;
    if (key) b.dataset.key = key;
    b.onclick = () => play(a.action);
  });
  if (t.your_turn && !app.busy) {
    const cards = t.phase === "discard" || t.phase === "play";
    const what = t.phase === "discard" ? `discard ${t.discards_left} more card(s): pick them from your hand` :
      t.phase === "play" ? "play a card" : "your decision";
    actions.prepend(el("p", { class: "hint", "data-testid": "hint", "data-input": app.touch ? "touch" : "keys",
      "data-what": what, "data-cards": String(cards), text: hintText(what, cards) }));
    if (app.touch) app.selected = -1;  // a tap plays: nothing picked in advance
    else select(Math.min(Math.max(app.selected, 0), legal.length - 1));
  } else {
    app.selected = -1;
  }
}

function legalButtons() {
  return app.legal.map((a) => document.querySelector(`#game [data-action="${CSS.escape(a.action)}"]`)).filter(Boolean);
}

function select(k, focus = true) {
  const buttons = legalButtons();
  if (!buttons.length) return;
  k = (k + buttons.length) % buttons.length;
  for (const b of buttons) b.classList.remove("selected");
  app.selected = k;
  buttons[k].classList.add("selected");
  if (focus) buttons[k].focus();
}

function play(action) {
  if (app.busy || !app.table || !app.table.your_turn) return;
  app.selected = -1;
  app.showLast = false;
  send({ type: "act", action });
}

function addMoves(moves, variant) {
  const list = $("moves");
  if (moves.length) {  // a seat taken back sends the deal again from its first move: those shown are replaced
    for (const li of [...list.children]) if (Number(li.dataset.index) >= moves[0].index) li.remove();
  }
  for (const m of moves) {
    const parts = [`${seatName(m.seat, m)}: ${actionLabel(m.action, variant)}`];
    if (m.by === "forced") parts.push("(only legal move)");
    if (m.won_by !== undefined) parts.push(`— ${seatName(m.won_by)} wins the trick`);
    if (m.stock) parts.push(m.card ? `— ${m.stock.join(" ")} from the stock to the trick's winner` :
      `— stock shown: ${m.stock.join(" ")}`);
    if (m.called) parts.push(`— called ${m.called}`);
    for (const s of m.shown || []) parts.push(`— seat ${s.seat} shows ${s.cards.join(" ")}`);
    if (m.received) parts.push(`— you receive ${m.received.join(" ")}`);
    list.append(el("li", { "data-index": m.index, "data-seat": m.seat, "data-move": m.action, "data-by": m.by,
      "data-bot": m.bot, "data-won-by": m.won_by, text: parts.join(" ") }));
  }
  if (moves.length) list.scrollTop = list.scrollHeight;  // the list's own scroll: the page stays where it is
}

// -- the result -----------------------------------------------------------------------------------------------------
// The score sheet in words (the server's sheet: each row a step of the score, from the outcome's details; the page
// knows no family), who got what, the card points of the tricks beside the final ones and why they differ, then
// the numbers (payoffs by seat; the bonuses as data).
function renderResult(box, msg, variant, live) {
  const out = msg.outcome;
  box.hidden = false;
  box.textContent = "";
  box.dataset.payoffs = JSON.stringify(out.payoffs);
  out.payoffs.forEach((p, s) => { box.dataset[`payoff${s}`] = p; });
  box.dataset.contract = out.contract ?? "";
  box.dataset.declarer = out.declarer ?? "";
  box.dataset.annulled = String(!!msg.annulled);
  box.dataset.practice = String(!!msg.practice);
  const unit = app.variants[variant] ? app.variants[variant].bonus_unit : "";
  const prefix = live ? "" : "replay-";
  box.append(el("h2", { text: `${msg.annulled ? "Deal annulled" : "Score"}${msg.practice ? " (practice deal)" : ""}` }));
  if (msg.sheet) box.append(...sheetEls(msg.sheet, prefix));
  const table = el("table", { class: "payoffs", "data-testid": `${prefix}payoffs` },
    el("thead", {}, el("tr", {}, el("th", { text: "seat" }), live ? el("th", { text: "player" }) : null,
      el("th", { text: "payoff" }))));
  const body = el("tbody");
  out.payoffs.forEach((p, s) => body.append(el("tr", { "data-seat": s, "data-payoff": p },
    el("td", { text: `seat ${s}` }), live ? el("td", { text: playerName(s) }) : null,
    el("td", { text: p > 0 ? `+${p}` : p < 0 ? `−${-p}` : "0" }))));
  table.append(body);
  box.append(table);
  const data = el("details", { class: "score-data" }, el("summary", { text: "The outcome as data" }));
  if (out.sides && out.sides.length) {
    const sides = el("ul", { "data-testid": `${prefix}sides-points` });
    out.sides.forEach((s, k) => sides.append(el("li", { "data-side": k, "data-points": out.card_points[k],
      text: `side ${k} (${s.map((q) => `seat ${q}`).join(" + ")}): ${fmt(out.card_points[k])} card points` })));
    data.append(sides);
  }
  const bonuses = el("ul", { "data-testid": `${prefix}bonuses` });
  for (const b of out.bonuses || []) bonuses.append(el("li", { "data-bonus": b.name, "data-side": b.side, "data-points": b.points,
    text: `${b.name}: ${b.points} ${unit} to side ${b.side}` }));
  if (!(out.bonuses || []).length) bonuses.append(el("li", { text: "no bonus" }));
  data.append(el("h3", { text: unit ? `Bonuses, in ${unit}` : "Bonuses" }), bonuses);  // unit: "score points (T)"
  box.append(data);
  if (live) {
    app.record = msg.record;
    box.append(el("div", { class: "buttons" },
      el("button", { type: "button", "data-testid": "download-record", id: "download-record", onclick: downloadRecord,
        text: "Download the record (JSON)" }),
      el("button", { type: "button", "data-testid": "replay-this", id: "replay-this",
        onclick: () => { setMode("replay"); loadReplay(app.record, app.mySeat || 0); }, text: "Replay this deal" }),
      app.shared ?
        el("button", { type: "button", "data-testid": "new-deal", id: "new-deal", onclick: () => openTable(),
          text: "Open another table" }) :
        el("button", { type: "button", "data-testid": "new-deal", id: "new-deal", onclick: () => startDeal(), text: "New deal" })));
    $("download-record").focus({ preventScroll: app.touch });
  }
}

// the sheet: a headline, the rows (term: text), and the tally of the tricks against the final card points
function sheetEls(sheet, prefix) {
  const head = el("p", { class: "sheet-headline", "data-testid": `${prefix}sheet-headline`, text: sheet.headline });
  const rows = el("dl", { class: "sheet", "data-testid": `${prefix}sheet` });
  for (const r of sheet.rows) rows.append(el("dt", { "data-term": r.term, text: r.term }), el("dd", { text: r.text }));
  const out = [head, rows];
  if (sheet.tally) {
    const tally = el("div", { class: "tally", "data-testid": `${prefix}tally` }, el("p", { text: sheet.tally.text }));
    const list = el("ul");
    for (const side of sheet.tally.sides) {
      list.append(el("li", { "data-seats": side.seats.join(","), "data-tricks": side.tricks, "data-end": side.end,
        "data-final": side.final, text: side.text }));
    }
    tally.append(list);
    out.push(tally);
  }
  return out;
}

function playerName(s) {
  if (app.seats[s] !== "human") return app.seats[s];
  return s === app.mySeat ? "you" : "a person";
}

function downloadRecord() {
  if (!app.record) return;
  const blob = new Blob([JSON.stringify(app.record) + "\n"], { type: "application/json" });
  const a = el("a", { href: URL.createObjectURL(blob), download: `tarocchi-${app.record.variant}-${app.seed}.json` });
  document.body.append(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 0);
}

// -- replay ------------------------------------------------------------------------------------------------------
function replayError(text) {
  $("replay-error").textContent = text || "";
  $("replay-error").dataset.error = text ? "true" : "false";
}

async function loadReplayText(text) {
  const lines = text.split(/\r?\n/).filter((l) => l.trim());
  if (!lines.length) return replayError("nothing to replay: pick a file or paste a record");
  let record;
  try {
    record = JSON.parse(text);
  } catch (e) {
    const k = Number($("replay-line").value || 1);
    if (k < 1 || k > lines.length) return replayError(`line ${k}: the text has ${lines.length} line(s)`);
    try { record = JSON.parse(lines[k - 1]); } catch (e2) { return replayError(`line ${k} is not JSON: ${e2.message}`); }
  }
  return loadReplay(record);
}

// the record replayed, seat `bottom` at the bottom of the table
async function loadReplay(record, bottom = 0) {
  replayError("");
  $("replay-load").disabled = true;
  try {
    const r = await fetch("/v1/replay?steps=true", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(record) });
    const out = await r.json();
    if (!r.ok) {
      replayError(`${r.status}: ${out.error}`);
      $("replay-game").hidden = true;
      return;
    }
    app.replay = { steps: out.steps, index: 0, result: out, bottom };
    app.showLast = false;
    const pick = $("replay-seat");
    pick.textContent = "";
    for (let s = 0; s < out.steps[0].table.players; s++) {
      pick.append(el("option", { value: s, text: `seat ${s}`, selected: s === bottom ? true : null }));
    }
    $("replay-game").hidden = false;
    showStep(0);
  } catch (e) {
    replayError(`the server could not be reached: ${e.message}`);
  } finally {
    $("replay-load").disabled = false;
  }
}

function showStep(k) {
  const rp = app.replay;
  if (!rp) return;
  k = Math.max(0, Math.min(rp.steps.length - 1, k));
  rp.index = k;
  const step = rp.steps[k];
  const t = step.table;
  const last = rp.steps.length - 1;
  const st = $("replay-status");
  Object.assign(st.dataset, { index: k, count: rp.steps.length, phase: t.phase, toAct: t.to_act, over: t.over });
  st.textContent = `step ${k} of ${last} — ${t.variant}, ${t.over ? "over" : `${t.phase}, seat ${t.to_act} to act`}`;
  const mv = $("replay-move");
  mv.dataset.index = k;
  mv.textContent = step.move ? `${step.move.index + 1}. seat ${step.move.seat}: ${actionLabel(step.move.action, t.variant)}` +
    (step.move.won_by !== undefined ? ` — seat ${step.move.won_by} wins the trick` : "") : "the deal";
  const bottom = Math.min(rp.bottom || 0, t.players - 1);
  renderTable($("replay-board"), t, { prefix: "replay-", bottom, live: false, hands: t.hands });
  const hands = $("replay-hands");
  hands.textContent = "";
  hands.dataset.seat = bottom;
  hands.append(cardsEl(t.hands[bottom], t.variant, `replay-hand-${bottom}`));
  layoutHand(hands);
  $("replay-first").disabled = $("replay-prev").disabled = k === 0;
  $("replay-next").disabled = $("replay-last").disabled = k === last;
  const res = $("replay-result");
  if (k === last) renderResult(res, rp.result, t.variant, false);
  else res.hidden = true;
}

// -- modes and keys ---------------------------------------------------------------------------------------------
function setMode(mode) {
  app.mode = mode;
  for (const v of VIEWS) {
    $(`${v}-view`).hidden = v !== mode;
    $(`tab-${v}`).setAttribute("aria-pressed", String(v === mode));
  }
  document.body.dataset.mode = mode;
  layoutHands();  // a view shown: its hand laid out at its width
}

// taps or keys: what the hints say (a coarse pointer at first, then the last input the person used)
function setTouch(touch) {
  if (touch === app.touch && document.body.dataset.input) return;
  app.touch = touch;
  document.body.dataset.input = touch ? "touch" : "keys";
  for (const h of document.querySelectorAll("p.hint[data-what]")) {  // in place: a tap's button is not replaced
    h.textContent = hintText(h.dataset.what, h.dataset.cards === "true");
    h.dataset.input = document.body.dataset.input;
  }
  for (const b of document.querySelectorAll(".last-trick-button")) {
    b.textContent = lastTrickText(b.getAttribute("aria-pressed") === "true");
    b.title = touch ? "show the last trick" : "show the last trick (key L)";
  }
}

function hintText(what, cards) {
  return `${what}${app.touch ? (cards ? ": tap a raised card" : ": tap a button") : " (keys 1-9, arrows, Enter)"}`;
}

function lastTrickText(showing) {
  return `${showing ? "Back to the trick" : "Last trick"}${app.touch ? "" : " (L)"}`;
}

function onKey(ev) {
  const tag = (ev.target && ev.target.tagName) || "";
  if (["INPUT", "SELECT", "TEXTAREA"].includes(tag) || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  if (app.touch && !["Tab", "Shift"].includes(ev.key)) setTouch(false);
  if (ev.key === "l" || ev.key === "L") {
    toggleLastTrick();
    ev.preventDefault();
    return;
  }
  if (app.mode === "replay" && app.replay) {
    const moves = { ArrowLeft: -1, ArrowRight: 1 };
    if (ev.key in moves) showStep(app.replay.index + moves[ev.key]);
    else if (ev.key === "Home") showStep(0);
    else if (ev.key === "End") showStep(app.replay.steps.length - 1);
    else return;
    ev.preventDefault();
    return;
  }
  if (app.mode !== "play" || !app.legal.length) return;
  if (/^[1-9]$/.test(ev.key) && Number(ev.key) <= app.legal.length) select(Number(ev.key) - 1);
  else if (ev.key === "ArrowRight" || ev.key === "ArrowDown") select(app.selected + 1);
  else if (ev.key === "ArrowLeft" || ev.key === "ArrowUp") select(app.selected - 1);
  else if (ev.key === "Enter" && tag !== "BUTTON" && app.selected >= 0) play(app.legal[app.selected].action);
  else return;
  ev.preventDefault();
}

async function init() {
  for (const v of VIEWS) $(`tab-${v}`).addEventListener("click", () => setMode(v));
  setTouch(matchMedia("(pointer: coarse)").matches);
  document.addEventListener("pointerdown", (ev) => setTouch(ev.pointerType === "touch" || ev.pointerType === "pen"));
  let width = window.innerWidth;
  window.addEventListener("resize", () => {
    if (window.innerWidth !== width) layoutHands();  // (a phone's bar sliding away changes the height only)
    width = window.innerWidth;
  });
  $("setup").addEventListener("submit", startDeal);
  $("replay-load").addEventListener("click", async () => {
    const f = $("replay-file").files[0];
    const text = f ? await f.text() : $("replay-text").value;
    loadReplayText(text);
  });
  // the latest input wins: text typed or pasted after choosing a file replaces the file
  $("replay-text").addEventListener("input", () => { $("replay-file").value = ""; });
  $("replay-first").addEventListener("click", () => showStep(0));
  $("replay-prev").addEventListener("click", () => showStep(app.replay.index - 1));
  $("replay-next").addEventListener("click", () => showStep(app.replay.index + 1));
  $("replay-last").addEventListener("click", () => showStep(app.replay.steps.length - 1));
  $("replay-seat").addEventListener("change", () => {
    app.replay.bottom = Number($("replay-seat").value);
    showStep(app.replay.index);
  });
  document.addEventListener("keydown", onKey);
  setMode("play");
  try {
    const [variants, bots] = await Promise.all([getJSON("/v1/variants"), getJSON("/v1/bots")]);
    for (const v of variants.variants) app.variants[v.name] = v;
    app.bots = bots.bots;
    app.defaultBot = bots.default;
    app.defaultSeats = bots.seats;
    buildVariantSelect();
    variantFromAddress();
    initFriends();
    const saved = new URLSearchParams(location.search).has("table") ? null : savedDeal();
    if (saved) resumeDeal(saved);  // the page reloaded during a deal against bots: it goes on
    document.body.dataset.ready = "true";
  } catch (e) {
    showError(`the server could not be reached: ${e.message}`);
  }
}

document.addEventListener("DOMContentLoaded", init);
