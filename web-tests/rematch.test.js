// A rematch from the finished match page: one player offers, the other is told and accepts,
// and both pages move to the new match, each in the other seat.

import { test } from "node:test";
import assert from "node:assert/strict";
import { announcements, assertNoViolations, createMatch, newPage, openMatch, testBed } from "./helpers.js";

const bed = testBed();

test("a finished round offers a rematch; both accept and play on in swapped seats", { skip: bed.skip, timeout: 120000 }, async () => {
  const host = await newPage(bed.browser);
  const links = await createMatch(host, bed.server, { game: "pente", sets: "1", p1: "Ayşe Yılmaz", p2: "Bora Kaya" });
  const ayse = await newPage(bed.browser);
  const bora = await newPage(bed.browser, { locale: "tr-TR" });
  await openMatch(ayse, links.p1);
  await openMatch(bora, links.p2);
  assert.equal(await ayse.isHidden("#rematch"), true, "no rematch while the round is on");
  await ayse.click("#ready");
  await bora.click("#ready");
  await ayse.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
  // Ayşe resigns the one set (the button asks twice): the round is over.
  await ayse.click("#resign");
  await ayse.click("#resign");
  for (const page of [ayse, bora]) await page.waitForSelector("#rematch:not([hidden])");
  assert.equal(await ayse.textContent("#rematch-button"), "Offer a rematch");
  await assertNoViolations(ayse, "a finished match with the rematch offer");

  await ayse.click("#rematch-button");
  await ayse.waitForFunction(() => document.querySelector("#rematch-said").textContent.startsWith("You offered a rematch"));
  assert.equal(await ayse.getAttribute("#rematch-button", "disabled"), "");
  await bora.waitForFunction(() => document.querySelector("#rematch-button").textContent === "Rövanşı kabul et");
  assert.ok((await announcements(bora)).includes("Rakibiniz rövanş teklif ediyor."));

  await bora.click("#rematch-button");
  for (const page of [ayse, bora]) {
    await page.waitForFunction((old) => !location.hash.includes(old), links.id);
    await page.waitForSelector("#ready");
  }
  const seatOf = (page) => page.evaluate(() => new URLSearchParams(location.hash.split("?")[1]).get("seat"));
  const [a, b] = [await seatOf(ayse), await seatOf(bora)];
  assert.ok(a && b && a !== b, "each has a seat token of the new match");
  const id = decodeURIComponent(/#\/match\/([^?]+)/.exec(await ayse.evaluate(() => location.hash))[1]);
  const state = await (await fetch(`${bed.server.url}/api/matches/${id}`)).json();
  assert.equal(state.players.p1.name, "Bora Kaya");
  assert.equal(state.players.p2.name, "Ayşe Yılmaz");
  // Bora moves first now; Ayşe's page says it is not her turn.
  await bora.click("#ready");
  await ayse.click("#ready");
  await bora.waitForFunction(() => document.querySelector("#turn-line").textContent.length > 0);
  assert.ok((await announcements(ayse)).includes("The rematch is ready: you are in your new seat."));
});
