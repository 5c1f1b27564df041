// A match whose spectators see it late: the spectator's page says so and shows the moves only
// when the server lets them through; a player's page sees them at once and says what
// spectators see. Both pages in both languages pass axe-core.

import { test } from "node:test";
import assert from "node:assert/strict";
import { assertNoViolations, moveList, newPage, protocolClient, testBed } from "./helpers.js";

const bed = testBed();

const text = (page, selector) => page.$eval(selector, (node) => node.textContent.trim());

test("spectators of a delayed match see it late, and are told; players see it live", { skip: bed.skip, timeout: 120000 }, async () => {
  const organizer = await protocolClient(bed.browser, bed.server);
  const created = await organizer.request({
    type: "create_match",
    game: "pentago",
    players: { p1: "Ayşe Yılmaz", p2: "Bora Kaya" },
    spectator_delay: { seconds: 4 },
  });
  const id = created.match;
  const p1 = await protocolClient(bed.browser, bed.server, null);
  const p2 = await protocolClient(bed.browser, bed.server, null);
  await p1.request({ type: "join", match: id, seat_token: created.seat_tokens.p1 });
  await p2.request({ type: "join", match: id, seat_token: created.seat_tokens.p2 });
  await p1.request({ type: "ready", match: id });
  await p2.request({ type: "ready", match: id });
  await p1.request({ type: "move", match: id, move: "b1sw" });

  const watcher = await newPage(bed.browser);
  await watcher.goto(`${bed.server.url}/#/match/${id}`);
  await watcher.waitForSelector("#spectator-delay:not([hidden])");
  assert.equal(await text(watcher, "#spectator-delay"), "You see this match 4 s behind the play, against cheating; the players and the arbiter see it live.");
  assert.deepEqual(await moveList(watcher), [], "the move is not shown yet");
  await assertNoViolations(watcher, "the page of a delayed match, spectator");

  const player = await newPage(bed.browser, { locale: "tr-TR" });
  await player.goto(`${bed.server.url}/#/match/${id}?seat=${created.seat_tokens.p2}`);
  await player.waitForSelector("#spectator-delay:not([hidden])");
  assert.equal(await text(player, "#spectator-delay"), "İzleyiciler bu maçı oyunun 4 saniye gerisinden görür; siz canlı görüyorsunuz.");
  await player.waitForFunction(() => document.querySelectorAll("#moves .mv").length === 1);
  await assertNoViolations(player, "the page of a delayed match, player, Turkish");

  // The server lets the move through to the spectator four seconds after it was made.
  await watcher.waitForFunction(() => document.querySelectorAll("#moves .mv").length === 1, null, { timeout: 15000 });
  for (const client of [organizer, p1, p2]) await client.close();
});
