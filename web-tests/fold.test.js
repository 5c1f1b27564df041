// The page's fold (web/fold.js) against the server: in real Chromium, a socket asks for the
// whole history of matches of each game played through the server, folds every event into the
// first state, and must end where the server's own state is. And a spectator who opens a match
// midway sees, in the "What happened" log, the match so far.

import { test } from "node:test";
import assert from "node:assert/strict";
import { newPage, testBed } from "./helpers.js";

const bed = testBed();

/** In the page: plays `moves` over two sockets, then folds the whole history of the match from
 * a third one, and returns the folded state and the server's. */
async function foldAgainstServer(page, game, variant, moves) {
  return page.evaluate(
    async ({ game, variant, moves }) => {
      const { fold } = await import("/assets/fold.js");
      const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
      const open = async (features) => {
        const ws = new WebSocket(url);
        const inbox = [];
        const waiters = [];
        ws.onmessage = (m) => {
          const frame = JSON.parse(m.data);
          const frames = frame.type === "events" ? frame.events : [frame];
          for (const f of frames) {
            inbox.push(f);
            for (const w of [...waiters]) w();
          }
        };
        await new Promise((ok) => (ws.onopen = ok));
        let id = 0;
        const find = (wanted) =>
          new Promise((ok) => {
            const look = () => {
              const i = inbox.findIndex(wanted);
              if (i >= 0) {
                waiters.splice(waiters.indexOf(look), 1);
                ok(inbox.splice(i, 1)[0]);
              }
            };
            waiters.push(look);
            look();
          });
        const request = (message) => {
          const re = ++id;
          ws.send(JSON.stringify({ ...message, id: re }));
          return find((f) => f.re === re);
        };
        ws.send(JSON.stringify({ type: "hello", protocol: 1, features }));
        await find((f) => f.type === "welcome");
        return { ws, inbox, request, find };
      };
      const a = await open(["batch", "boards"]);
      const created = await a.request({ type: "create_match", game, variant, clock: null, sets: 1 });
      const match = created.match;
      const b = await open(["batch", "boards"]);
      await a.request({ type: "join", match, seat_token: created.seat_tokens.p1 });
      await b.request({ type: "join", match, seat_token: created.seat_tokens.p2 });
      await a.request({ type: "ready", match });
      await b.request({ type: "ready", match });
      for (const [i, mv] of moves.entries()) {
        const reply = await (i % 2 === 0 ? a : b).request({ type: "move", match, move: mv });
        if (reply.type !== "ack") throw new Error(`${mv}: ${JSON.stringify(reply)}`);
      }
      // A late joiner: the match's first state, then every event, then the ack.
      const c = await open(["batch", "boards"]);
      const sent = c.request({ type: "watch", match, history: true });
      const first = await c.find((f) => f.type === "state");
      const firstSeq = first.seq;
      await sent;
      const state = first;
      for (const f of c.inbox.filter((f) => f.type === "event")) {
        if (fold(state, f) === "gap") throw new Error(`gap at ${f.seq}`);
      }
      const truth = await (await fetch(`/api/matches/${match}`)).json();
      for (const s of [state, truth]) {
        delete s.clocks;
        delete s.you;
        delete s.type;
      }
      return { state, truth, firstSeq };
    },
    { game, variant, moves },
  );
}

test("the page's fold of a match's events ends where the server's state is, for every game", { skip: bed.skip, timeout: 60000 }, async () => {
  const page = await newPage(bed.browser);
  await page.goto(bed.server.url);
  const games = [
    ["pentago", "tr", "b1sw e5sw f6sw c6nw d6nw c6nw e6sw f1nw e2nw e4ne".split(" ")],
    ["quoridor", "standard", "e2 e8 e3 e7 e3h d6v".split(" ")],
    // Captures: White's K10 L11 M12 pair is flanked and taken.
    ["pente", "free", "K10 L11 A1 M12 N13".split(" ")],
  ];
  for (const [game, variant, moves] of games) {
    const { state, truth, firstSeq } = await foldAgainstServer(page, game, variant, moves);
    assert.equal(firstSeq, 0, `${game}: the history starts at the match's first state`);
    assert.deepEqual(state, truth, `${game}: the fold and the server disagree`);
    assert.equal(state.position.moves.length, moves.length, game);
    assert.ok(state.position.board, game);
  }
});

test("a spectator who comes in midway sees the match so far in the log", { skip: bed.skip, timeout: 60000 }, async () => {
  const page = await newPage(bed.browser);
  await page.goto(bed.server.url);
  const match = await page.evaluate(async () => {
    const url = `ws://${location.host}/ws`;
    const open = () =>
      new Promise((ok) => {
        const ws = new WebSocket(url);
        const replies = new Map();
        ws.onmessage = (m) => {
          const f = JSON.parse(m.data);
          if (f.re && replies.has(f.re)) replies.get(f.re)(f);
        };
        let id = 0;
        ws.request = (message) =>
          new Promise((done) => {
            const re = ++id;
            replies.set(re, done);
            ws.send(JSON.stringify({ ...message, id: re }));
          });
        ws.onopen = () => {
          ws.send(JSON.stringify({ type: "hello", protocol: 1 }));
          ok(ws);
        };
      });
    const a = await open();
    const created = await a.request({ type: "create_match", game: "pentago", players: { p1: "Ayşe", p2: "Bora" } });
    const b = await open();
    await a.request({ type: "join", match: created.match, seat_token: created.seat_tokens.p1 });
    await b.request({ type: "join", match: created.match, seat_token: created.seat_tokens.p2 });
    await a.request({ type: "ready", match: created.match });
    await b.request({ type: "ready", match: created.match });
    await a.request({ type: "move", match: created.match, move: "b1sw" });
    await b.request({ type: "move", match: created.match, move: "e5sw" });
    window.players = [a, b];
    return created.match;
  });
  const watcher = await newPage(bed.browser);
  await watcher.goto(`${bed.server.url}/#/match/${match}`);
  await watcher.waitForFunction(() => document.querySelectorAll("#log li").length >= 4);
  const log = await watcher.$$eval("#log li", (items) => items.map((li) => li.textContent).join("\n"));
  assert.match(log, /Set 1/i, log);
  assert.match(log, /b1/, log);
  assert.match(log, /e5/, log);
  // And the board after the last move, as the events carried it: one marble each.
  await watcher.waitForFunction(() => document.querySelectorAll(".cell.has-x").length === 1 && document.querySelectorAll(".cell.has-o").length === 1);
});

test("the page's fold of draw offers (offer, move, decline, accept, the round's end) stays where the server's state is", { skip: bed.skip, timeout: 60000 }, async () => {
  const page = await newPage(bed.browser);
  await page.goto(bed.server.url);
  const steps = await page.evaluate(async () => {
    const { fold } = await import("/assets/fold.js");
    const url = `ws://${location.host}/ws`;
    const open = () =>
      new Promise((ok) => {
        const ws = new WebSocket(url);
        const replies = new Map();
        const frames = [];
        ws.onmessage = (m) => {
          const f = JSON.parse(m.data);
          for (const one of f.type === "events" ? f.events : [f]) frames.push(one);
          if (f.re && replies.has(f.re)) replies.get(f.re)(f);
        };
        let id = 0;
        ws.frames = frames;
        ws.request = (message) =>
          new Promise((done) => {
            const re = ++id;
            replies.set(re, done);
            ws.send(JSON.stringify({ ...message, id: re }));
          });
        ws.onopen = () => {
          ws.send(JSON.stringify({ type: "hello", protocol: 1, features: ["batch", "boards"] }));
          ok(ws);
        };
      });
    const out = [];
    /** A casual Pente match of `sets` sets, its players ready; each step of `script(a, b, arbiter)`
     * is followed by a fold of the whole history from a fresh reader, and the server's state. */
    const play = async (sets, script) => {
      const a = await open();
      const created = await a.request({ type: "create_match", game: "pente", variant: "free", sets, clock: null });
      const match = created.match;
      const b = await open();
      const arbiter = await open();
      await a.request({ type: "join", match, seat_token: created.seat_tokens.p1 });
      await b.request({ type: "join", match, seat_token: created.seat_tokens.p2 });
      await arbiter.request({ type: "join", match, arbiter_token: created.arbiter_token });
      await a.request({ type: "ready", match });
      await b.request({ type: "ready", match });
      for (const [who, message] of script(a, b, arbiter)) {
        const reply = await who.request({ ...message, match });
        if (reply.type !== "ack") throw new Error(`${JSON.stringify(message)}: ${JSON.stringify(reply)}`);
        const c = await open();
        await c.request({ type: "watch", match, history: true });
        const [first, ...rest] = c.frames.filter((f) => f.type === "state" || f.type === "event");
        for (const f of rest) if (fold(first, f) === "gap") throw new Error(`gap at ${f.seq}`);
        c.close();
        const truth = await (await fetch(`/api/matches/${match}`)).json();
        for (const s of [first, truth]) {
          delete s.clocks;
          delete s.you;
          delete s.type;
        }
        out.push({ step: JSON.stringify(message), state: first, truth });
      }
    };
    await play(1, (a, b) => [
      [a, { type: "offer_draw" }],
      [a, { type: "move", move: "K10" }],
      [b, { type: "move", move: "L11" }],
      [b, { type: "offer_draw" }],
      [a, { type: "decline_draw" }],
      [a, { type: "move", move: "A1" }],
      [b, { type: "offer_draw" }],
      [a, { type: "offer_draw" }],
    ]);
    // An offer still open when the round ends (on warnings, mid-set) ends with it.
    await play(3, (a, b, arbiter) => [
      [a, { type: "offer_draw" }],
      [arbiter, { type: "warn", seat: "p2", reason: "one" }],
      [arbiter, { type: "warn", seat: "p2", reason: "two" }],
      [arbiter, { type: "warn", seat: "p2", reason: "three" }],
    ]);
    return out;
  });
  const offers = steps.map(({ state }) => state.draw_offer ?? null);
  assert.deepEqual(offers, ["p1", "p1", null, "p2", null, null, "p2", null, "p1", "p1", "p1", null]);
  for (const { step, state, truth } of steps) assert.deepEqual(state, truth, `after ${step}: the fold and the server disagree`);
  assert.equal(steps[7].state.sets[0].reason, "agreement");
  assert.equal(steps.at(-1).state.round.reason, "warnings");
});
