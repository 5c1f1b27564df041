// The tournament pages against a real Swiss tournament: the organizer creates and starts it
// over the WebSocket, the tournament's arbiter token decides the matches, and the pages show
// the lobby's list, the standings with their tie-breaks, the pairings of each round with links
// to the matches, a new round without reloading, the end, and the Turkish texts. axe-core runs
// on the page; a screenshot goes to artifacts/ (and docs/screenshots/ with
// HAKEM_DOCS_SCREENSHOTS=1).

import { test } from "node:test";
import assert from "node:assert/strict";
import { announcements, apiView, assertNoViolations, newPage, protocolClient, shoot, testBed, waitForView } from "./helpers.js";

let organizer;
const bed = testBed(async ({ server, browser }) => {
  organizer = await protocolClient(browser, server);
});

const PLAYERS = [
  { surname: "Aydın", given: "Ali" },
  { surname: "Çelik", given: "Cem" },
  { surname: "Demir", given: "Deniz" },
  { surname: "Şahin", given: "Selin" },
  { surname: "Ünal", given: "Ümit" },
];

async function createTournament({ name, players, rounds }) {
  const created = await organizer.request({ type: "create_tournament", name, game: "pentago", rounds, players });
  assert.equal(created.type, "tournament_created");
  assert.equal(created.players.length, players.length);
  return { id: created.tournament, arbiter: created.arbiter_token };
}

/** Ends a match at once by the arbiter's decision: `p1`, `p2` or `draw`. */
async function decide(match, arbiter, winner) {
  await organizer.request({ type: "join", match, arbiter_token: arbiter });
  await organizer.request({ type: "declare", match, scope: "round", winner, reason: "test" });
}

/** Decides every board of the last round (winners in board order) and waits for the results. */
async function decideRound(t, winners) {
  const before = await apiView(bed.server, t.id);
  const round = before.pairings.at(-1);
  for (const [i, board] of round.boards.entries()) await decide(board.match, t.arbiter, winners[i]);
  return waitForView(bed.server, t.id, `the results of round ${round.round}`, (v) => v.completed_rounds === round.round);
}

/** Each player's points after the rounds given, from the results declared and the byes. */
function pointsFrom(rounds) {
  const scores = new Map();
  const add = (id, n) => scores.set(id, (scores.get(id) || 0) + n);
  for (const round of rounds) {
    for (const board of round.boards) {
      const [a, b] = { "1-0": [1, 0], "0-1": [0, 1], "1/2-1/2": [0.5, 0.5] }[board.result];
      add(board.p1, a);
      add(board.p2, b);
    }
    for (const bye of round.byes) add(bye.player, bye.points);
  }
  return scores;
}

/** The page's way of writing points: 1, ½, 1½. */
function pointsText(n) {
  const whole = Math.floor(n);
  if (n === whole) return String(whole);
  return whole === 0 ? "½" : `${whole}½`;
}

const text = (page, selector) => page.$eval(selector, (node) => node.textContent.trim());
const rowCells = (page, selector) => page.$eval(selector, (row) => [...row.cells].map((cell) => cell.textContent.trim()));

async function waitForText(page, selector, expected) {
  await page.waitForFunction(
    ([selector, expected]) => document.querySelector(selector)?.textContent.includes(expected),
    [selector, expected],
  );
}

test("the lobby says that there is no tournament yet", { skip: bed.skip, timeout: 60000 }, async () => {
  const page = await newPage(bed.browser);
  await page.goto(`${bed.server.url}/#/`);
  await waitForText(page, "#no-tournaments", "No tournaments on this server yet");
  assert.equal(await text(page, "#tournaments-heading"), "Tournaments");
  await page.close();
});

test("a running tournament: listed in the lobby, standings with tie-breaks, round 1 results with links to the matches, round 2 without reloading, Turkish", { skip: bed.skip, timeout: 180000 }, async () => {
  const t = await createTournament({ name: "Kış Kupası", players: PLAYERS, rounds: 3 });

  // The lobby lists it while it takes entries, then in play, and links to its page.
  const lobby = await newPage(bed.browser);
  await lobby.goto(`${bed.server.url}/#/`);
  const row = `#tournament-list tr[data-tournament="${t.id}"]`;
  await lobby.waitForSelector(row);
  assert.deepEqual(await rowCells(lobby, row), ["Kış Kupası", "Pentago — Turkish tournament rules (clockwise turns only)", "5", "Registration", "0 of 3"]);
  const started = await organizer.request({ type: "start_tournament", tournament: t.id });
  assert.equal(started.current_round, 1);
  await waitForText(lobby, row, "1 of 3");
  assert.equal((await rowCells(lobby, row))[3], "In play");
  assert.equal(await lobby.getAttribute(`${row} a`, "href"), `#/tournament/${t.id}`);

  // Follow the link by keyboard: focus it and press Enter.
  await lobby.focus(`${row} a`);
  await lobby.keyboard.press("Enter");
  await lobby.waitForFunction((id) => location.hash === `#/tournament/${id}`, t.id);
  const page = lobby;
  await waitForText(page, "#tournament-name", "Kış Kupası");
  assert.equal(await page.title(), "hakem — Kış Kupası");
  assert.equal(await text(page, "#tournament-status"), "Round 1 of 3 is being played.");
  assert.match(await text(page, "#tournament-settings"), /Swiss system, FIDE Dutch rules \(2025\)/);
  // Before any result: the starting rank list, and round 1 being played.
  assert.equal(await text(page, "#standings caption"), "Starting rank list");
  const round1 = started.pairings[0];
  for (const board of round1.boards) {
    const cells = await rowCells(page, `#round-1 tr[data-board="${board.board}"]`);
    assert.equal(cells[2], "playing");
    assert.equal(cells[4], "Watch live");
  }

  // The arbiter decides round 1: board 1 for the first mover, board 2 a draw.
  const afterRound1 = await decideRound(t, ["p1", "draw"]);
  assert.equal(afterRound1.pairings[0].boards[0].result, "1-0");
  assert.equal(afterRound1.pairings[0].boards[1].result, "1/2-1/2");
  assert.equal(afterRound1.pairings[0].byes.length, 1, "five players: one bye");

  // Pushed by the server: the standings appear with the points of the results declared.
  await waitForText(page, "#standings caption", "Standings after round 1");
  const expected = pointsFrom(afterRound1.pairings);
  assert.equal(expected.size, 5);
  for (const [id, pts] of expected) {
    const cells = await rowCells(page, `#standings tr[data-player="${id}"]`);
    const player = afterRound1.players.find((p) => p.id === id);
    assert.equal(cells[1], String(id));
    assert.equal(cells[2], player.name);
    assert.equal(cells[3], pointsText(pts), `the points of ${player.name}`);
    assert.equal(afterRound1.standings.find((s) => s.id === id).points, pts, "the server agrees");
  }
  // Best first: the ranks never go down the table.
  const ranks = await page.$$eval("#standings tbody tr", (rows) => rows.map((r) => Number(r.cells[0].textContent)));
  assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b));
  // Every tie-break in the tournament's order, its code explained in an abbr and the legend.
  const heads = await page.$$eval("#standings thead th[data-tiebreak] abbr", (nodes) => nodes.map((n) => [n.textContent, n.title]));
  assert.deepEqual(heads, [
    ["BH-C1", "Buchholz Cut 1"],
    ["BH", "Buchholz"],
    ["SB", "Sonneborn–Berger"],
    ["DE", "Direct encounter"],
    ["WIN", "Wins"],
  ]);
  assert.deepEqual(afterRound1.tiebreaks, ["BH-C1", "BH", "SB", "DE", "WIN"]);
  const first = afterRound1.standings[0];
  const firstCells = await rowCells(page, `#standings tr[data-player="${first.id}"]`);
  assert.deepEqual(firstCells.slice(4), afterRound1.tiebreaks.map((code) => String(first.tiebreaks[code])));
  assert.match(await text(page, "#tiebreak-legend"), /Buchholz Cut 1: the opponents' points added up, leaving out the lowest/);
  assert.equal(await page.getAttribute("#standings thead th:nth-child(2) abbr", "title"), "Pairing number");

  // Round 1: both players of each board, the result, a link to the match; the bye in words.
  const name = (id) => afterRound1.players.find((p) => p.id === id).name;
  for (const [board, result] of [
    [round1.boards[0], "1–0"],
    [round1.boards[1], "½–½"],
  ]) {
    const cells = await rowCells(page, `#round-1 tr[data-board="${board.board}"]`);
    assert.deepEqual(cells, [String(board.board), `${name(board.p1)} (${board.p1})`, result, `${name(board.p2)} (${board.p2})`, "Open the matchReplay"]);
    assert.equal(await page.getAttribute(`#round-1 tr[data-board="${board.board}"] a`, "href"), `#/match/${board.match}`);
  }
  const bye = round1.byes[0];
  assert.equal(await text(page, `#round-1 .byes li[data-player="${bye.player}"]`), `${name(bye.player)} (${bye.player}): bye (odd number of players), 1 point`);
  await page.waitForFunction(() => document.querySelector("#announcer").textContent.includes("Every result of round 1 is in."));
  assert.equal(await text(page, "#tournament-status"), "Round 1 of 3 is over; the next round is not paired yet.");

  // The TRF download.
  const trf = await page.getAttribute("#trf-link", "href");
  assert.equal(trf, `/api/tournaments/${t.id}/trf`);
  assert.ok(await page.getAttribute("#trf-link", "download"));
  const trfText = await (await fetch(`${bed.server.url}${trf}`)).text();
  assert.match(trfText, /^012 Kış Kupası/m);

  // The crosstable: each player's round 1 as opponent, colour (Pentago's stay with the seats)
  // and result, or the bye with its points.
  const b0 = round1.boards[0];
  assert.deepEqual((await rowCells(page, `#crosstable tr[data-player="${b0.p1}"]`)).slice(3, 4), [`${b0.p2} b 1`]);
  assert.deepEqual((await rowCells(page, `#crosstable tr[data-player="${b0.p2}"]`)).slice(3, 4), [`${b0.p1} w 0`]);
  const b1 = round1.boards[1];
  assert.deepEqual((await rowCells(page, `#crosstable tr[data-player="${b1.p2}"]`)).slice(3, 4), [`${b1.p1} w ½`]);
  assert.deepEqual((await rowCells(page, `#crosstable tr[data-player="${bye.player}"]`)).slice(3, 4), ["bye 1"]);
  // On paper: nothing to click, and each part on a page of its own.
  await page.emulateMedia({ media: "print" });
  const printed = await page.evaluate(() => ({
    button: getComputedStyle(document.querySelector("#print-button")).display,
    links: getComputedStyle(document.querySelector(".match-link")).display,
    header: getComputedStyle(document.querySelector(".site-header")).display,
    crosstable: getComputedStyle(document.querySelector(".crosstable-card")).breakBefore,
  }));
  assert.deepEqual(printed, { button: "none", links: "none", header: "none", crosstable: "page" });
  await page.emulateMedia({ media: "screen" });
  assert.notEqual(await page.evaluate(() => getComputedStyle(document.querySelector("#print-button")).display), "none");

  // The arbiter pairs round 2: it appears above round 1 without a reload, and is announced.
  await page.evaluate(() => (window.__sameDocument = true));
  const paired = await organizer.request({ type: "pair_next", tournament: t.id });
  assert.equal(paired.current_round, 2);
  await page.waitForSelector("#round-2");
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "no reload");
  await page.waitForFunction(() => document.querySelector("#announcer").textContent.includes("Round 2 is paired."));
  assert.ok((await announcements(page)).includes("Round 2 is paired."));
  assert.equal(await page.getAttribute("#announcer", "aria-live"), "polite");
  assert.equal(await text(page, "#tournament-status"), "Round 2 of 3 is being played.");
  assert.deepEqual(await page.$$eval(".round", (nodes) => nodes.map((n) => n.dataset.round)), ["2", "1"]);
  for (const board of paired.pairings[1].boards) {
    const cells = await rowCells(page, `#round-2 tr[data-board="${board.board}"]`);
    assert.deepEqual(cells, [String(board.board), `${name(board.p1)} (${board.p1})`, "playing", `${name(board.p2)} (${board.p2})`, "Watch live"]);
  }
  // Pentago: the stones stay with the seats for the whole round, as on the match pages.
  assert.deepEqual(await page.$$eval("#round-2 thead th", (ths) => ths.map((th) => th.textContent)), ["Board", "Black", "Result", "White", "Match"]);
  assert.match(await text(page, "#sides-note"), /plays black in every set/);

  // The links are reached by the keyboard and show a visible focus ring.
  await page.focus("#back-link");
  let focused = null;
  for (let i = 0; i < 40 && !focused; i++) {
    await page.keyboard.press("Tab");
    focused = await page.evaluate(() => (document.activeElement?.closest("#round-2") && document.activeElement.tagName === "A" ? document.activeElement.id : null));
  }
  assert.ok(focused, "Tab reaches the links of round 2");
  const ring = await page.evaluate(() => {
    const style = getComputedStyle(document.activeElement);
    return { outline: style.outlineStyle, width: parseFloat(style.outlineWidth) };
  });
  assert.notEqual(ring.outline, "none", "a visible focus ring");
  assert.ok(ring.width >= 2, "a focus ring at least 2px wide");

  await assertNoViolations(page, "the tournament page");
  await shoot(page, "tournament.png", { docs: true, blur: true });

  // Turkish.
  const tr = await newPage(bed.browser);
  await tr.goto(`${bed.server.url}/#/tournament/${t.id}`);
  await tr.waitForSelector("#round-2");
  await tr.click("#lang-switch");
  await tr.waitForFunction(() => document.documentElement.lang === "tr");
  assert.equal(await text(tr, "#standings-heading"), "Puan durumu");
  assert.equal(await text(tr, "#standings caption"), "1. tur sonunda puan durumu");
  assert.equal(await text(tr, "#pairings-heading"), "Eşlemeler");
  assert.equal(await text(tr, "#round-2 h3"), "2. tur (oynanıyor)");
  assert.equal(await text(tr, "#round-2 tbody tr .board-result"), "oynanıyor");
  assert.equal(await text(tr, "#round-2 tbody tr a"), "Canlı izle");
  assert.equal(await text(tr, "#tournament-status"), "Tur 2/3 oynanıyor.");
  assert.equal(await tr.getAttribute('#standings thead th[data-tiebreak="BH-C1"] abbr', "title"), "Buchholz Kesik 1");
  assert.match(await text(tr, `#round-1 .byes li[data-player="${bye.player}"]`), /bay \(oyuncu sayısı tek\), 1 puan$/);
  assert.match(await text(tr, "#trf-link"), /TRF dosyasını indir/);
  await assertNoViolations(tr, "the tournament page in Turkish");
  await shoot(tr, "tournament-tr.png", { blur: true });
  await tr.click("#back-link");
  await waitForText(tr, `#tournament-list tr[data-tournament="${t.id}"]`, "Sürüyor");
  assert.equal((await rowCells(tr, `#tournament-list tr[data-tournament="${t.id}"]`))[4], "2/3");
  await tr.close();

  // A board's link opens its match page.
  const board = round1.boards[0];
  await page.click(`#round-1 tr[data-board="${board.board}"] a`);
  await page.waitForFunction((id) => location.hash === `#/match/${id}`, board.match);
  await waitForText(page, ".match-title", `${name(board.p1)} – ${name(board.p2)}`);
  await waitForText(page, "#result", name(board.p1));
  // ...which links back to the tournament.
  assert.equal(await page.getAttribute("#tournament-link", "href"), `#/tournament/${t.id}`);
  await page.click("#tournament-link");
  await page.waitForSelector("#round-2");
  await page.goBack();
  await page.waitForFunction((id) => location.hash === `#/match/${id}`, board.match);
  await page.goBack();
  await page.waitForSelector("#round-2");
  await page.close();
});

test("a finished tournament: a withdrawn player is marked, the end is announced, the page never polls; an unknown tournament", { skip: bed.skip, timeout: 120000 }, async () => {
  const t = await createTournament({ name: "Bahar Turnuvası", players: PLAYERS.slice(0, 4), rounds: 2 });
  await organizer.request({ type: "start_tournament", tournament: t.id });
  const page = await newPage(bed.browser);
  // Every change comes over the WebSocket (`watch_tournament`): the page asks HTTP for nothing.
  let polls = 0;
  page.on("request", (request) => {
    if (request.url().includes(`/api/tournaments/${t.id}`) && !request.url().endsWith("/trf")) polls++;
  });
  await page.goto(`${bed.server.url}/#/tournament/${t.id}`);
  await page.waitForSelector("#round-1");

  await decideRound(t, ["p2", "p1"]);
  // Player 4 withdraws after round 1: absent from round 2, and marked in the standings.
  await organizer.request({ type: "withdraw", tournament: t.id, player: 4 });
  await organizer.request({ type: "pair_next", tournament: t.id });
  await page.waitForSelector("#round-2");
  await waitForText(page, '#standings tr[data-player="4"] th', "(withdrawn from round 2)");
  const kinds = await page.$$eval("#round-2 .byes li", (items) => items.map((li) => li.textContent));
  assert.ok(kinds.some((line) => line.endsWith("absent (withdrawn), 0 points")), JSON.stringify(kinds));
  assert.ok(kinds.some((line) => line.endsWith("bye (odd number of players), 1 point")), JSON.stringify(kinds));

  const end = await decideRound(t, ["draw"]);
  assert.equal(end.status, "finished");
  await waitForText(page, "#tournament-status", "Finished after 2 rounds.");
  const winners = end.standings.filter((s) => s.rank === 1).map((s) => s.name).join(", ");
  await page.waitForFunction((w) => document.querySelector("#announcer").textContent.includes(`The tournament has finished. First place: ${w}.`), winners);
  assert.equal(await text(page, "#round-2 .board-result"), "½–½");
  assert.equal(await text(page, "#round-2 h3"), "Round 2 (all results in)");
  // A board played to its end can be replayed from the pairings.
  const board = end.pairings[1].boards[0];
  assert.equal(await page.getAttribute(`#replay-${board.match}`, "href"), `#/replay/${board.match}`);
  assert.equal(polls, 0, "no request for the tournament: the server pushed every change");

  // An unknown tournament says so.
  await page.goto(`${bed.server.url}/#/tournament/no-such-thing`);
  await waitForText(page, "#tournament-fatal h1", "No such tournament");
  assert.equal(await text(page, "#tournament-fatal p"), "There is no such tournament on this server.");
  await assertNoViolations(page, "the page of an unknown tournament");
  await page.close();
});

test("the arbiter runs the event from the page: start, a late entry, a result entered, the pairing shown before it is published, a withdrawal, every board live", { skip: bed.skip, timeout: 120000 }, async () => {
  const t = await createTournament({ name: "Masa Kupası", players: PLAYERS.slice(0, 4), rounds: 3 });
  const page = await newPage(bed.browser);
  await page.goto(`${bed.server.url}/#/tournament/${t.id}?arbiter=${t.arbiter}`);
  await waitForText(page, "#desk-status", "Registration");
  // Nobody without the token sees the desk.
  const visitor = await newPage(bed.browser);
  await visitor.goto(`${bed.server.url}/#/tournament/${t.id}`);
  await visitor.waitForSelector("#tournament-name");
  assert.equal(await visitor.$$eval("#desk", (nodes) => nodes.length), 0);
  await visitor.close();

  // A late entry before the start: the new player's token is shown for the arbiter to hand over.
  await page.fill("#desk-surname", "Öz");
  await page.fill("#desk-given", "Ece");
  await page.click("#desk-add");
  await waitForText(page, "#desk-entered", "Their token");
  assert.equal((await apiView(bed.server, t.id)).players.length, 5);

  // An assistant arbiter for board 2: named on the desk, the token shown once, and it opens
  // board 2's match as its arbiter.
  await page.fill("#desk-assistant-name", "Ece Yardımcı");
  await page.fill("#desk-assistant-boards", "2");
  await page.click("#desk-add-assistant");
  await waitForText(page, "#desk-assistant-token", "Their token");
  const assistantToken = /Their token \(shown once, give it to them\): ([0-9a-f]+)\./.exec(await text(page, "#desk-assistant-token"))[1];
  await waitForText(page, "#desk-assistants", "Ece Yardımcı: boards 2");

  await page.selectOption("#desk-lot", "p1");
  await page.click("#desk-start-button");
  await page.waitForSelector("#round-1");
  const started = await apiView(bed.server, t.id);
  assert.equal(started.colour_lot.seat, "p1");
  assert.equal(started.colour_lot.drawn, false);
  // The overview joins every board as its arbiter: players, sets, warnings, claims, clocks.
  const boards = started.pairings[0].boards;
  for (const b of boards) {
    await page.waitForFunction((n) => document.querySelector(`#overview tr[data-board="${n}"] td.clocks`)?.textContent.includes("15:00"), b.board);
    const cells = await rowCells(page, `#overview tr[data-board="${b.board}"]`);
    assert.equal(cells[2], "0–0");
    assert.equal(cells[3], "0–0");
    assert.equal(cells[4], "0");
    assert.equal(await page.getAttribute(`#desk-go-${b.board}`, "href"), `#/match/${b.match}?arbiter=${t.arbiter}`);
  }
  const assistant = await newPage(bed.browser);
  await assistant.goto(`${bed.server.url}/#/match/${boards[1].match}?arbiter=${assistantToken}`);
  await assistant.waitForSelector("#arb-heading");
  await assistant.waitForFunction(() => document.querySelector("#seat-p1 .seat-name")?.textContent.trim().length > 0);
  assert.equal(await assistant.$$eval(".fatal:not([hidden])", (nodes) => nodes.length), 0, "the assistant's token opens board 2");
  // Board 1 is not theirs.
  await assistant.goto(`${bed.server.url}/#/match/${boards[0].match}?arbiter=${assistantToken}`);
  await assistant.waitForSelector(".fatal:not([hidden])");
  await assistant.close();
  // What happens on a board shows in its row at once: a warning to p2 on board 1.
  await organizer.request({ type: "join", match: boards[0].match, arbiter_token: t.arbiter });
  await organizer.request({ type: "warn", match: boards[0].match, seat: "p2", reason: "noise" });
  await page.waitForFunction((n) => document.querySelector(`#overview tr[data-board="${n}"]`)?.cells[3].textContent === "0–1", boards[0].board);

  // Board 2 was played over the board: its result is entered from the desk and ends its match.
  await page.fill("#desk-result-round", "1");
  await page.fill("#desk-result-board", "2");
  await page.selectOption("#desk-result", "1/2-1/2");
  await page.click("#desk-set-result");
  await waitForView(bed.server, t.id, "the entered result", (v) => v.pairings[0].boards[1].result === "1/2-1/2");
  await waitForText(page, `#round-1 tr[data-board="2"] .board-result`, "½–½");
  // Every result in: the pairing of round 2 is shown first, and published only on request.
  await decide(boards[0].match, t.arbiter, "p1");
  await waitForView(bed.server, t.id, "round 1 complete", (v) => v.completed_rounds === 1);
  await waitForText(page, "#desk-status", "Every result is in");
  await page.click("#desk-preview-button");
  await page.waitForSelector("#preview-table tbody tr");
  assert.match(await text(page, "#preview-heading"), /Round 2 as it would be paired/);
  const shownRows = await page.$$eval("#preview-table tbody tr", (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent.trim())));
  assert.equal((await apiView(bed.server, t.id)).current_round, 1, "a preview publishes nothing");
  await assertNoViolations(page, "the arbiter's desk with a pairing shown");
  await shoot(page, "tournament-desk.png", { docs: true });
  await page.click("#desk-publish");
  await page.waitForSelector("#round-2");
  const after = await apiView(bed.server, t.id);
  assert.deepEqual(
    after.pairings[1].boards.map((b) => [String(b.board), `${after.players[b.p1 - 1].name} (${b.p1})`, `${after.players[b.p2 - 1].name} (${b.p2})`]),
    shownRows,
  );
  await page.waitForSelector(`#overview tr[data-board="${after.pairings[1].boards[0].board}"]`);

  // A withdrawal from the desk.
  await page.selectOption("#desk-player", "5");
  await page.click("#desk-withdraw");
  await waitForText(page, '#standings tr[data-player="5"] th', "(withdrawn from round 3)");
  // Refusals are said plainly: a half-point bye for a round already paired.
  await page.fill("#desk-bye-round", "2");
  await page.selectOption("#desk-player", "1");
  await page.click("#desk-bye");
  await page.waitForFunction(() => !document.querySelector("#alert").hidden);
  await page.close();
});

test("a player's page: their matches as they are paired, the link to their seat, said and sounded", { skip: bed.skip, timeout: 60000 }, async () => {
  const created = await organizer.request({ type: "create_tournament", name: "Oyuncu Kupası", game: "pentago", rounds: 2, players: PLAYERS.slice(0, 2) });
  const page = await newPage(bed.browser);
  await page.goto(`${bed.server.url}/#/player?token=${created.players[0].token}`);
  await waitForText(page, "#player-matches", "No match for you yet");
  await page.check("#player-sounds");
  // The round is paired: the page is told at once, with the link that seats the player.
  await organizer.request({ type: "start_tournament", tournament: created.tournament });
  await page.waitForSelector("#player-matches a");
  const href = await page.getAttribute("#player-matches a", "href");
  assert.match(href, new RegExp(`^#/match/${created.tournament}-r1b1\\?seat=[0-9a-f]+$`));
  await page.waitForFunction(() => document.querySelector("#announcer").textContent.includes("Your Pentago match is ready."));
  await page.waitForFunction(() => document.body.dataset.sound === "ready");
  assert.match(await page.title(), /Your Pentago match is ready/);
  await assertNoViolations(page, "a player's page with a match ready");
  // The link seats them.
  await page.click("#player-matches a");
  await page.waitForFunction(() => /You play as/.test(document.querySelector("#role")?.textContent || ""));
  // Without a token the page says what it needs.
  await page.goto(`${bed.server.url}/#/player`);
  await page.waitForSelector("#player-fatal");
  await page.close();
});
