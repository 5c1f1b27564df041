// Accounts in the browser: a player registers, lands on their page (their matches, ratings and
// the lobby's seeks), posts a seek; another registers and accepts it; both are seated and told
// "your match is ready"; a challenge is seen and accepted by the one challenged. A wrong
// password is said in words; logging out forgets the session.

import { readFileSync } from "node:fs";
import { test } from "node:test";
import assert from "node:assert/strict";
import { announcements, assertNoViolations, newPage, shoot, testBed } from "./helpers.js";

const bed = testBed(async () => {}, ["--registration", "open"]);

const PASSWORD = "kış-kupası-2026";

async function register(page, name) {
  await page.goto(`${bed.server.url}/#/account`);
  await page.fill("#register-name", name);
  await page.fill("#register-password", PASSWORD);
  await page.fill("#register-again", PASSWORD);
  await page.click("#register-button");
  await page.waitForSelector("#player-title");
  await page.waitForSelector("#seeks");
}

test("register, post a seek, another player accepts it: both are seated", { skip: bed.skip, timeout: 120000 }, async () => {
  const ayse = await newPage(bed.browser);
  await ayse.goto(`${bed.server.url}/#/`);
  await ayse.click("#account-link");
  await ayse.waitForSelector("#login-form");
  await assertNoViolations(ayse, "the account page");
  await shoot(ayse, "account.png", { docs: true, blur: true });

  // The two passwords must agree; nothing is sent otherwise.
  await ayse.fill("#register-name", "ayse");
  await ayse.fill("#register-password", PASSWORD);
  await ayse.fill("#register-again", "something-else");
  await ayse.click("#register-button");
  await ayse.waitForSelector("#account-error");
  assert.equal(await ayse.textContent("#account-error"), "The two passwords differ.");

  await register(ayse, "ayse");
  assert.match(await ayse.textContent("#ratings-heading"), /ayse/);
  assert.equal(await ayse.textContent("#ratings"), "No rated round yet.");
  assert.equal(await ayse.textContent("#seeks"), "No open seek. Post one below, or wait for another player's.");
  // The home page now leads to the player's page.
  await ayse.goto(`${bed.server.url}/#/`);
  assert.match(await ayse.textContent("#account-link"), /^ayse: /);
  await ayse.click("#account-link");
  await ayse.waitForSelector("#seek-form");

  await ayse.selectOption("#seek-game", "pentago:tr");
  await ayse.selectOption("#seek-clock", "5");
  await ayse.check("#seek-rated");
  await ayse.click("#seek-button");
  await ayse.waitForSelector("#seeks li");
  const mine = await ayse.textContent("#seeks li");
  assert.match(mine, /^ayse: Pentago — .*, 5 minutes, rated/);
  assert.ok((await announcements(ayse)).some((line) => line.startsWith("Your seek is in the lobby")));
  assert.equal(await ayse.textContent("#seeks li button"), "Cancel");
  await assertNoViolations(ayse, "the player's page with a seek");

  // Another player, another browser: sees the seek and accepts it.
  const bora = await newPage(bed.browser, { locale: "tr-TR" });
  await register(bora, "bora");
  await bora.waitForSelector("#seeks li");
  assert.equal(await bora.textContent("#seeks li button"), "Kabul et");
  await shoot(bora, "player-seeks.png", { docs: true, blur: true });
  await assertNoViolations(bora, "the player's page in Turkish");
  await bora.click("#seeks li button");

  // Both are told their match is ready, and the seek is gone from the lobby.
  for (const page of [ayse, bora]) {
    await page.waitForSelector("#player-matches li a");
    await page.waitForSelector("p#seeks.empty");
  }
  assert.ok((await announcements(ayse)).some((line) => line === "Your Pentago match is ready."));

  // A challenge: Bora offers Ayşe a game that only she sees, and she accepts it.
  await bora.selectOption("#seek-game", "pente:tournament");
  await bora.fill("#seek-to", "ayse");
  await bora.click("#seek-button");
  await ayse.waitForSelector("#seeks li");
  assert.match(await ayse.textContent("#seeks li span"), /^bora challenges you: Pente/);
  assert.match(await bora.textContent("#seeks li span"), /^ayse oyuncusuna meydan okumanız: Pente/);
  await ayse.click("#seeks li button");
  await ayse.waitForFunction(() => document.querySelectorAll("#player-matches li").length === 2);
  await bora.waitForFunction(() => document.querySelectorAll("#player-matches li").length === 2);
  // Both are among her latest matches, each a link to watch it.
  await ayse.waitForFunction(() => document.querySelectorAll("#recent li").length === 2);
  assert.match(await ayse.textContent("#recent li"), /^Pente: .* 0–0 .* — Not started, watch$/);

  // Anyone's page: Bora looks at Ayşe's.
  await bora.goto(`${bed.server.url}/#/profile/ayse`);
  await bora.waitForSelector("#recent li");
  assert.equal(await bora.textContent("#profile-title"), "ayse");
  assert.equal(await bora.$$eval("#recent li", (items) => items.length), 2);
  await assertNoViolations(bora, "another player's page");
  await bora.goto(`${bed.server.url}/#/profile/nobody`);
  await bora.waitForSelector("#profile-missing");

  const link = await ayse.getAttribute("#player-matches li a", "href");
  assert.match(link, /^#\/match\/[^?]+\?seat=[0-9a-f]{32}$/);
  await ayse.click("#player-matches li a");
  await ayse.waitForSelector("[role=grid] [role=gridcell]");

  // A wrong password, in words; then logging out forgets the session.
  const again = await newPage(bed.browser);
  await again.goto(`${bed.server.url}/#/account`);
  await again.fill("#login-name", "ayse");
  await again.fill("#login-password", "not-the-password");
  await again.click("#login-button");
  await again.waitForSelector("#account-error");
  assert.equal(await again.textContent("#account-error"), "Wrong account name or password.");
  await again.fill("#login-password", PASSWORD);
  await again.click("#login-button");
  await again.waitForSelector("#player-title");
  await again.goto(`${bed.server.url}/#/account`);
  assert.equal(await again.textContent("#account-who"), "Logged in as ayse.");
  // Her data, downloaded as a file.
  const [download] = await Promise.all([again.waitForEvent("download"), again.click("#export-button")]);
  assert.equal(download.suggestedFilename(), "hakem-ayse.json");
  const data = JSON.parse(readFileSync(await download.path(), "utf8"));
  assert.equal(data.account.name, "ayse");
  assert.equal(data.matches.length, 2);
  await again.click("#logout-button");
  await again.waitForSelector("#login-form");
  assert.equal(await again.evaluate(() => localStorage.getItem("hakem.session")), null);
  await again.goto(`${bed.server.url}/#/player`);
  await again.waitForSelector("#player-fatal");
});
