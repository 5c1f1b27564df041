// axe-core on the pages (no violations), and screenshots of the match page of each game,
// saved under artifacts/ (and copied to docs/screenshots/ with HAKEM_DOCS_SCREENSHOTS=1).

import { test } from "node:test";
import assert from "node:assert/strict";
import { assertNoViolations, createMatch, newPage, openMatch, shoot, testBed } from "./helpers.js";

const bed = testBed();

/** One picture of each page goes to docs/ (the others stay test artifacts). */
const FOR_DOCS = new Set(["lobby.png", "match-pentago.png", "match-pentago-arbiter.png", "match-quoridor.png", "match-pente.png"]);
// The clocks tick once before each picture, so that it shows a running clock.
const snap = (page, name) => shoot(page, name, { docs: FOR_DOCS.has(name), tick: 300 });

async function readyBoth(p1, p2) {
  await p1.click("#ready");
  await p2.click("#ready");
  await p1.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
}

/** Moves by mouse with the automatic clock press on: one click per move (Quoridor, Pente). */
async function playClicks(p1, p2, moves, { quoridor = false } = {}) {
  for (const page of [p1, p2]) await page.check("#autopress");
  for (const [i, mv] of moves.entries()) {
    const page = i % 2 === 0 ? p1 : p2;
    const wall = quoridor && /[hv]$/.test(mv);
    if (wall) await page.click(`.modes .mode[data-mode="${mv.slice(-1)}"]`);
    await page.click(`[data-cell="${wall ? mv.slice(0, -1) : mv}"]`);
    const other = i % 2 === 0 ? p2 : p1;
    await other.waitForFunction((n) => document.querySelectorAll("#moves .mv").length === n, i + 1);
  }
}

test("axe-core finds no violations; screenshots of the Pentago match page", { skip: bed.skip, timeout: 120000 }, async () => {
  const host = await newPage(bed.browser);
  const links = await createMatch(host, bed.server, { game: "pentago", variant: "tr" });
  await assertNoViolations(host, "the match list with a new match");
  await snap(host, "lobby.png");

  const p1 = await newPage(bed.browser);
  const p2 = await newPage(bed.browser);
  const watcher = await newPage(bed.browser);
  const arbiter = await newPage(bed.browser);
  await openMatch(p1, links.p1);
  await openMatch(p2, links.p2);
  await openMatch(watcher, links.watch);
  await openMatch(arbiter, links.arbiter);
  await assertNoViolations(p1, "a player's match page before the first set");
  await readyBoth(p1, p2);

  const moves = ["d4ne", "b2sw", "e5ne", "c5nw", "b5nw", "e2se"];
  for (const [i, mv] of moves.entries()) {
    const page = i % 2 === 0 ? p1 : p2;
    await page.click(`[data-cell="${mv.slice(0, 2)}"]`);
    await page.click(`.turn[data-quadrant="${mv.slice(2, 4)}"][data-dir="cw"]:not([disabled])`);
    await page.waitForSelector("#press:not([disabled])");
    await page.click("#press");
    await watcher.waitForFunction((n) => document.querySelectorAll("#moves .mv").length === n, i + 1);
    await (page === p1 ? p2 : p1).waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
  }
  await snap(watcher, "match-pentago.png");
  // A warning and a half-made move make the pages show everything they can.
  await arbiter.fill("#warn-reason", "Touching the board out of turn");
  await arbiter.selectOption("#warn-seat", "p2");
  await arbiter.click("#warn-form button[type=submit]");
  await p1.waitForFunction(() => document.querySelector("#log").textContent.includes("Touching"));
  await p1.click('[data-cell="c3"]');
  await p2.waitForFunction(() => document.querySelector('[data-cell="c3"]').classList.contains("has-x"));

  await assertNoViolations(p1, "the player's match page (Pentago, a set in play)");
  await assertNoViolations(p2, "the opponent's match page (Pentago)");
  await assertNoViolations(watcher, "the spectator's match page (Pentago)");
  await assertNoViolations(arbiter, "the arbiter's match page (Pentago)");
  await p1.keyboard.press("b");
  await snap(p1, "match-pentago-player.png");
  await snap(arbiter, "match-pentago-arbiter.png");

  // The Turkish page passes too.
  await p2.click("#lang-switch");
  await p2.waitForFunction(() => document.documentElement.lang === "tr");
  assert.match(await p2.textContent("#turn-line"), /hamlesini yaptı|sıra/i);
  await assertNoViolations(p2, "the match page in Turkish");
  await snap(p2, "match-pentago-tr.png");
});

test("screenshots and axe-core: Quoridor and Pente match pages", { skip: bed.skip, timeout: 120000 }, async () => {
  const host = await newPage(bed.browser);
  const q = await createMatch(host, bed.server, { game: "quoridor", sets: "1", clock: "10" });
  const q1 = await newPage(bed.browser);
  const q2 = await newPage(bed.browser);
  await openMatch(q1, q.p1);
  await openMatch(q2, q.p2);
  // Before set 1: no wall count (the board comes with the set), and one player's ready is said.
  assert.doesNotMatch(await q1.textContent("#seat-p1 .seat-facts"), /Walls/);
  await q1.click("#ready");
  await q2.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("is ready; waiting for"));
  await q2.click("#ready");
  await q1.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
  assert.match(await q1.textContent("#seat-p1 .seat-facts"), /Walls: 10/);
  await playClicks(q1, q2, "e2 e8 e3 a1h e4 c1h e5 g1h e6 e6v".split(" "), { quoridor: true });
  await q1.waitForSelector(".walls .wall.v");
  assert.equal(await q1.$$eval(".walls .wall:not(.preview)", (walls) => walls.length), 4);
  await assertNoViolations(q1, "the match page (Quoridor)");
  await snap(q1, "match-quoridor.png");

  const p = await createMatch(host, bed.server, { game: "pente", sets: "1", clock: "10" });
  const w = await newPage(bed.browser);
  const b = await newPage(bed.browser);
  await openMatch(w, p.p1);
  await openMatch(b, p.p2);
  await readyBoth(w, b);
  // White captures the black pair L10-M10 with N10.
  await playClicks(w, b, "K10 L10 A1 M10 N10 K11 L12".split(" "));
  await w.waitForFunction(() => document.querySelector("#board-facts").textContent.includes("White 2"));
  assert.match(await b.getAttribute('[data-cell="L10"]', "aria-label"), /L10, empty/);
  const said = await b.$$eval("#announcer p, #log li", (nodes) => nodes.map((n) => n.textContent).join("\n"));
  assert.match(said, /White captured 2 stones/);
  await assertNoViolations(w, "the match page (Pente)");
  await snap(w, "match-pente.png");
});
