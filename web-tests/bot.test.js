// Playing the computer: the lobby's "Play against the computer" creates a match with the
// server's own bot on the other seat and opens the person's seat at once. The person plays a
// whole Pentago set by mouse against level 1; every answer of the bot shows on the board and in
// the move list. axe-core checks the form and the match page; a screenshot goes to artifacts/
// (and to docs/screenshots/ with HAKEM_DOCS_SCREENSHOTS=1).

import { test } from "node:test";
import assert from "node:assert/strict";
import { assertNoViolations, moveList, newPage, shoot, testBed } from "./helpers.js";

const bed = testBed();

/** Fills the lobby's form for a game against the computer and presses its button. */
async function playComputer(page, { game = "pentago", sets = "1", clock = "15", level = "1", side = "first", name = "", keyboard = false }) {
  await page.goto(`${bed.server.url}/#/`);
  // The computer's fields appear only once it is chosen.
  assert.equal(await page.isVisible("#bot-level"), false);
  if (keyboard) {
    // The choice is a group of radio buttons: an arrow key moves to "Play against the computer".
    await page.focus("#opponent-person");
    await page.keyboard.press("ArrowDown");
    assert.equal(await page.evaluate(() => document.activeElement.id), "opponent-computer");
  } else {
    await page.check("#opponent-computer");
  }
  await page.waitForSelector("#bot-level", { state: "visible" });
  assert.equal(await page.isVisible("#p1"), false);
  await page.selectOption("#game", game);
  await page.selectOption("#sets", sets);
  await page.selectOption("#clock", clock);
  await page.selectOption("#bot-level", level);
  await page.check(`#side-${side}`);
  if (name) await page.fill("#me", name);
}

/** The number of marbles of each colour on the board. */
async function marbles(page) {
  return page.evaluate(() => ({
    x: document.querySelectorAll(".cell.has-x").length,
    o: document.querySelectorAll(".cell.has-o").length,
  }));
}

test("a person plays a Pentago set by mouse against the computer at level 1", { skip: bed.skip, timeout: 240000 }, async () => {
  const page = await newPage(bed.browser);
  await playComputer(page, { level: "1", side: "first", name: "Ayşe Yılmaz" });
  assert.match(await page.textContent("#create-button"), /Play against the computer/);
  assert.match(await page.textContent('label[for="side-first"]'), /First \(Black\)/);
  await assertNoViolations(page, "the match list with the computer chosen");
  await shoot(page, "lobby-vs-computer.png", { tick: 300 });

  // Creating it opens the match page in the person's own seat; the bot sits on the other.
  await page.click("#create-button");
  await page.waitForFunction(() => /^#\/match\/[^?]+\?seat=/.test(location.hash));
  await page.waitForSelector("[role=grid] [role=gridcell]");
  await page.waitForFunction(() => document.querySelector("#role").textContent.includes("You play as Ayşe Yılmaz"));
  await page.waitForFunction(() => document.querySelector("#seat-p2 .seat-name").textContent === "computer (level 1)");
  assert.equal(await page.textContent("#seat-p1 .seat-name"), "Ayşe Yılmaz");
  // Claims go to an arbiter: there is none to claim to against the computer; nor a tournament.
  await page.waitForFunction(() => document.querySelector("#claim-text")?.closest("form")?.hidden === true);
  assert.equal(await page.isVisible("#tournament-link"), false);
  // The Ready button has the focus, and the page says what to do.
  await page.waitForFunction(() => document.activeElement?.id === "ready");
  await page.waitForFunction(() => document.querySelector("#announcer").textContent.includes("Match against the computer (level 1) created"));
  await assertNoViolations(page, "the match page against the computer, before the first set");

  // The bot readies itself: one press starts the set.
  await page.click("#ready");
  await page.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));

  let answers = 0;
  for (let turn = 0; turn < 18; turn++) {
    const before = (await moveList(page)).length;
    assert.equal(before, turn * 2);
    // A cell the server marks as legal, then any arrow that may be used, then the clock.
    await page.waitForSelector(".cell.legal");
    const legal = await page.$$eval(".cell.legal", (nodes) => nodes.map((node) => node.dataset.cell));
    const cell = legal[(turn * 7 + 14) % legal.length];
    await page.click(`[data-cell="${cell}"]`);
    const arrow = ".turn[data-dir=cw]:not([disabled])";
    await page.waitForSelector(arrow);
    await page.click(arrow);
    const next = await page.waitForFunction((n) => {
      if (document.querySelector('#sets li[data-set="1"]')) return "over";
      const pressable = document.querySelector("#press:not([disabled])");
      return pressable && document.querySelectorAll("#moves .mv").length === n + 1 ? "press" : null;
    }, before);
    if ((await next.jsonValue()) === "over") break;
    await page.click("#press");

    // The bot answers: its move comes after ours in the move list and its marble is on the board.
    const done = await page.waitForFunction(
      (n) => {
        if (document.querySelector('#sets li[data-set="1"]')) return "over";
        const moves = document.querySelectorAll("#moves .mv").length;
        const mine = document.querySelector("#turn-line").textContent.includes("Your turn");
        return moves === n + 2 && mine ? "answered" : null;
      },
      before,
      { timeout: 20000 },
    );
    const moves = await moveList(page);
    if (moves.length === before + 2) {
      answers += 1;
      const reply = moves[before + 1];
      assert.match(reply, /^[a-f][1-6](nw|ne|sw|se)'?$/, `the bot's move ${reply}`);
      // Each move leaves one marble: White's (the bot's) count is the number of its moves.
      await page.waitForFunction((n) => document.querySelectorAll(".cell.has-o").length === n && document.querySelectorAll(".cell.has-x").length === n, turn + 1);
      // The last move is marked where the bot's marble ended, and said in words.
      assert.equal(await page.$$eval(".cell.last", (nodes) => nodes.length), 1);
      assert.ok(await page.$eval(".cell.last", (node) => node.classList.contains("has-o")), "the last move is a white marble");
      assert.match(await page.getAttribute(".cell.last", "aria-label"), /White marble, last move/);
      assert.match(await page.textContent("#log"), new RegExp(`White ${reply.slice(0, 2)}`));
    }
    if ((await done.jsonValue()) === "over") break;
    if (turn === 3) await shoot(page, "match-vs-computer.png", { docs: true, tick: 300 });
  }
  assert.ok(answers >= 4, `the bot answered ${answers} moves`);

  // The set ends (one set: the match too), on the board and in the score.
  await page.waitForFunction(() => document.querySelector('#sets li[data-set="1"]'), null, { timeout: 20000 });
  await page.waitForSelector("#result:not([hidden])");
  // A finished match is a finished page: the result once, no controls for play.
  assert.equal(await page.$eval("#turn-line", (node) => node.hidden), true, "the result is not said twice");
  assert.equal(await page.$eval("#play-controls", (node) => node.hidden), true, "no resign, auto-press or claim once the round is over");
  const moves = await moveList(page);
  const count = await marbles(page);
  assert.equal(count.x + count.o, moves.length);
  assert.match(await page.textContent("#sets"), /Ayşe Yılmaz . – . computer \(level 1\)/);
  await assertNoViolations(page, "the match page against the computer, the set over");
  await shoot(page, "match-vs-computer-over.png", { tick: 300 });
});

test("moving second against the computer, in Turkish: the bot makes the first move", { skip: bed.skip, timeout: 120000 }, async () => {
  const page = await newPage(bed.browser, { locale: "tr-TR" });
  await playComputer(page, { game: "quoridor", sets: "3", clock: "10", level: "1", side: "second", keyboard: true });
  assert.match(await page.textContent("#create-button"), /Bilgisayara karşı oyna/);
  assert.match(await page.textContent('label[for="side-second"]'), /Sonra \(e9'dan başlayan piyon\)/);
  await assertNoViolations(page, "the Turkish match list with the computer chosen");
  await page.click("#create-button");
  await page.waitForFunction(() => /\?seat=/.test(location.hash));
  await page.waitForSelector("[role=grid] [role=gridcell]");
  await page.waitForFunction(() => document.querySelector("#seat-p1 .seat-name").textContent === "bilgisayar (1. seviye)");
  assert.match(await page.textContent("#role"), /2\. oyuncu olarak oynuyorsunuz/);
  await page.waitForFunction(() => document.activeElement?.id === "ready");
  // Space on the focused button: the keyboard alone starts the set.
  await page.keyboard.press("Space");
  // The bot moves first (its pawn from e1): a pawn step or a wall, on the board and in the list.
  await page.waitForFunction(() => document.querySelectorAll("#moves .mv").length === 1);
  const [first] = await moveList(page);
  if (/^[a-h][1-8][hv]$/.test(first)) await page.waitForSelector(".walls .wall.last");
  else await page.waitForSelector(`[data-cell="${first}"].has-first.last`);
  await page.waitForSelector(".cell.legal");
  assert.match(await page.textContent("#turn-line"), /Sıra sizde/);
  await assertNoViolations(page, "the Turkish match page against the computer");
});
