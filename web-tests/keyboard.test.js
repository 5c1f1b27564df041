// Keyboard-only play of a Pentago move, the live region that announces it in words, and
// keyboard play of Quoridor and Pente moves.

import { test } from "node:test";
import assert from "node:assert/strict";
import { announcements, createMatch, moveList, newPage, openMatch, testBed } from "./helpers.js";

const bed = testBed();

async function readyBoth(p1, p2) {
  await p1.click("#ready");
  await p2.click("#ready");
  await p1.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
}

/** Moves the board cursor to `cell` with the arrow keys only. */
async function cursorTo(page, cell) {
  const current = await page.evaluate(() => document.activeElement?.dataset?.cell);
  assert.ok(current, "the board has the focus");
  const pos = (name) => ({ file: name.charCodeAt(0) - 97, rank: Number(name.slice(1)) });
  const from = pos(current);
  const to = pos(cell);
  for (let i = from.file; i < to.file; i++) await page.keyboard.press("ArrowRight");
  for (let i = from.file; i > to.file; i--) await page.keyboard.press("ArrowLeft");
  for (let i = from.rank; i < to.rank; i++) await page.keyboard.press("ArrowUp");
  for (let i = from.rank; i > to.rank; i--) await page.keyboard.press("ArrowDown");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.cell), cell);
}

test("a Pentago move by keyboard only, announced in words in the live region", { skip: bed.skip, timeout: 120000 }, async () => {
  const host = await newPage(bed.browser);
  const links = await createMatch(host, bed.server, { game: "pentago", variant: "tr" });
  const p1 = await newPage(bed.browser);
  const p2 = await newPage(bed.browser);
  const watcher = await newPage(bed.browser);
  await openMatch(p1, links.p1);
  await openMatch(p2, links.p2);
  await openMatch(watcher, links.watch);
  await readyBoth(p1, p2);

  // B goes to the board; the grid is labelled and its cursor cell says its name.
  await p1.keyboard.press("b");
  const grid = await p1.getAttribute("[role=grid]", "aria-label");
  assert.match(grid, /Pentago board/);
  await cursorTo(p1, "d4");
  const focused = await p1.evaluate(() => {
    const cell = document.activeElement;
    const style = getComputedStyle(cell);
    return { role: cell.getAttribute("role"), label: cell.getAttribute("aria-label"), outline: style.outlineStyle, width: parseFloat(style.outlineWidth) };
  });
  assert.equal(focused.role, "gridcell");
  assert.equal(focused.label, "d4, empty");
  assert.notEqual(focused.outline, "none", "the cursor cell has a visible focus ring");
  assert.ok(focused.width >= 2, "a focus ring at least 2px wide");

  await p1.keyboard.press("Enter"); // place on d4
  await p2.waitForFunction(() => document.querySelector('[data-cell="d4"]').getAttribute("aria-label").includes("Black marble"));
  await p1.keyboard.press("w"); // the north-east quadrant
  // L (counter-clockwise) is refused under Turkish rules, and changes nothing: the quadrant
  // stays chosen, so R turns it without choosing again.
  await p1.keyboard.press("l");
  await p1.waitForFunction(() => !document.querySelector("#alert").hidden);
  await p1.keyboard.press("r"); // turned clockwise
  assert.doesNotMatch(await p1.textContent("#announcer"), /Pick a quadrant first/);
  await p1.waitForSelector("#press:not([disabled])");
  await p1.keyboard.press(" "); // the space bar presses the clock
  await p2.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));

  assert.deepEqual(await moveList(p2), ["d4ne"]);
  assert.deepEqual(await moveList(watcher), ["d4ne"]);
  // d4 lies in the north-east quadrant: after the clockwise turn the marble is on d6.
  assert.match(await watcher.getAttribute('[data-cell="d6"]', "aria-label"), /Black marble, last move/);
  for (const page of [p1, p2, watcher]) {
    await page.waitForFunction(() => document.querySelector("#announcer").textContent.includes("Black pressed the clock."));
    const said = await announcements(page);
    assert.ok(said.includes("Black d4, north-east turned clockwise"), JSON.stringify(said));
  }
  assert.ok((await announcements(p2)).includes("Black pressed the clock. Your turn."));
  assert.equal(await p1.getAttribute("#announcer", "aria-live"), "polite");

  // T reads the remaining times on demand.
  await p2.keyboard.press("t");
  await p2.waitForFunction(() => /Ayşe Yılmaz: \d+ minutes/.test(document.querySelector("#announcer").textContent));

  // A mistake is explained in plain words: White presses before moving.
  await p2.keyboard.press("b");
  await p2.keyboard.press(" ");
  await p2.waitForFunction(() => document.querySelector("#alert").textContent.includes("Your move is not complete"));
});

test("Quoridor and Pente moves by keyboard", { skip: bed.skip, timeout: 120000 }, async () => {
  const host = await newPage(bed.browser);
  const q = await createMatch(host, bed.server, { game: "quoridor", sets: "1" });
  const p1 = await newPage(bed.browser);
  const p2 = await newPage(bed.browser);
  await openMatch(p1, q.p1);
  await openMatch(p2, q.p2);
  await readyBoth(p1, p2);
  await p1.keyboard.press("b");
  assert.equal(await p1.evaluate(() => document.activeElement.dataset.cell), "e1");
  await p1.keyboard.press("ArrowUp");
  await p1.keyboard.press("Enter");
  await p1.keyboard.press(" ");
  await p2.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
  // A horizontal wall by keyboard: H, then the wall's lower left square, then Enter.
  await p2.keyboard.press("b");
  await p2.keyboard.press("h");
  await cursorTo(p2, "d2");
  await p2.keyboard.press("Enter");
  await p2.keyboard.press(" ");
  await p1.waitForFunction(() => document.querySelectorAll("#moves .mv").length === 2);
  assert.deepEqual(await moveList(p1), ["e2", "d2h"]);
  assert.ok((await announcements(p1)).includes("Bora Kaya: horizontal wall at d2"));

  const pe = await createMatch(host, bed.server, { game: "pente", sets: "1" });
  const w = await newPage(bed.browser);
  const b = await newPage(bed.browser);
  await openMatch(w, pe.p1);
  await openMatch(b, pe.p2);
  await readyBoth(w, b);
  await w.keyboard.press("b");
  assert.equal(await w.evaluate(() => document.activeElement.dataset.cell), "K10");
  await w.keyboard.press("Enter");
  await w.keyboard.press(" ");
  await b.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
  assert.deepEqual(await moveList(b), ["K10"]);
  assert.ok((await announcements(b)).includes("White K10"));
});
