// The replay of a finished match: press by press with buttons and keys, the board and both
// clocks as they were, each step said in the live region, the game record to download; from
// the match page once it is finished.

import { test } from "node:test";
import assert from "node:assert/strict";
import { announcements, assertNoViolations, createMatch, newPage, protocolClient, shoot, testBed } from "./helpers.js";

/** Pentago `tr`, won by the first mover with a double five (from the server's own tests). */
const TR_FIRST_WINS =
  "b1sw e5sw f6sw c6nw d6nw c6nw e6sw f1nw e2nw e4ne c6nw c1sw f2nw e1nw a3se f3se e4se b1sw c4sw b6sw d2sw f1se c3sw d4ne b5nw b1se b2ne f4ne c2nw b6se f2sw".split(" ");

const bed = testBed();

const text = (page, selector) => page.$eval(selector, (node) => node.textContent.trim());

test("a finished match replayed press by press, with keys and buttons, the record to download", { skip: bed.skip, timeout: 120000 }, async () => {
  const host = await newPage(bed.browser);
  const links = await createMatch(host, bed.server, { game: "pentago", variant: "tr", sets: "1" });
  const token = (link) => new URL(link.replace("#/match/", "match/")).searchParams.get("seat");
  const p1 = await protocolClient(bed.browser, bed.server, null);
  const p2 = await protocolClient(bed.browser, bed.server, null);
  await p1.request({ type: "join", match: links.id, seat_token: token(links.p1) });
  await p2.request({ type: "join", match: links.id, seat_token: token(links.p2) });
  await p1.request({ type: "ready", match: links.id });
  await p2.request({ type: "ready", match: links.id });
  for (const [i, mv] of TR_FIRST_WINS.entries()) await (i % 2 === 0 ? p1 : p2).request({ type: "move", match: links.id, move: mv });

  // The finished match page offers the replay.
  const page = await newPage(bed.browser);
  await page.goto(links.watch);
  await page.waitForSelector("#replay-link:not([hidden])", { state: "attached" });
  await page.waitForFunction(() => !document.querySelector(".replay-link").hidden);
  await page.click("#replay-link");
  await page.waitForSelector("#replay-where");
  // It opens at the end: the last move, the set's result.
  assert.equal(await text(page, "#replay-where"), `Set 1, after move ${TR_FIRST_WINS.length} of ${TR_FIRST_WINS.length}`);
  assert.match(await text(page, "#replay-said"), /Ayşe Yılmaz won set 1: five in a row for both/);
  assert.equal(await page.getAttribute("#replay-next", "disabled"), "");

  // Home: the empty board; the clocks full.
  await page.keyboard.press("Home");
  await page.waitForFunction(() => document.querySelector("#replay-where").textContent.includes("before the first move"));
  assert.equal(await page.$$eval(".cell.has-x, .cell.has-o", (cells) => cells.length), 0);
  assert.equal(await text(page, "#replay-clock-p1"), "15:00");
  // → : b1 placed and the south-west quadrant turned clockwise, so the marble is on a2; said.
  await page.keyboard.press("ArrowRight");
  await page.waitForSelector('[data-cell="a2"].has-x');
  assert.equal(await text(page, "#replay-where"), `Set 1, after move 1 of ${TR_FIRST_WINS.length}`);
  await page.waitForFunction(() => document.querySelector("#announcer").textContent.includes("Black b1, south-west turned clockwise"));
  // The buttons too: two on, one back.
  await page.click("#replay-next");
  await page.click("#replay-next");
  await page.click("#replay-prev");
  assert.equal(await text(page, "#replay-where"), `Set 1, after move 2 of ${TR_FIRST_WINS.length}`);
  assert.equal(await page.$$eval(".cell.has-x, .cell.has-o", (cells) => cells.length), 2);
  await page.keyboard.press("End");
  assert.equal(await page.$$eval(".cell.has-x, .cell.has-o", (cells) => cells.length), TR_FIRST_WINS.length);

  // The record downloads from the server.
  const href = await page.getAttribute("#replay-record", "href");
  assert.equal(href, `/api/matches/${links.id}/record`);
  const record = await (await fetch(`${bed.server.url}${href}`)).text();
  assert.match(record, /\[Result "1-0"\]/);
  assert.ok((await announcements(page)).length > 0);

  // The solver, on demand: before the last move, Black (to move) wins, and f2sw keeps it.
  await page.keyboard.press("End");
  await page.keyboard.press("ArrowLeft");
  await page.click("#analyse");
  await page.waitForSelector("#analysis-verdict", { timeout: 30000 });
  assert.match(await text(page, "#analysis-verdict"), /Ayşe Yılmaz to move wins with best play\. Moves that keep it: .*f2sw/);
  assert.ok(await page.$("#turning-points"));
  await assertNoViolations(page, "the replay of a finished match");
  await shoot(page, "replay.png", { docs: true });
  await p1.close();
  await p2.close();
});

test("in Turkish, and an unknown match says so", { skip: bed.skip, timeout: 60000 }, async () => {
  const page = await newPage(bed.browser, { locale: "tr-TR" });
  await page.goto(`${bed.server.url}/#/replay/no-such-match`);
  await page.waitForSelector("#replay-fatal");
  await assertNoViolations(page, "the replay of an unknown match, in Turkish");
  await page.close();
});
