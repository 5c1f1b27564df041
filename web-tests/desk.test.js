// The arbiter's desk (the tournament page with the arbiter token) against a real Swiss
// tournament: a round of more boards than a connection may join at once, followed live without
// being disconnected; a forfeit, a half-point bye, a result corrected and a late entry with an
// account of its own, each from the desk; an open claim in the round's overview; the clocks
// counting down; only the current round printed; axe-core in English and Turkish.

import { test } from "node:test";
import assert from "node:assert/strict";
import { assertNoViolations, newPage, protocolClient, testBed } from "./helpers.js";

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

/** The tournament as the HTTP API serves it. */
async function apiView(id) {
  const response = await fetch(`${bed.server.url}/api/tournaments/${encodeURIComponent(id)}`);
  assert.equal(response.status, 200);
  return response.json();
}

async function waitForView(id, what, done) {
  const deadline = Date.now() + 15000;
  for (;;) {
    const v = await apiView(id);
    if (done(v)) return v;
    assert.ok(Date.now() < deadline, `${what}: not within 15 s: ${JSON.stringify(v).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
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
