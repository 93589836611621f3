// Tables for several people on the page of `tarocchi-rl serve` (loaded after app.js, whose helpers it uses): open a
// table choosing which seats are people and which bots (`open` over /ws), its code and the link `?table=CODE`, join
// by the link, a typed code or the lobby (`join`, GET /v1/tables), the people strip (who is here, who is awaited,
// whose seat a bot plays, and how long an away person's seat still waits for them). Each seat's token is kept in
// localStorage under its code, so a reload or a dropped connection takes the seat back (`join` with `code` and
// `token`).
"use strict";

const TOKEN_KEY = "tarocchi-seat:";  // + the code -> {"seat": k, "token": "..."}
const RECONNECT_TRIES = 4;           // a dropped connection at a shared table is joined again this often ...
const RECONNECT_DELAY_MS = 1000;     // ... after this, then twice as long each time

function savedSeat(code) {
  try {
    const got = JSON.parse(localStorage.getItem(TOKEN_KEY + code) || "null");
    return got && typeof got.token === "string" ? got : null;
  } catch (e) {
    return null;  // storage disabled or a foreign value: join as a newcomer
  }
}

function saveSeat(code, seat, token) {
  try { localStorage.setItem(TOKEN_KEY + code, JSON.stringify({ seat, token })); } catch (e) { /* storage off */ }
}

function forgetSeat(code) {
  try { localStorage.removeItem(TOKEN_KEY + code); } catch (e) { /* storage off */ }
}

function tableLink(code) {
  return `${location.origin}${location.pathname}?table=${encodeURIComponent(code)}`;
}

// -- the form ----------------------------------------------------------------------------------------------------
function buildFriendSeats() {
  const v = app.variants[$("variant").value];
  const box = $("friend-seats");
  const previous = {};
  for (const s of box.querySelectorAll("select")) previous[s.dataset.seat] = s.value;
  box.querySelectorAll(".seat-bot").forEach((e) => e.remove());
  for (let k = 0; k < v.players; k++) {
    const id = `friend-seat-${k}`;
    const sel = el("select", { id, "data-testid": id, "data-seat": k });
    const want = previous[k] || (k % 2 === 0 ? "human" : app.defaultBot);  // people facing each other, bots between
    sel.append(el("option", { value: "human", text: "a person", selected: want === "human" ? true : null }));
    for (const b of botsFor(v.name)) {
      sel.append(el("option", { value: b.name, text: `bot ${botText(b)}`, selected: b.name === want ? true : null }));
    }
    box.append(el("span", { class: "seat-bot" }, el("label", { for: id, text: `seat ${k}` }), sel));
  }
}

function readOpen() {
  const setup = readSetup();  // the variant, options and seed of the form above (its seat is a deal of one's own)
  const seats = [];
  for (let k = 0; k < app.variants[setup.variant].players; k++) seats.push($(`friend-seat-${k}`).value);
  const msg = { type: "open", variant: setup.variant, options: setup.options, seats, lobby: $("open-lobby").checked };
  if (setup.seed !== undefined) msg.seed = setup.seed;  // a seed typed above: a practice table, as a deal of one's own
  return msg;
}

function openTable(ev) {
  if (ev) ev.preventDefault();
  const msg = readOpen();
  if (!msg.seats.includes("human")) {
    showError("seats: at least one seat must be a person's (yours)");
    return;
  }
  enterShared(null, msg.seats);
  send(msg);
}

function joinTable(code, token) {
  const clean = String(code || "").trim();
  if (!clean) {
    showError("table code: type the code your friend gave you (8 letters and digits)");
    return;
  }
  const saved = token === undefined ? savedSeat(normalCode(clean)) : null;
  const msg = { type: "join", code: clean };
  if (token) msg.token = token;
  else if (saved) msg.token = saved.token;
  enterShared(clean, null);
  send(msg);
}

// the page switches to a shared table: a deal of one's own (or another table) ends with the old connection
function enterShared(code, seats) {
  if (app.ws && (app.table || app.shared)) closeSocket();
  forgetDeal();  // a deal of one's own ends with its connection
  app.shared = { code, seat: null, token: null, players: seats, people: [], started: false, over: false,
    closed: false, tries: 0 };
  app.seed = null;
  app.practice = false;
  app.table = null;
  app.record = null;
  app.mySeat = null;
  $("moves").textContent = "";
  $("result").hidden = true;
  $("result").textContent = "";
  $("board").textContent = "";
  $("hand").textContent = "";
  $("actions").textContent = "";
  $("status").textContent = code ? `joining table ${code}…` : "opening a table…";
  $("status").dataset.over = "false";
  $("status").dataset.code = code || "";
  $("shared").hidden = true;
  $("game").hidden = false;
  showError("");
}

// a deal of one's own: the shared table (if any) is left by closing its connection
function leaveShared() {
  if (!app.shared) return;
  if (app.ws) closeSocket();
  app.shared = null;
  $("shared").hidden = true;
  $("status").dataset.code = "";
  if (new URLSearchParams(location.search).has("table")) history.replaceState(null, "", location.pathname);
}

function closeSocket() {
  const ws = app.ws;
  app.ws = null;  // its close event is then no concern of the page
  app.queue = [];
  if (ws) ws.close(1000, "left");
}

// -- messages ----------------------------------------------------------------------------------------------------
// A message of a shared table: true when handled here (joined, people), false when app.js shows it as any table's.
function sharedMessage(msg) {
  const sh = app.shared;
  if (msg.type === "people") {
    if (sh && msg.code === sh.code) {
      showPeople(msg.people, msg.waiting_for);
      if (!sh.started && msg.waiting_for > 0) waitingStatus(msg.waiting_for);
    }
    return true;  // never an answer: the page stays busy while its own message is on the way
  }
  if (msg.type === "joined") {
    if (sh) joined(sh, msg);
    return true;
  }
  if (!sh) return false;
  if (msg.type === "error" && !msg.busy) {
    if (sh.seat === null || msg.fatal || /^no open table/.test(msg.error)) sh.closed = true;
    if (/^no open table|^wrong seat token/.test(msg.error) && sh.code) forgetSeat(normalCode(sh.code));
    if (sh.seat === null) $("status").textContent = "not at a table";
  } else if ((msg.type === "state" || msg.type === "over") && msg.people) {
    sh.started = true;
    if (msg.type === "over") {
      sh.over = true;
      forgetSeat(sh.code);
    }
    showPeople(msg.people, 0);
  }
  return false;
}

function normalCode(code) {
  return String(code).toUpperCase().replace(/[-\s]/g, "");
}

function joined(sh, msg) {
  setBusy(false, false);
  showError("");
  Object.assign(sh, { code: msg.code, seat: msg.seat, token: msg.token, players: msg.players, started: msg.started,
    closed: false, tries: 0 });
  app.mySeat = msg.seat;
  app.seats = msg.players;
  saveSeat(msg.code, msg.seat, msg.token);
  if (new URLSearchParams(location.search).get("table") !== msg.code) history.replaceState(null, "", tableLink(msg.code));
  setConnection("open", "connected");
  showTableInfo(msg.code);
  showPeople(msg.people, msg.waiting_for);
  if (!msg.started) waitingStatus(msg.waiting_for);
  loadLobby();  // the list the page was opened with may show this very table
}

// the connection of a shared table closed: join again with the seat's token unless the table is over or closed
function sharedClosed() {
  const sh = app.shared;
  if (!sh || sh.over || sh.closed || !sh.token || sh.tries >= RECONNECT_TRIES) return false;
  const delay = RECONNECT_DELAY_MS * 2 ** sh.tries;
  sh.tries += 1;
  setConnection("connecting", `connection lost: taking your seat back in ${Math.round(delay / 1000)} s…`);
  setTimeout(() => {
    if (app.shared === sh && !sh.over && !sh.closed) send({ type: "join", code: sh.code, token: sh.token });
  }, delay);
  return true;
}

function waitingStatus(n) {
  const st = $("status");
  Object.assign(st.dataset, { phase: "waiting", yourTurn: "false", over: "false", waitingFor: n, legal: 0 });
  st.textContent = `table ${app.shared.code}: waiting for ${n} more ${n === 1 ? "person" : "people"} — give them the link`;
}

function showTableInfo(code) {
  $("shared").hidden = false;
  $("table-code").textContent = code;
  $("shared").dataset.code = code;
  const link = $("table-link");
  link.href = tableLink(code);
  link.textContent = tableLink(code);
  $("copied").textContent = "";
}

async function copyLink() {
  const text = $("table-link").href;
  try {
    await navigator.clipboard.writeText(text);
    $("copied").textContent = "copied";
  } catch (e) {  // no clipboard (plain http from another machine): select the link for Ctrl+C
    const range = document.createRange();
    range.selectNodeContents($("table-link"));
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    $("copied").textContent = "selected: copy it with Ctrl+C";
  }
}

function showPeople(people, waitingFor) {
  const sh = app.shared;
  sh.people = people;
  const list = $("people");
  list.textContent = "";
  const bySeat = {};
  for (const p of people) bySeat[p.seat] = p;
  const players = (app.table && app.table.seats.map((s) => s.player)) || sh.players || [];
  for (let k = 0; k < players.length; k++) {
    const p = bySeat[k];
    let state, text;
    if (!p) [state, text] = ["bot", `bot ${players[k]}`];
    else if (k === sh.seat) [state, text] = ["you", "you"];
    else if (!p.taken) [state, text] = ["waiting", "waiting for a person"];
    else if (p.replaced_by) [state, text] = ["replaced", `away: bot ${p.replaced_by} plays for them`];
    else if (p.present) [state, text] = ["present", "a person, here"];
    else [state, text] = ["away", "a person, away: the seat waits for them"];
    const li = el("li", { class: `person ${state}`, "data-seat": k, "data-state": state,
      "data-replaced-by": p && p.replaced_by ? p.replaced_by : null }, el("strong", { text: `seat ${k}` }), ` ${text}`);
    if (state === "away" && typeof p.away_left === "number") {  // the grace left, counted down on the page
      li.append(el("span", { class: "countdown", "data-testid": `away-countdown-${k}`,
        "data-deadline": Date.now() + 1000 * p.away_left }));
    }
    list.append(li);
  }
  list.dataset.waitingFor = waitingFor;
  tickCountdowns();
}

// every away seat's countdown: "a bot plays for them in 42 s", once a second
let countdownTimer = null;

function tickCountdowns() {
  const spans = [...document.querySelectorAll("#people .countdown[data-deadline]")];
  for (const sp of spans) {
    const left = Math.max(0, Math.ceil((Number(sp.dataset.deadline) - Date.now()) / 1000));
    sp.dataset.left = left;
    sp.textContent = left > 0 ? `, a bot plays for them in ${left} s` : ", a bot takes the seat now";
  }
  if (spans.length && countdownTimer === null) {
    countdownTimer = setInterval(tickCountdowns, 1000);
  } else if (!spans.length && countdownTimer !== null) {
    clearInterval(countdownTimer);
    countdownTimer = null;
  }
}

// -- the lobby ---------------------------------------------------------------------------------------------------
async function loadLobby() {
  const list = $("lobby-list");
  try {
    const got = await getJSON("/v1/tables");
    list.textContent = "";
    const tables = got.tables.filter((t) => !app.shared || t.code !== app.shared.code);  // not the page's own
    for (const t of tables) {
      const seats = t.seats.map((s, k) => `${k}: ${s === "human" ? "person" : s}`).join(", ");
      list.append(el("li", { "data-code": t.code, "data-variant": t.variant },
        `${t.variant}, ${t.taken} of ${t.people} people (seats ${seats}) `,
        el("button", { type: "button", "data-testid": `lobby-join-${t.code}`, text: `Join ${t.code}`,
          onclick: () => joinTable(t.code) })));
    }
    if (!tables.length) list.append(el("li", { class: "none", text: "no table waits for people now" }));
    list.dataset.count = tables.length;
  } catch (e) {
    list.textContent = "";
    list.append(el("li", { class: "none", text: `the lobby could not be read: ${e.message}` }));
  }
}

function initFriends() {
  $("open-form").addEventListener("submit", openTable);
  $("join-form").addEventListener("submit", (ev) => { ev.preventDefault(); joinTable($("join-code").value); });
  $("copy-link").addEventListener("click", copyLink);
  $("lobby-refresh").addEventListener("click", loadLobby);
  buildFriendSeats();
  $("variant").addEventListener("change", buildFriendSeats);
  loadLobby();
  const code = new URLSearchParams(location.search).get("table");
  if (code) {
    $("join-code").value = code;
    joinTable(code);
  }
}
