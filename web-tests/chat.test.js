// The match page's chat and draws by agreement: the two players of a casual match talk (one
// page in English, one in Turkish) and no spectator reads them; a logged-in spectator writes in
// the spectators' chat, which the arbiter reads and the players never see; the arbiter turns
// the chat off and mutes a seat and a spectator. In Pente a player offers a draw, the other
// declines, then accepts the next offer, and the set ends drawn by agreement; Pentago and a
// match against the computer offer no draw.

import { test } from "node:test";
import assert from "node:assert/strict";
import { announcements, assertNoViolations, createMatch, newPage, openMatch, protocolClient, shoot, testBed } from "./helpers.js";

const bed = testBed(async () => {}, ["--registration", "open"]);

const text = (page, selector) => page.$eval(selector, (node) => node.textContent.trim());
/** The chat's lines as the page shows them (the time of day left out). */
const chatLines = (page) =>
  page.$$eval("#chat-lines li[data-n]", (items) => items.map((li) => [...li.children].filter((c) => c.tagName !== "TIME").map((c) => c.textContent).join(" ")));
const waitForLine = (page, words) =>
  page.waitForFunction((words) => [...document.querySelectorAll("#chat-lines li[data-n] .chat-text")].some((node) => node.textContent === words), words);

async function say(page, words) {
  await page.fill("#chat-text", words);
  await page.press("#chat-text", "Enter");
  // The field empties once the server has taken the message.
  await page.waitForFunction(() => document.querySelector("#chat-text").value === "");
}

async function readyBoth(p1, p2) {
  await p1.click("#ready");
  await p2.click("#ready");
  await p1.waitForFunction(() => /Your turn|Sıra sizde/.test(document.querySelector("#turn-line").textContent));
}

async function register(page, name) {
  await page.goto(`${bed.server.url}/#/account`);
  await page.fill("#register-name", name);
  await page.fill("#register-password", "kış-kupası-2026");
  await page.fill("#register-again", "kış-kupası-2026");
  await page.click("#register-button");
  await page.waitForSelector("#player-title");
}

test("two players chat in English and Turkish; spectators read none of it", { skip: bed.skip, timeout: 60000 }, async () => {
  const host = await newPage(bed.browser);
  const links = await createMatch(host, bed.server, { game: "pente", sets: "1" });
  const ayse = await newPage(bed.browser);
  const bora = await newPage(bed.browser, { locale: "tr-TR" });
  const watcher = await newPage(bed.browser);
  await openMatch(ayse, links.p1);
  await openMatch(bora, links.p2);
  await openMatch(watcher, links.watch);
  for (const page of [ayse, bora, watcher]) await page.waitForSelector("#chat:not([hidden])");
  assert.equal(await text(ayse, "#chat-heading"), "Players' chat");
  assert.equal(await text(bora, "#chat-heading"), "Oyuncuların sohbeti");
  assert.equal(await text(watcher, "#chat-heading"), "Spectators' chat");
  assert.equal(await text(ayse, "#chat-lines"), "No messages yet.");
  assert.equal(await ayse.getAttribute("#chat-text", "maxlength"), "300");
  // A guest spectator reads the spectators' chat and is told to log in to write.
  assert.equal(await watcher.isHidden("#chat-form"), true);
  assert.match(await text(watcher, "#chat-guest"), /logged in.*Log in to write/);

  // What a player writes is text, never markup.
  const hello = "iyi oyunlar <b>Bora</b>!";
  await say(ayse, hello);
  await waitForLine(bora, hello);
  assert.equal(await bora.$$eval("#chat-lines b", (nodes) => nodes.length), 0, "no markup from a message");
  assert.deepEqual(await chatLines(bora), [`Ayşe Yılmaz: ${hello}`]);
  assert.deepEqual(await chatLines(ayse), [`Ayşe Yılmaz (you): ${hello}`]);
  await bora.waitForFunction((words) => [...document.querySelectorAll("#announcer p")].some((p) => p.textContent === words), `Ayşe Yılmaz sohbete yazdı: ${hello}`);

  await say(bora, "Teşekkürler, sana da!");
  await waitForLine(ayse, "Teşekkürler, sana da!");
  assert.deepEqual(await chatLines(ayse), [`Ayşe Yılmaz (you): ${hello}`, "Bora Kaya: Teşekkürler, sana da!"]);
  assert.ok((await announcements(ayse)).includes("Bora Kaya wrote in the chat: Teşekkürler, sana da!"));
  assert.ok(!(await announcements(ayse)).some((line) => line.includes(hello)), "one's own message is not announced");

  // Too fast: five messages at once, then one every two seconds. The refusal is said in words
  // next to the form, and the text stays in the field.
  let sent = 0;
  for (let i = 1; i <= 7; i++) {
    await ayse.fill("#chat-text", `message ${i}`);
    await ayse.press("#chat-text", "Enter");
    await ayse.waitForFunction(() => document.querySelector("#chat-text").value === "" || document.querySelector("#chat-error").textContent !== "");
    if (await ayse.inputValue("#chat-text")) break;
    sent = i;
  }
  assert.ok(sent >= 4 && sent <= 6, `refused after ${sent} quick messages`);
  assert.equal(await text(ayse, "#chat-error"), "Not sent: you write too fast. Wait a moment.");
  assert.equal(await ayse.inputValue("#chat-text"), `message ${sent + 1}`, "the refused text stays in the field");
  await waitForLine(bora, `message ${sent}`);
  assert.equal((await chatLines(bora)).length, 2 + sent);
  assert.ok(!(await chatLines(bora)).some((line) => line.endsWith(`message ${sent + 1}`)));

  // The spectator, there all along, got none of it; nor does a fresh look at the chat show any.
  assert.equal(await text(watcher, "#chat-lines"), "No messages yet.");
  assert.ok(!(await announcements(watcher)).some((line) => /chat|iyi oyunlar|message/.test(line)));
  await watcher.reload();
  await watcher.waitForSelector("#chat:not([hidden])");
  assert.equal(await watcher.$$eval("#chat-lines li[data-n]", (items) => items.length), 0);

  // A page opened later gets the chat so far (the last 100 lines) from the server.
  const again = await newPage(bed.browser);
  await openMatch(again, links.p2);
  await waitForLine(again, `message ${sent}`);
  const texts = (page) => page.$$eval("#chat-lines .chat-text", (nodes) => nodes.map((n) => n.textContent));
  assert.deepEqual(await texts(again), await texts(bora));
  assert.equal(await again.$$eval("#chat-lines li.mine", (items) => items.length), 1, "Bora's own line is his on this page too");

  await assertNoViolations(ayse, "a player's match page with chat lines and a refusal");
  await assertNoViolations(bora, "a player's match page with chat lines, in Turkish");
  await assertNoViolations(watcher, "a guest spectator's match page with the chat");

  // The page drawn again in the other language keeps the chat and what was being typed.
  await ayse.fill("#chat-text", "half written");
  await ayse.click("#lang-switch");
  await ayse.waitForFunction(() => document.querySelector("#chat-heading").textContent === "Oyuncuların sohbeti");
  assert.equal(await ayse.inputValue("#chat-text"), "half written");
  assert.equal(await text(ayse, "#chat-error"), "Gönderilmedi: çok hızlı yazıyorsunuz. Biraz bekleyin.");
  assert.equal((await chatLines(ayse))[0], `Ayşe Yılmaz (siz): ${hello}`);
});

test("the arbiter reads both chats, turns the chat off and mutes a seat and a spectator", { skip: bed.skip, timeout: 60000 }, async () => {
  const host = await newPage(bed.browser);
  const links = await createMatch(host, bed.server, { game: "quoridor", sets: "1" });
  const arbiter = await newPage(bed.browser);
  const ayse = await newPage(bed.browser);
  const bora = await newPage(bed.browser, { locale: "tr-TR" });
  await openMatch(arbiter, links.arbiter);
  await openMatch(ayse, links.p1);
  await openMatch(bora, links.p2);
  for (const page of [arbiter, ayse, bora]) await page.waitForSelector("#chat:not([hidden])");
  assert.equal(await text(arbiter, "#chat-heading"), "Chat");

  // The arbiter writes to the players: signed "Arbiter", labelled with its channel.
  await arbiter.selectOption("#chat-channel", "players");
  await say(arbiter, "Welcome, both of you");
  await waitForLine(ayse, "Welcome, both of you");
  assert.deepEqual(await chatLines(ayse), ["Arbiter: Welcome, both of you"]);
  assert.deepEqual(await chatLines(bora), ["Hakem: Welcome, both of you"]);
  assert.deepEqual(await chatLines(arbiter), ["Players Arbiter (you): Welcome, both of you"]);

  // A spectator who is logged in writes in the spectators' chat: the arbiter reads it, the
  // players never do.
  const zeynep = await newPage(bed.browser);
  await register(zeynep, "zeynep");
  await openMatch(zeynep, links.watch);
  await zeynep.waitForSelector("#chat-form:not([hidden])");
  assert.equal(await zeynep.isHidden("#chat-guest"), true);
  await say(zeynep, "What a game");
  await waitForLine(arbiter, "What a game");
  assert.deepEqual(await chatLines(arbiter), ["Players Arbiter (you): Welcome, both of you", "Spectators zeynep: What a game"]);
  assert.ok((await announcements(arbiter)).includes("zeynep (Spectators) wrote in the chat: What a game"));
  await say(ayse, "Thank you");
  await waitForLine(arbiter, "Thank you");
  assert.deepEqual(await chatLines(ayse), ["Arbiter: Welcome, both of you", "Ayşe Yılmaz (you): Thank you"]);
  assert.deepEqual(await chatLines(zeynep), ["zeynep (you): What a game"]);
  await assertNoViolations(arbiter, "the arbiter's match page with both chats");

  // The chat off: the players' forms are disabled and say why; the arbiter still writes.
  assert.equal(await text(arbiter, "#chat-switch"), "Turn the chat off");
  await arbiter.click("#chat-switch");
  await ayse.waitForSelector("#chat-text[disabled]");
  assert.equal(await text(ayse, "#chat-note"), "The chat is off in this match.");
  assert.equal(await ayse.getAttribute("#chat-send", "disabled"), "");
  await bora.waitForSelector("#chat-text[disabled]");
  assert.equal(await text(bora, "#chat-note"), "Bu maçta sohbet kapalı.");
  await zeynep.waitForSelector("#chat-text[disabled]");
  await ayse.waitForFunction(() => [...document.querySelectorAll("#announcer p")].some((p) => p.textContent === "The arbiter turned the chat off."));
  await arbiter.waitForFunction(() => document.querySelector("#chat-switch").textContent === "Turn the chat on");
  assert.equal(await text(arbiter, "#chat-note"), "The chat is off in this match: only you can write.");
  assert.equal(await arbiter.isEnabled("#chat-text"), true);
  await arbiter.selectOption("#chat-channel", "spectators");
  await say(arbiter, "Quiet, please");
  await waitForLine(zeynep, "Quiet, please");
  assert.ok(!(await chatLines(ayse)).some((line) => line.includes("Quiet")), "the spectators' chat stays away from the players");
  await assertNoViolations(ayse, "a player's page with the chat off");

  // On again; then Bora's seat is muted: he is told, Ayşe writes on.
  await arbiter.click("#chat-switch");
  await ayse.waitForSelector("#chat-text:not([disabled])");
  assert.equal(await ayse.isHidden("#chat-note"), true);
  assert.equal(await text(arbiter, "#mute-p2"), "Mute Bora Kaya");
  await arbiter.click("#mute-p2");
  await bora.waitForSelector("#chat-text[disabled]");
  assert.match(await text(bora, "#chat-note"), /^Sessize alındınız/);
  await bora.waitForFunction(() => [...document.querySelectorAll("#announcer p")].some((p) => p.textContent === "Hakem sizi sohbette sessize aldı."));
  await arbiter.waitForFunction(() => document.querySelector("#mute-p2").textContent === "Unmute Bora Kaya");
  assert.equal(await text(arbiter, "#chat-muted-list"), "Muted: Bora Kaya.");
  assert.equal(await arbiter.evaluate(() => document.activeElement?.id), "mute-p2", "the button keeps the focus");
  assert.equal(await ayse.isEnabled("#chat-text"), true);
  await say(ayse, "Still here");
  await waitForLine(bora, "Still here");

  // The spectator who wrote is muted by name; an English page says so in those words.
  await arbiter.click('#chat-mutes button[data-name="zeynep"]');
  await zeynep.waitForSelector("#chat-text[disabled]");
  assert.match(await text(zeynep, "#chat-note"), /^You are muted/);
  await arbiter.waitForFunction(() => document.querySelector("#chat-muted-list").textContent === "Muted: Bora Kaya, zeynep.");
  // Unmuted, Bora writes again.
  await arbiter.click("#mute-p2");
  await bora.waitForSelector("#chat-text:not([disabled])");
  await say(bora, "Teşekkürler");
  await waitForLine(arbiter, "Teşekkürler");
  await shoot(arbiter, "match-chat-arbiter.png", { docs: true, blur: true });
});

test("a draw offered, declined, offered again and accepted in Pente", { skip: bed.skip, timeout: 60000 }, async () => {
  const host = await newPage(bed.browser);
  const links = await createMatch(host, bed.server, { game: "pente", sets: "1" });
  const ayse = await newPage(bed.browser);
  const bora = await newPage(bed.browser, { locale: "tr-TR" });
  const watcher = await newPage(bed.browser);
  await openMatch(ayse, links.p1);
  await openMatch(bora, links.p2);
  await openMatch(watcher, links.watch);
  // Before the set there is nothing to draw.
  assert.equal(await ayse.isHidden("#draw"), true);
  await readyBoth(ayse, bora);
  await ayse.waitForSelector("#draw:not([hidden])");
  await bora.waitForSelector("#draw:not([hidden])");
  assert.equal(await text(ayse, "#offer-draw"), "Offer a draw");
  assert.equal(await text(bora, "#offer-draw"), "Beraberlik teklif et");
  assert.equal(await watcher.$("#offer-draw"), null, "spectators make no offers");

  // Ayşe offers; Bora is told, and declines.
  await ayse.click("#offer-draw");
  await ayse.waitForSelector("#offer-draw[disabled]");
  assert.equal(await text(ayse, "#draw-said"), "You offered a draw: waiting for your opponent's answer.");
  await bora.waitForFunction(() => document.querySelector("#offer-draw").textContent === "Beraberliği kabul et");
  assert.equal(await text(bora, "#draw-said"), "Rakibiniz beraberlik teklif ediyor.");
  assert.equal(await text(bora, "#decline-draw"), "Reddet");
  assert.ok((await announcements(bora)).includes("Rakibiniz beraberlik teklif ediyor."));
  await watcher.waitForFunction(() => document.querySelector("#log").textContent.includes("Ayşe Yılmaz offers a draw."));
  await bora.click("#decline-draw");
  await ayse.waitForFunction(() => [...document.querySelectorAll("#announcer p")].some((p) => p.textContent === "Your opponent declined the draw."));
  await bora.waitForFunction(() => document.querySelector("#offer-draw").textContent === "Beraberlik teklif et");
  assert.equal(await bora.isHidden("#decline-draw"), true);
  // One offer per move: Ayşe may offer again once a move has been made.
  await ayse.waitForFunction(() => document.querySelector("#draw-said").textContent === "You may offer a draw again after the next move.");
  assert.equal(await ayse.isDisabled("#offer-draw"), true);
  assert.match(await text(ayse, "#log"), /Bora Kaya declined the draw offer\./);
  await ayse.check("#autopress");
  await ayse.click('[data-cell="K10"]');
  await ayse.waitForSelector("#offer-draw:not([disabled])");

  // Bora offers; Ayşe accepts, and the set, the one set of the match, is drawn by agreement.
  await bora.click("#offer-draw");
  await ayse.waitForFunction(() => document.querySelector("#offer-draw").textContent === "Accept the draw");
  assert.equal(await text(ayse, "#draw-said"), "Your opponent offers a draw.");
  assert.ok((await announcements(ayse)).includes("Your opponent offers a draw."));
  await assertNoViolations(ayse, "a player's page with the opponent's draw offer");
  await shoot(ayse, "match-draw-offer.png", { blur: true });
  await ayse.click("#offer-draw");
  await ayse.waitForSelector("#result:not([hidden])");
  assert.match(await text(ayse, "#sets"), /Set 1 drawn: both players agreed to a draw/);
  assert.match(await text(ayse, "#result"), /drawn ½–½/);
  await bora.waitForFunction(() => document.querySelector("#sets").textContent.includes("1. set berabere: oyuncular beraberlikte anlaştı"));
  await watcher.waitForFunction(() => document.querySelector("#log").textContent.includes("Set 1 drawn: both players agreed to a draw."));
  assert.ok((await announcements(bora)).some((line) => line.startsWith("1. set berabere: oyuncular beraberlikte anlaştı.")));
  const state = await (await fetch(`${bed.server.url}/api/matches/${links.id}`)).json();
  assert.equal(state.sets[0].reason, "agreement");
  assert.equal(state.sets[0].winner, null);

  // A finished match: no draw controls; the chat stays open after the game.
  for (const page of [ayse, bora]) assert.equal(await page.isHidden("#draw"), true);
  await say(bora, "İyi oyundu");
  await waitForLine(ayse, "İyi oyundu");
});

test("Pentago and a match against the computer offer no draw", { skip: bed.skip, timeout: 60000 }, async () => {
  const host = await newPage(bed.browser);
  const links = await createMatch(host, bed.server, { game: "pentago", variant: "tr", sets: "1" });
  const ayse = await newPage(bed.browser);
  const bora = await newPage(bed.browser);
  await openMatch(ayse, links.p1);
  await openMatch(bora, links.p2);
  await readyBoth(ayse, bora);
  // The set is in play (the resign button shows), yet no draw is offered.
  assert.equal(await ayse.isVisible("#resign"), true);
  assert.equal(await ayse.isVisible("#offer-draw"), false);
  assert.equal(await bora.isVisible("#offer-draw"), false);

  // Pente against the server's bot: nobody to answer an offer.
  const organizer = await protocolClient(bed.browser, bed.server);
  const created = await organizer.request({ type: "create_match", game: "pente", sets: 1, house_bot: { seat: "p2", level: 1 } });
  const solo = await newPage(bed.browser);
  await openMatch(solo, `${bed.server.url}/#/match/${created.match}?seat=${created.seat_tokens.p1}`);
  await solo.click("#ready");
  await solo.waitForFunction(() => document.querySelector("#turn-line").textContent.includes("Your turn"));
  assert.equal(await solo.isVisible("#resign"), true);
  assert.equal(await solo.isVisible("#offer-draw"), false);
  // The same page's chat is there: the players' chat of a match against the computer.
  assert.equal(await solo.isVisible("#chat"), true);
});
