// Shared by the browser tests: the real hakem-server binary on a free port, and Debian's
// Chromium driven by playwright-core (never a downloaded browser).

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { after, before } from "node:test";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export const CHROMIUM = process.env.HAKEM_CHROMIUM || "/usr/bin/chromium";
export const SERVER_BIN = process.env.HAKEM_SERVER_BIN || resolve(here, "../target/debug/hakem-server");
export const ARTIFACTS = resolve(here, "artifacts");
export const SCREENSHOTS = resolve(here, "../docs/screenshots");
/** The server's `--admin-token`: the organizer's, who creates tournaments. */
export const ORGANIZER_TOKEN = "web-tests-organizer";

/**
 * Why the browser tests cannot run here, or null. Without Chromium they are skipped, except
 * in CI (CI=true), where a missing browser is a failure.
 */
export function missingBrowser() {
  if (existsSync(CHROMIUM)) return null;
  const why = `${CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium) to run the browser tests`;
  if (process.env.CI === "true") throw new Error(`${why} (CI=true: failing instead of skipping)`);
  return why;
}

/**
 * A test file's server and browser: started before its tests (then `ready(bed)`, for more
 * setup) and stopped after them. `bed.skip` is the tests' skip option (no browser here).
 */
export function testBed(ready = async () => {}, serverArgs = []) {
  const bed = { skip: missingBrowser() || false, server: null, browser: null };
  before(async () => {
    if (bed.skip) return;
    bed.server = await startServer(serverArgs);
    bed.browser = await launchBrowser();
    await ready(bed);
  });
  after(async () => {
    await bed.browser?.close();
    await bed.server?.stop();
  });
  return bed;
}

/** Every axe-core rule (WCAG 2.0/2.1 A and AA, and best practices) on the page as it is now. */
export async function assertNoViolations(page, what) {
  const { AxeBuilder } = await import("@axe-core/playwright");
  const results = await new AxeBuilder({ page }).analyze();
  const summary = results.violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.slice(0, 5).map((n) => `${n.target.join(" ")} — ${n.failureSummary?.split("\n").join(" ")}`).join("\n    ")}`,
  );
  assert.equal(results.violations.length, 0, `axe-core on ${what}:\n  ${summary.join("\n  ")}`);
  assert.ok(results.passes.length > 10, "axe-core ran its rules");
}

/**
 * A full-page screenshot under artifacts/, also copied to docs/screenshots/ when `docs` and
 * HAKEM_DOCS_SCREENSHOTS=1. `tick`: milliseconds to wait first, so that a running clock shows;
 * `blur`: no focus ring in the picture.
 */
export async function shoot(page, name, { docs = false, tick = 0, blur = false } = {}) {
  await page.mouse.move(0, 0);
  if (blur) await page.evaluate(() => document.activeElement?.blur());
  if (tick) await page.waitForTimeout(tick);
  const path = artifactPath(name);
  await page.screenshot({ path, fullPage: true });
  if (docs && process.env.HAKEM_DOCS_SCREENSHOTS === "1") {
    mkdirSync(SCREENSHOTS, { recursive: true });
    copyFileSync(path, join(SCREENSHOTS, name));
  }
}

/**
 * Starts hakem-server on 127.0.0.1:0 and reads its address from the first stdout line. It runs
 * in a fresh temporary folder with its own SQLite database there, removed when it stops.
 */
export async function startServer(args = []) {
  if (!existsSync(SERVER_BIN)) {
    throw new Error(`${SERVER_BIN} is missing: run \`cargo build -p hakem-server\` (or set HAKEM_SERVER_BIN)`);
  }
  const dir = mkdtempSync(join(tmpdir(), "hakem-web-tests-"));
  const child = spawn(SERVER_BIN, ["--listen", "127.0.0.1:0", "--admin-token", ORGANIZER_TOKEN, ...args], {
    cwd: dir,
    env: { ...process.env, HAKEM_LOG: "warn", HAKEM_DATABASE: `sqlite://${join(dir, "hakem.db")}` },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error("hakem-server printed nothing within 20 s")), 20000);
    child.once("exit", (code) => reject(new Error(`hakem-server exited early with ${code}`)));
    lines.once("line", (line) => {
      clearTimeout(timer);
      resolvePromise(line);
    });
  });
  const m = /^hakem-server listening on (http:\/\/\S+)$/.exec(first.trim());
  if (!m) {
    child.kill();
    throw new Error(`unexpected first line from hakem-server: ${JSON.stringify(first)}`);
  }
  lines.on("line", () => {});
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  return {
    url: m[1],
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Debian's Chromium, headless. Playwright's `launch` gives every browser a fresh, temporary
 * profile of its own (its own --user-data-dir, removed on close); it refuses one in `args`.
 */
export async function launchBrowser() {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** A new page in its own context (its own storage), in English unless told otherwise. */
export async function newPage(browser, { locale = "en-US", width = 1280, height = 900 } = {}) {
  const context = await browser.newContext({ locale, viewport: { width, height }, reducedMotion: "reduce" });
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  page.on("pageerror", (error) => {
    throw new Error(`page error: ${error.message}`);
  });
  return page;
}

/** Creates a match through the page's form; returns the invitation links. */
export async function createMatch(page, server, { game = "pentago", variant = null, sets = "3", clock = "15", p1 = "Ayşe Yılmaz", p2 = "Bora Kaya" } = {}) {
  await page.goto(`${server.url}/#/`);
  await page.selectOption("#game", game);
  if (variant) await page.selectOption("#variant", variant);
  await page.selectOption("#sets", sets);
  await page.selectOption("#clock", clock);
  await page.fill("#p1", p1);
  await page.fill("#p2", p2);
  // The page may still show the links of a match it created before: wait for new ones.
  const before = await page.$eval("#link-watch", (input) => input.value).catch(() => null);
  await page.click("#create-button");
  await page.waitForFunction((old) => {
    const input = document.querySelector("#created:not([hidden]) #link-watch");
    return input && input.value !== old;
  }, before);
  const links = {
    p1: await page.inputValue("#link-p1"),
    p2: await page.inputValue("#link-p2"),
    arbiter: await page.inputValue("#link-arbiter"),
    watch: await page.inputValue("#link-watch"),
  };
  links.id = decodeURIComponent(/#\/match\/([^?]+)/.exec(links.watch)[1]);
  return links;
}

/** Opens a match link and waits until the page shows the match. */
export async function openMatch(page, link) {
  await page.goto(link);
  await page.waitForSelector("[role=grid] [role=gridcell]");
}

export function artifactPath(name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, name);
}

/**
 * A WebSocket of protocol v1 signed in as the organizer (or with another token). It runs
 * inside a Chromium page on the server's origin, so that the tests need no WebSocket
 * package of their own and no particular Node.js. `request(message)` sends it with an `id`
 * and resolves with the reply carrying that `re`; an `error` reply rejects.
 */
export async function protocolClient(browser, server, token = ORGANIZER_TOKEN) {
  const page = await newPage(browser);
  await page.goto(`${server.url}/api/tournaments`);
  await page.evaluate(async (token) => {
    const ws = new WebSocket(`${location.origin.replace(/^http/, "ws")}/ws`);
    const client = { ws, next: 1, waiting: new Map(), frames: [] };
    window.__hakem = client;
    await new Promise((resolvePromise, reject) => {
      ws.addEventListener("error", () => reject(new Error("WebSocket error")));
      ws.addEventListener("open", () => ws.send(JSON.stringify({ type: "hello", protocol: 1, client: "hakem-web-tests", token })));
      ws.addEventListener("message", (e) => {
        const frame = JSON.parse(e.data);
        if (frame.type === "welcome") resolvePromise();
        else if (frame.type === "error" && frame.re == null) reject(new Error(`${frame.code}: ${frame.message}`));
        const answer = client.waiting.get(frame.re);
        if (frame.re != null && answer) {
          client.waiting.delete(frame.re);
          answer(frame);
        } else if (frame.type !== "welcome") client.frames.push(frame);
      });
    });
  }, token);
  return {
    async request(message) {
      const reply = await page.evaluate(
        (message) =>
          new Promise((resolvePromise) => {
            const client = window.__hakem;
            const id = client.next++;
            client.waiting.set(id, resolvePromise);
            client.ws.send(JSON.stringify({ ...message, id }));
          }),
        message,
      );
      if (reply.type === "error") throw new Error(`${message.type} refused: ${reply.code}: ${reply.message}`);
      return reply;
    },
    /** The first frame that was not a reply (`your_match`, `state`, `event`) and `wanted` holds for. */
    async frame(wanted) {
      const handle = await page.waitForFunction((source) => window.__hakem.frames.find(eval(source)), wanted.toString());
      return handle.jsonValue();
    },
    close: () => page.close(),
  };
}

/** A tournament as the server's HTTP API serves it. */
export async function apiView(server, id) {
  const response = await fetch(`${server.url}/api/tournaments/${encodeURIComponent(id)}`);
  assert.equal(response.status, 200);
  return response.json();
}

/** A tournament as the HTTP API serves it once `done` holds for it, within 15 s (else `what` fails). */
export async function waitForView(server, id, what, done) {
  const deadline = Date.now() + 15000;
  for (;;) {
    const v = await apiView(server, id);
    if (done(v)) return v;
    assert.ok(Date.now() < deadline, `${what}: not within 15 s: ${JSON.stringify(v).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The moves in a page's move list, in order. */
export async function moveList(page) {
  return page.$$eval("#moves .mv", (nodes) => nodes.map((n) => n.textContent));
}

/** The live region's lines. */
export async function announcements(page) {
  return page.$$eval("#announcer p", (nodes) => nodes.map((n) => n.textContent));
}
