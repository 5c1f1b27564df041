// axe-core on the pages (no violations), and screenshots of the match page of each game,
// saved under artifacts/ (and copied to docs/screenshots/ with HAKEM_DOCS_SCREENSHOTS=1).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { AxeBuilder } from "@axe-core/playwright";
import { SCREENSHOTS, artifactPath, createMatch, launchBrowser, missingBrowser, newPage, openMatch, startServer } from "./helpers.js";

const skip = missingBrowser() || false;
let server;
let browser;

before(async () => {
  if (skip) return;
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Every axe-core rule (WCAG 2.0/2.1 A and AA, and best practices) on the page as it is now. */
async function assertNoViolations(page, what) {
  const results = await new AxeBuilder({ page }).analyze();
  const summary = results.violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.slice(0, 5).map((n) => `${n.target.join(" ")} — ${n.failureSummary?.split("\n").join(" ")}`).join("\n    ")}`,
  );
  assert.equal(results.violations.length, 0, `axe-core on ${what}:\n  ${summary.join("\n  ")}`);
  assert.ok(results.passes.length > 10, "axe-core ran its rules");
}

/** One picture of each page goes to docs/ (the others stay test artifacts). */
const FOR_DOCS = new Set(["lobby.png", "match-pentago.png", "match-pentago-arbiter.png", "match-quoridor.png", "match-pente.png"]);

async function shoot(page, name) {
  await page.mouse.move(0, 0);
  // Let the clocks tick once so the picture shows a running clock.
  await page.waitForTimeout(300);
  const path = artifactPath(name);
  await page.screenshot({ path, fullPage: true });
  if (process.env.HAKEM_DOCS_SCREENSHOTS === "1" && FOR_DOCS.has(name)) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    copyFileSync(path, join(SCREENSHOTS, name));
  }
}

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

test("axe-core finds no violations; screenshots of the Pentago match page", { skip, timeout: 120000 }, async () => {
  const host = await newPage(browser);
  const links = await createMatch(host, server, { game: "pentago", variant: "tr" });
  await assertNoViolations(host, "the match list with a new match");
  await shoot(host, "lobby.png");

  const p1 = await newPage(browser);
  const p2 = await newPage(browser);
  const watcher = await newPage(browser);
  const arbiter = await newPage(browser);
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
  await shoot(watcher, "match-pentago.png");
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
  await shoot(p1, "match-pentago-player.png");
  await shoot(arbiter, "match-pentago-arbiter.png");

  // The Turkish page passes too.
  await p2.click("#lang-switch");
  await p2.waitForFunction(() => document.documentElement.lang === "tr");
  assert.match(await p2.textContent("#turn-line"), /hamlesini yaptı|sıra/i);
  await assertNoViolations(p2, "the match page in Turkish");
  await shoot(p2, "match-pentago-tr.png");
});

test("screenshots and axe-core: Quoridor and Pente match pages", { skip, timeout: 120000 }, async () => {
  const host = await newPage(browser);
  const q = await createMatch(host, server, { game: "quoridor", sets: "1", clock: "10" });
  const q1 = await newPage(browser);
  const q2 = await newPage(browser);
  await openMatch(q1, q.p1);
  await openMatch(q2, q.p2);
  await readyBoth(q1, q2);
  await playClicks(q1, q2, "e2 e8 e3 a1h e4 c1h e5 g1h e6 e6v".split(" "), { quoridor: true });
  await q1.waitForSelector(".walls .wall.v");
  assert.equal(await q1.$$eval(".walls .wall:not(.preview)", (walls) => walls.length), 4);
  await assertNoViolations(q1, "the match page (Quoridor)");
  await shoot(q1, "match-quoridor.png");

  const p = await createMatch(host, server, { game: "pente", sets: "1", clock: "10" });
  const w = await newPage(browser);
  const b = await newPage(browser);
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
  await shoot(w, "match-pente.png");
});
