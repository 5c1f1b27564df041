// The arbiter's desk (the tournament page with the arbiter token) against a real Swiss
// tournament: a round of more boards than a connection may join at once, followed live without
// being disconnected; a forfeit, a half-point bye, a result corrected and a late entry with an
// account of its own, each from the desk; an open claim in the round's overview; the clocks
// counting down; only the current round printed; axe-core in English and Turkish.

import { test } from "node:test";
import assert from "node:assert/strict";
import { apiView, assertNoViolations, newPage, protocolClient, shoot, testBed, waitForView } from "./helpers.js";

let organizer;
const bed = testBed(async ({ server, browser }) => {
  organizer = await protocolClient(browser, server);
});

const text = (page, selector) => page.$eval(selector, (node) => node.textContent.trim());

async function waitForText(page, selector, expected) {
  await page.waitForFunction(
    ([selector, expected]) => document.querySelector(selector)?.textContent.includes(expected),
    [selector, expected],
  );
}

/** `n` players with distinct Turkish names, in no particular order. */
function players(n) {
  const surnames = ["Aydın", "Çelik", "Demir", "Şahin", "Ünal", "Öztürk", "Işık", "Güneş", "Yıldız", "Kaya"];
  return Array.from({ length: n }, (_, i) => ({ surname: `${surnames[i % surnames.length]} ${Math.floor(i / surnames.length) + 1}`, given: "Deniz" }));
}

async function createTournament(name, list, extra = {}) {
  const created = await organizer.request({ type: "create_tournament", name, game: "pentago", rounds: 4, players: list, ...extra });
  assert.equal(created.players.length, list.length);
  return { id: created.tournament, arbiter: created.arbiter_token, players: created.players };
}

/**
 * A page that counts its WebSockets and how they closed, so that a test can tell that the page
 * stayed on one connection.
 */
async function countingSockets(page) {
  await page.addInitScript(() => {
    const Native = window.WebSocket;
    window.__sockets = { opened: 0, closed: [] };
    window.WebSocket = class extends Native {
      constructor(...args) {
        super(...args);
        window.__sockets.opened++;
        this.addEventListener("close", (e) => window.__sockets.closed.push(e.code));
      }
    };
  });
}

test("the desk follows a round of 110 boards on one connection, paced within the server's rate, every board shown", { skip: bed.skip, timeout: 120000 }, async () => {
  const t = await createTournament("Büyük Açık", players(220));
  const started = await organizer.request({ type: "start_tournament", tournament: t.id, colour_lot: "p1" });
  const boards = started.pairings[0].boards;
  assert.equal(boards.length, 110);

  const page = await newPage(bed.browser);
  await countingSockets(page);
  const welcomes = [];
  page.on("websocket", (ws) => ws.on("framereceived", ({ payload }) => String(payload).includes('"welcome"') && welcomes.push(JSON.parse(payload))));
  await page.goto(`${bed.server.url}/#/tournament/${t.id}?arbiter=${t.arbiter}`);
  await waitForText(page, "#desk-status", "Round 1 is being played");
  // Every board's row fills in with its live state (clocks at 15:00, the set score).
  await page.waitForFunction(
    (n) => {
      const rows = [...document.querySelectorAll("#overview tbody tr[data-board]")];
      return rows.length === n && rows.every((r) => r.querySelector("td.clocks").textContent.includes("15:00"));
    },
    boards.length,
    { timeout: 60000 },
  );
  for (const b of [boards[0], boards[54], boards.at(-1)]) {
    const cells = await page.$eval(`#overview tr[data-board="${b.board}"]`, (row) => [...row.cells].map((c) => c.textContent.trim()));
    assert.equal(cells[2], "0–0");
    assert.equal(cells[5], "15:00 · 15:00");
  }
  // One connection all along: the server never closed it as a flood, the page never reconnected.
  const sockets = await page.evaluate(() => window.__sockets);
  assert.deepEqual(sockets, { opened: 1, closed: [] });
  assert.equal(await page.$eval("#connection", (banner) => banner.hidden), true);
  // The server said its rate in `welcome`.
  assert.deepEqual(welcomes[0]?.rate, { per_second: 20, burst: 40 });
  await page.close();
});

test("a desk left while its joins wait in turn leaves only the boards it joined, and the waiting joins are never sent", { skip: bed.skip, timeout: 120000 }, async () => {
  const t = await createTournament("Yarıda Kalan", players(160));
  const started = await organizer.request({ type: "start_tournament", tournament: t.id, colour_lot: "p1" });
  assert.equal(started.pairings[0].boards.length, 80);

  const page = await newPage(bed.browser);
  const sent = [];
  page.on("websocket", (ws) =>
    ws.on("framesent", ({ payload }) => {
      const m = JSON.parse(String(payload));
      if (m.type === "join" || m.type === "leave") sent.push(m);
    }),
  );
  await page.goto(`${bed.server.url}/#/tournament/${t.id}?arbiter=${t.arbiter}`);
  // The burst has gone out and the joins go on in turn: the arbiter goes back to the lobby.
  const deadline = Date.now() + 30000;
  while (sent.filter((m) => m.type === "join").length < 25) {
    assert.ok(Date.now() < deadline, `the desk's joins: ${sent.length} within 30 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
  await page.evaluate(() => (location.hash = "#/"));
  const joins = () => sent.filter((m) => m.type === "join").map((m) => m.match);
  const leaves = () => sent.filter((m) => m.type === "leave").map((m) => m.match);
  await new Promise((r) => setTimeout(r, 500));
  const joined = joins();
  assert.ok(joined.length < 80, `the joins still waiting are dropped: ${joined.length} of 80 sent`);
  while (leaves().length < joined.length) {
    assert.ok(Date.now() < deadline + 30000, `left ${leaves().length} of the ${joined.length} boards joined`);
    await new Promise((r) => setTimeout(r, 50));
  }
  // A moment more: nothing else goes out.
  await new Promise((r) => setTimeout(r, 1500));
  assert.deepEqual(joins(), joined, "no join is sent after the desk is left");
  assert.deepEqual([...leaves()].sort(), [...joined].sort(), "each board joined is left, and no other");
  await page.close();
});

/** The desk of tournament `t`, in English unless told otherwise. */
async function openDesk(t, options) {
  const page = await newPage(bed.browser, options);
  await page.goto(`${bed.server.url}/#/tournament/${t.id}?arbiter=${t.arbiter}`);
  await page.waitForSelector("#desk");
  return page;
}

const rowCells = (page, selector) => page.$eval(selector, (row) => [...row.cells].map((cell) => cell.textContent.trim()));

/** A player of `t` seated in their match `match` over the protocol (their token, `your_match`). */
async function seat(t, view, id, match) {
  const account = view.players.find((p) => p.id === id).account;
  const token = t.players.find((p) => p.account === account).token;
  const client = await protocolClient(bed.browser, bed.server, token);
  const mine = await client.frame(`(f) => f.type === "your_match" && f.match === ${JSON.stringify(match)}`);
  await client.request({ type: "join", match, seat_token: mine.seat_token });
  return client;
}

/** Seconds on a clock as the desk writes it (m:ss). */
function seconds(text) {
  const [m, s] = text.split(":").map(Number);
  return m * 60 + s;
}

/** Ends a match at once by the arbiter's decision: `p1`, `p2` or `draw`. */
async function decide(match, arbiter, winner) {
  await organizer.request({ type: "join", match, arbiter_token: arbiter });
  await organizer.request({ type: "declare", match, scope: "round", winner, reason: "test" });
}

test("a round from the desk: the clocks count down live, an open claim shows on its board, a forfeit and a double forfeit, a late entry with an account of its own", { skip: bed.skip, timeout: 120000 }, async () => {
  const t = await createTournament("Masa Kupası", players(6));
  const bot = await organizer.request({ type: "create_account", name: "kutu-bot", kind: "bot" });
  assert.equal(bot.type, "account_created");
  const page = await openDesk(t);
  await page.selectOption("#desk-lot", "p1");
  await page.click("#desk-start-button");
  await page.waitForSelector("#round-1");
  const view = await apiView(bed.server, t.id);
  const [clocked, forfeited, neither] = view.pairings[0].boards;
  const row = (b) => `#overview tr[data-board="${b.board}"]`;

  // Both players of the first board are ready: the first mover's clock runs on the desk, the
  // other's stands.
  const p1 = await seat(t, view, clocked.p1, clocked.match);
  const p2 = await seat(t, view, clocked.p2, clocked.match);
  await p1.request({ type: "ready", match: clocked.match });
  await p2.request({ type: "ready", match: clocked.match });
  await page.waitForFunction((sel) => /^14:5\d · 15:00$/.test(document.querySelector(`${sel} td.clocks`)?.textContent), row(clocked));
  const before = (await rowCells(page, row(clocked)))[5].split(" · ");
  await page.waitForTimeout(2500);
  const after = (await rowCells(page, row(clocked)))[5].split(" · ");
  assert.ok(seconds(after[0]) <= seconds(before[0]) - 2, `the running clock counts down: ${before[0]} then ${after[0]}`);
  assert.equal(after[1], "15:00", "the other clock stands");
  assert.match((await rowCells(page, row(clocked)))[1], /\(set 1\)$/);

  // The first mover moves; the opponent claims about it: the row shows the open claim at once,
  // and the desk says so.
  await p1.request({ type: "move", match: clocked.match, move: "b1sw" });
  await p2.request({ type: "claim", match: clocked.match, text: "İki taşa dokundu" });
  await page.waitForFunction((sel) => document.querySelector(`${sel} td.claims-open`)?.textContent === "1", row(clocked));
  assert.equal(await page.$eval(row(clocked), (tr) => tr.className), "has-claims");
  await page.waitForFunction((n) => document.querySelector("#announcer").textContent.includes(`A claim on board ${n}.`), clocked.board);

  // The second board's second player did not come: a forfeit from the desk.
  await page.selectOption("#desk-player", String(forfeited.p2));
  await page.click("#desk-forfeit");
  await waitForView(bed.server, t.id, "the forfeit", (v) => v.pairings[0].boards[1].result === "+-");
  await waitForText(page, `#round-1 tr[data-board="${forfeited.board}"] .board-result`, "1–0 (forfeit)");
  await waitForText(page, row(forfeited), "1–0 (forfeit)");
  // Neither player of the third came.
  await page.selectOption("#desk-player", String(neither.p1));
  await page.check("#desk-double");
  await page.click("#desk-forfeit");
  await waitForView(bed.server, t.id, "the double forfeit", (v) => v.pairings[0].boards[2].result === "--");
  await waitForText(page, `#round-1 tr[data-board="${neither.board}"] .board-result`, "0–0 (both forfeited)");
  await page.uncheck("#desk-double");

  // A late entry after the start with an account of its own (a bot's): it plays with that
  // account, no new token is made, and round 1, already paired, is a zero-point bye.
  await page.fill("#desk-surname", "Kutu");
  await page.fill("#desk-given", "Bot");
  await page.fill("#desk-account", "kutu-bot");
  await page.click("#desk-add");
  await waitForText(page, "#desk-entered", "entered as number 7; they play with their own account, kutu-bot.");
  const entered = await apiView(bed.server, t.id);
  assert.equal(entered.players[6].account, "kutu-bot");
  assert.deepEqual(entered.pairings[0].byes.find((b) => b.player === 7), { player: 7, kind: "zero", points: 0 });
  assert.equal(await page.inputValue("#desk-account"), "", "the form is cleared");
  // An account that does not exist is refused, plainly, and nobody is entered.
  await page.fill("#desk-surname", "Yok");
  await page.fill("#desk-account", "no-such-account");
  await page.click("#desk-add");
  await page.waitForFunction(() => !document.querySelector("#alert").hidden && document.querySelector("#alert").textContent.includes("no-such-account"));
  assert.equal((await apiView(bed.server, t.id)).players.length, 7);
  await shoot(page, "tournament-desk-round.png");
  await p1.close();
  await p2.close();
  await page.close();
});

test("between rounds from the desk: a result corrected, a half-point bye, and a pairing that changed after it was shown is not published", { skip: bed.skip, timeout: 120000 }, async () => {
  const t = await createTournament("Düzeltme Kupası", players(4));
  const started = await organizer.request({ type: "start_tournament", tournament: t.id, colour_lot: "p1" });
  const page = await openDesk(t);
  const [first, second] = started.pairings[0].boards;
  await decide(first.match, t.arbiter, "p1");
  await decide(second.match, t.arbiter, "p1");
  await waitForView(bed.server, t.id, "round 1 complete", (v) => v.completed_rounds === 1);
  await waitForText(page, "#desk-status", "Every result is in");

  // Board 1's result is corrected: the second player won. The pairings and the standings follow.
  await page.fill("#desk-result-round", "1");
  await page.fill("#desk-result-board", String(first.board));
  await page.selectOption("#desk-result", "0-1");
  await page.click("#desk-set-result");
  await waitForText(page, `#round-1 tr[data-board="${first.board}"] .board-result`, "0–1");
  await page.waitForFunction((n) => document.querySelector("#announcer").textContent.includes(`Round 1, board ${n}: 0–1.`), first.board);
  const corrected = await apiView(bed.server, t.id);
  assert.equal(corrected.standings.find((s) => s.id === first.p2).points, 1);
  assert.equal(corrected.standings.find((s) => s.id === first.p1).points, 0);
  await waitForText(page, `#standings tr[data-player="${first.p2}"] td.points`, "1");

  // The pairing of round 2 is shown; then a player takes a half-point bye in round 2.
  await page.click("#desk-preview-button");
  await page.waitForSelector("#preview-table tbody tr");
  assert.equal(await page.$$eval("#desk-preview .byes li", (items) => items.length), 0);
  const resting = second.p1;
  await page.selectOption("#desk-player", String(resting));
  await page.fill("#desk-bye-round", "2");
  await page.click("#desk-bye");
  await waitForView(bed.server, t.id, "the half-point bye", (v) => v.players.find((p) => p.id === resting).half_byes?.includes(2));
  await page.waitForFunction(() => document.querySelector("#announcer").textContent.includes("has a half-point bye."));

  // Publishing the pairing shown is refused: nothing is published, the desk says why and shows
  // the pairing as it is now, with the bye.
  await page.click("#desk-publish");
  await page.waitForFunction(() => !document.querySelector("#alert").hidden && document.querySelector("#alert").textContent.includes("nothing was published"));
  assert.match(await text(page, "#alert"), /Round 2 as it would be paired now is shown instead/);
  assert.equal((await apiView(bed.server, t.id)).current_round, 1, "nothing published");
  await waitForText(page, "#desk-preview .byes", "half-point bye, asked for");
  const shown = await page.$$eval("#preview-table tbody tr", (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent.trim())));
  assert.equal(shown.length, 1, "three players in round 2: one board");

  // The pairing shown now is published as it is.
  await page.click("#desk-publish");
  await page.waitForSelector("#round-2");
  const published = await apiView(bed.server, t.id);
  assert.equal(published.current_round, 2);
  const name = (id) => published.players.find((p) => p.id === id).name;
  assert.deepEqual(
    published.pairings[1].boards.map((b) => [String(b.board), `${name(b.p1)} (${b.p1})`, `${name(b.p2)} (${b.p2})`]),
    shown,
  );
  assert.ok(published.pairings[1].byes.some((b) => b.player === resting && b.kind === "half"));
  await page.close();
});

test("the desk and the printed pages pass axe-core in English and Turkish; only the current round can be printed, each round's page named", { skip: bed.skip, timeout: 120000 }, async () => {
  const t = await createTournament("Kış Kupası", players(5));
  const started = await organizer.request({ type: "start_tournament", tournament: t.id, colour_lot: "p1" });
  for (const b of started.pairings[0].boards) await decide(b.match, t.arbiter, "p1");
  await waitForView(bed.server, t.id, "round 1 complete", (v) => v.completed_rounds === 1);
  await organizer.request({ type: "pair_next", tournament: t.id });

  for (const [locale, words] of [
    ["en-US", { button: "Print round 2 only", round1: "Kış Kupası — Round 1", round2: "Kış Kupası — Round 2", heading: "Round 2 (being played)" }],
    ["tr-TR", { button: "Yalnızca 2. turu yazdır", round1: "Kış Kupası — 1. tur", round2: "Kış Kupası — 2. tur", heading: "2. tur (oynanıyor)" }],
  ]) {
    const page = await openDesk(t, { locale });
    await page.waitForSelector("#round-2");
    await page.waitForSelector('#overview tr[data-board="1"] td.clocks');
    await assertNoViolations(page, `the desk (${locale})`);
    assert.equal(await text(page, "#print-round-button"), words.button);
    // On screen the rounds' print titles are not shown.
    assert.equal(await page.$eval("#round-2 .round-print-title", (p) => getComputedStyle(p).display), "none");

    // Everything on paper: each round on a page of its own, named; the desk is not printed.
    await page.emulateMedia({ media: "print" });
    const all = await page.evaluate(() => {
      const shown = (sel) => getComputedStyle(document.querySelector(sel)).display !== "none";
      return {
        desk: shown("#desk"),
        standings: shown("#standings-wrap"),
        crosstable: shown(".crosstable-card"),
        round1: shown("#round-1"),
        titles: [...document.querySelectorAll(".round-print-title")].map((p) => (getComputedStyle(p).display === "none" ? null : p.textContent)),
        breaks: [...document.querySelectorAll("#pairings .round")].map((r) => getComputedStyle(r).breakBefore),
      };
    });
    assert.deepEqual(all, { desk: false, standings: true, crosstable: true, round1: true, titles: [words.round2, words.round1], breaks: ["auto", "page"] });
    await assertNoViolations(page, `the printed tournament (${locale})`);
    await page.emulateMedia({ media: "screen" });

    // Only the current round: the tournament's name and the round's pairings, on one page.
    await page.evaluate(() => {
      window.print = () => (window.__printed = (window.__printed || 0) + 1);
    });
    await page.click("#print-round-button");
    assert.equal(await page.evaluate(() => [window.__printed, document.body.dataset.print].join()), "1,round");
    await page.emulateMedia({ media: "print" });
    const round = await page.evaluate(() => {
      const visible = (sel) => [...document.querySelectorAll(sel)].filter((n) => n.getClientRects().length > 0).length;
      const texts = (sel) => [...document.querySelectorAll(sel)].filter((n) => n.getClientRects().length > 0).map((n) => n.textContent.trim());
      return {
        headings: texts("h1, h2, h3, .round-print-title"),
        about: visible("#tournament-settings"),
        standings: visible("#standings-wrap"),
        crosstable: visible(".crosstable-card"),
        round1: visible("#round-1"),
        boards: visible("#round-2 tbody tr"),
        break: getComputedStyle(document.querySelector("#round-2")).breakBefore,
      };
    });
    const pairings = locale === "tr-TR" ? "Eşlemeler" : "Pairings";
    assert.deepEqual(round, { headings: ["Kış Kupası", pairings, words.heading], about: 0, standings: 0, crosstable: 0, round1: 0, boards: 2, break: "auto" });
    await assertNoViolations(page, `the current round printed (${locale})`);
    await shoot(page, `tournament-print-round-${locale}.png`);
    // The dialog closed: the page prints everything again.
    await page.evaluate(() => window.dispatchEvent(new Event("afterprint")));
    assert.equal(await page.evaluate(() => document.body.dataset.print ?? null), null);
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector("#round-1")).display), "block");
    await page.close();
  }
});
