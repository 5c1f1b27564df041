// Two browser pages play a whole Pentago set against each other through a real hakem-server;
// a third page watches and sees every move; an arbiter page warns a player and the warning
// shows on both players' pages.

import { test } from "node:test";
import assert from "node:assert/strict";
import { assertNoViolations, createMatch, moveList, newPage, openMatch, testBed } from "./helpers.js";

/** Pentago `tr`, won by the first mover with a double five (from the server's own tests). */
const TR_FIRST_WINS =
  "b1sw e5sw f6sw c6nw d6nw c6nw e6sw f1nw e2nw e4ne c6nw c1sw f2nw e1nw a3se f3se e4se b1sw c4sw b6sw d2sw f1se c3sw d4ne b5nw b1se b2ne f4ne c2nw b6se f2sw".split(" ");

const bed = testBed();

/** Plays one move by mouse: a cell, then a quadrant arrow, then (unless the set ends) the clock. */
async function playByMouse(page, mv, last) {
  const m = /^([a-f][1-6])(nw|ne|sw|se)('?)$/.exec(mv);
  assert.ok(m, mv);
  const dir = m[3] ? "ccw" : "cw";
  await page.click(`[data-cell="${m[1]}"]`);
  const arrow = `.turn[data-quadrant="${m[2]}"][data-dir="${dir}"]:not([disabled])`;
  await page.waitForSelector(arrow);
  await page.click(arrow);
  if (!last) {
    await page.waitForSelector("#press:not([disabled])");
    await page.click("#press");
  }
}

test("two pages play a Pentago set to the end, a spectator sees every move, the arbiter warns", { skip: bed.skip, timeout: 240000 }, async () => {
  const host = await newPage(bed.browser);
  const links = await createMatch(host, bed.server, { game: "pentago", variant: "tr" });
  const p1 = await newPage(bed.browser);
  const p2 = await newPage(bed.browser);
  const watcher = await newPage(bed.browser);
  const arbiter = await newPage(bed.browser);
  await openMatch(p1, links.p1);
  await openMatch(p2, links.p2);
  await openMatch(watcher, links.watch);
  await openMatch(arbiter, links.arbiter);
  assert.match(await p1.textContent("#role"), /You play as Ayşe Yılmaz/);
  assert.match(await watcher.textContent("#role"), /watching/);

  // Sounds are off until turned on (here on Bora Kaya's page).
  assert.equal(await p2.isChecked("#sounds"), false);
  await p2.check("#sounds");
  await p1.click("#ready");
  await p2.click("#ready");
  await p1.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
  // The tab's title says whose turn it is.
  assert.equal(await p1.title(), "● Your turn · Pentago: Ayşe Yılmaz – Bora Kaya — hakem");
  assert.equal(await p2.title(), "Ayşe Yılmaz to move · Pentago: Ayşe Yılmaz – Bora Kaya — hakem");
  // The legal cells come from the server and are marked on the mover's board only.
  await p1.waitForSelector('[data-cell="b1"].legal');
  assert.equal(await watcher.$$eval(".cell.legal", (cells) => cells.length), 0);

  for (const [i, mv] of TR_FIRST_WINS.entries()) {
    const mover = i % 2 === 0 ? p1 : p2;
    const last = i === TR_FIRST_WINS.length - 1;
    await playByMouse(mover, mv, last);
    if (!last) {
      // The opponent acts once the press has reached it.
      const next = mover === p1 ? p2 : p1;
      await next.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
    }
    // The spectator sees this move before the next one is made.
    await watcher.waitForFunction(
      ([n, expected]) => {
        const moves = [...document.querySelectorAll("#moves .mv")].map((node) => node.textContent);
        return moves.length === n && moves[n - 1] === expected;
      },
      [i + 1, mv],
    );

    if (i === 0) {
      // A move sounds on the page that turned sounds on, and only there.
      await p2.waitForFunction(() => document.body.dataset.sound === "move");
      assert.equal(await p1.evaluate(() => document.body.dataset.sound ?? null), null);
    }
    if (i === 6) {
      // The arbiter warns Bora Kaya (p2) with a reason; both players see it.
      await arbiter.selectOption("#warn-seat", "p2");
      await arbiter.fill("#warn-reason", "Talking during play");
      await arbiter.click("#warn-form button[type=submit]");
      for (const page of [p1, p2, watcher]) {
        await page.waitForFunction(() => document.querySelector("#seat-p2 .seat-facts").textContent.includes("Warnings: 1/3"));
        await page.waitForFunction(() => document.querySelector("#log").textContent.includes("Talking during play"));
      }
      assert.match(await p2.textContent("#alert"), /Warning to Bora Kaya, 1 of 3: Talking during play/);
    }
  }

  // The set is over: a double five for Black (Ayşe Yılmaz), shown on every page.
  for (const page of [p1, p2, watcher, arbiter]) {
    await page.waitForFunction(() => document.querySelector("#sets").textContent.includes("Ayşe Yılmaz won set 1: five in a row for both, the mover wins"));
    assert.match(await page.textContent("#sets"), /Ayşe Yılmaz 1 – 0 Bora Kaya/);
    assert.match(await page.textContent("#sets"), /five in a row for both/);
  }
  assert.deepEqual(await moveList(watcher), TR_FIRST_WINS);
  await p2.waitForFunction(() => document.body.dataset.sound === "end");
  assert.deepEqual(await moveList(p2), TR_FIRST_WINS);
  // Both may get ready for set 2, in which Bora Kaya moves first.
  await p2.waitForSelector("#ready:not([hidden])");
  assert.match(await p2.textContent("#ready"), /Ready for set 2/);

  // Set 2: the stones stay with the seats, so Bora Kaya moves first with the white marbles.
  await p1.click("#ready");
  await p2.click("#ready");
  await p2.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
  assert.match(await watcher.textContent("#turn-line"), /Bora Kaya \(White\)/);
  assert.match(await watcher.textContent("#seat-p1 .seat-tags"), /Black/);
  assert.match(await watcher.textContent("#seat-p2 .seat-tags"), /White/);
  await playByMouse(p2, "a1sw", false);
  await watcher.waitForFunction(() => document.querySelectorAll("#moves .mv").length === 1);
  // a1 turned clockwise with the south-west quadrant ends on a3: a white marble, said as White's.
  await watcher.waitForSelector('[data-cell="a3"].has-o');
  assert.equal(await watcher.$$eval(".cell.has-x", (cells) => cells.length), 0);
  assert.match(await watcher.getAttribute('[data-cell="a3"]', "aria-label"), /White marble/);
  assert.match(await watcher.textContent("#log"), /White a1/);
});

test("a claim made while no arbiter watches waits for one, who upholds it with a warning", { skip: bed.skip, timeout: 120000 }, async () => {
  const host = await newPage(bed.browser);
  const links = await createMatch(host, bed.server, { game: "pentago", variant: "tr" });
  const p1 = await newPage(bed.browser);
  const p2 = await newPage(bed.browser);
  await openMatch(p1, links.p1);
  await openMatch(p2, links.p2);
  await p1.click("#ready");
  await p2.click("#ready");
  await p1.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
  await playByMouse(p1, "b1sw", false);
  await p2.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
  await p2.fill("#claim-text", "He touched two marbles");
  await p2.click("#claim-form button[type=submit]");
  await p2.waitForSelector("#claim-1.open");
  assert.match(await p2.textContent("#claim-1"), /by Bora Kaya, about move 1 of set 1 · waiting for the arbiter/);

  // The arbiter comes later and finds the claim open; a spectator sees no claims list.
  const arbiter = await newPage(bed.browser);
  await openMatch(arbiter, links.arbiter);
  await arbiter.waitForSelector("#claim-1.open");
  assert.match(await arbiter.textContent("#claim-1"), /He touched two marbles/);
  const watcher = await newPage(bed.browser);
  await openMatch(watcher, links.watch);
  assert.equal(await watcher.$$eval("#claims", (nodes) => nodes.length), 0);
  await assertNoViolations(arbiter, "the arbiter's page with an open claim");
  // Another language redraws the page: the claim stays, with its buttons.
  await arbiter.click("#lang-switch");
  await arbiter.waitForSelector("#claim-1.open #claim-1-uphold");
  assert.match(await arbiter.textContent("#claim-1-uphold"), /Kabul et/);
  await arbiter.click("#lang-switch");
  await arbiter.waitForSelector("#claim-1.open #claim-1-uphold");

  await arbiter.fill("#claim-1-reason", "Seen on the board camera");
  await arbiter.check("#claim-1-warn");
  await arbiter.click("#claim-1-uphold");
  for (const page of [arbiter, p2, p1]) {
    await page.waitForSelector("#claim-1.upheld");
    assert.match(await page.textContent("#claim-1"), /The arbiter's reason: Seen on the board camera/);
    await page.waitForFunction(() => document.querySelector("#seat-p1 .seat-facts").textContent.includes("Warnings: 1/3"));
  }
  assert.equal(await arbiter.$$eval("#claim-1 button", (nodes) => nodes.length), 0, "a ruled claim has no buttons");
  assert.match(await p1.textContent("#log"), /The arbiter upheld claim 1: Seen on the board camera\./);
});
