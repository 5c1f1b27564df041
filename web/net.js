// The WebSocket connection to the server (protocol v1, see docs/protocol.md): the hello
// handshake, requests answered by `re`, and a stream of `state` and `event` frames for the
// page. It asks for one frame per action (`batch`, handed to the page event by event) and for
// the board in every event (`boards`), for rematch offers (`rematch`) and for the match's chat
// (`chat`). It reconnects by itself and then lets the page join its match again.

const PROTOCOL = 1;
const CLIENT = "hakem-web/0.2";
const FEATURES = ["batch", "boards", "rematch", "chat"];
/** What protocol v1 allows a connection when the `welcome` does not say (an older server). */
const DEFAULT_RATE = { per_second: 20, burst: 40 };

/**
 * Sends a connection's messages within the rate the server gave in `welcome`: the server reads
 * a faster client late and closes one that runs a whole burst ahead, so a page that sends many
 * at once (the desk joining every board of a round) must pace them. Half the burst and nine
 * tenths of the rate are used, leaving room for frames that arrive bunched. Messages wait in
 * turn; a `background` one lets any other go first.
 */
class Pacer {
  constructor(rate) {
    this.perMs = (Math.max(0.1, Number(rate.per_second) || DEFAULT_RATE.per_second) * 0.9) / 1000;
    this.burst = Math.max(1, Math.floor((Number(rate.burst) || DEFAULT_RATE.burst) / 2));
    this.tokens = this.burst;
    this.last = performance.now();
    this.queue = []; // {send, background}
    this.timer = null;
  }

  take() {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + (now - this.last) * this.perMs);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /**
   * `item.send()` now if the rate allows and nothing waits, or later in its turn; an item
   * whose `live()` has turned false by then is given to `item.drop()` instead, using no turn.
   */
  submit(item) {
    if (!this.queue.length && this.take()) {
      item.send();
      return;
    }
    const firstBackground = item.background ? -1 : this.queue.findIndex((q) => q.background);
    if (firstBackground < 0) this.queue.push(item);
    else this.queue.splice(firstBackground, 0, item);
    this.schedule();
  }

  schedule() {
    if (this.timer !== null || !this.queue.length) return;
    const wait = Math.max(5, (1 - this.tokens) / this.perMs);
    this.timer = setTimeout(() => {
      this.timer = null;
      while (this.queue.length) {
        if (!this.queue[0].live()) {
          this.queue.shift().drop();
          continue;
        }
        if (!this.take()) break;
        this.queue.shift().send();
      }
      this.schedule();
    }, wait);
  }

  /** The connection is gone: nothing queued is sent (its requests were rejected). */
  stop() {
    clearTimeout(this.timer);
    this.timer = null;
    this.queue = [];
  }
}

export class ServerError extends Error {
  constructor(reply) {
    super(reply.message || reply.code);
    this.code = reply.code;
    this.rule = reply.rule || null;
    this.reply = reply;
  }
}

export class Connection {
  /** `token`: an account's token, given in `hello` (the player's page); none for the others. */
  constructor(token = null) {
    this.token = token;
    this.ws = null;
    this.nextId = 1;
    this.waiting = new Map(); // id -> {resolve, reject}
    this.listeners = new Set();
    this.statusListeners = new Set();
    this.ready = null;
    this.closedByUs = false;
    this.retry = 0;
    this.onReconnect = null;
    this.status = "connecting";
    /** The server's last `welcome` (who this connection speaks for: `identity`). */
    this.welcome = null;
    /** Paces what is sent within the rate of the last `welcome`. */
    this.pacer = null;
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/ws`;
  }

  /** Resolves once the server has said welcome. */
  open() {
    if (this.ready) return this.ready;
    this.closedByUs = false;
    this.ready = new Promise((resolve, reject) => {
      let welcomed = false;
      const ws = new WebSocket(this.url());
      this.ws = ws;
      this.setStatus("connecting");
      ws.addEventListener("open", () => {
        const hello = { type: "hello", protocol: PROTOCOL, client: CLIENT, features: FEATURES };
        if (this.token) hello.token = this.token;
        ws.send(JSON.stringify(hello));
      });
      ws.addEventListener("message", (e) => {
        let frame;
        try {
          frame = JSON.parse(e.data);
        } catch {
          return;
        }
        if (!welcomed) {
          if (frame.type === "welcome") {
            welcomed = true;
            this.welcome = frame;
            this.pacer = new Pacer(frame.rate || DEFAULT_RATE);
            this.retry = 0;
            this.setStatus("open");
            resolve(frame);
          } else if (frame.type === "error") {
            reject(new ServerError(frame));
          }
          return;
        }
        this.dispatch(frame);
      });
      ws.addEventListener("close", () => {
        this.pacer?.stop();
        this.pacer = null;
        for (const { reject: fail } of this.waiting.values()) {
          fail(new ServerError({ code: "disconnected", message: "connection lost" }));
        }
        this.waiting.clear();
        this.ready = null;
        if (!welcomed) reject(new ServerError({ code: "disconnected", message: "no connection" }));
        if (this.closedByUs) {
          this.setStatus("closed");
          return;
        }
        this.setStatus("reconnecting");
        const delay = Math.min(10000, 500 * 2 ** this.retry++);
        setTimeout(() => this.reconnect(), delay);
      });
    });
    return this.ready;
  }

  async reconnect() {
    if (this.closedByUs) return;
    try {
      await this.open();
      if (this.onReconnect) await this.onReconnect();
    } catch {
      // The close handler schedules the next try.
    }
  }

  close() {
    this.closedByUs = true;
    this.pacer?.stop();
    this.pacer = null;
    if (this.ws) this.ws.close();
    this.ws = null;
    this.ready = null;
    this.listeners.clear();
    this.statusListeners.clear();
    this.onReconnect = null;
  }

  setStatus(status) {
    this.status = status;
    for (const listener of this.statusListeners) listener(status);
  }

  onStatus(listener) {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /** Every frame that is not a direct reply: `state`, `event`, and errors without `re`. */
  onFrame(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  dispatch(frame) {
    if (frame.type === "events" && Array.isArray(frame.events)) {
      for (const event of frame.events) this.dispatch(event);
      return;
    }
    if (frame.re !== undefined && frame.re !== null && this.waiting.has(frame.re)) {
      const { resolve, reject } = this.waiting.get(frame.re);
      this.waiting.delete(frame.re);
      if (frame.type === "error") reject(new ServerError(frame));
      else resolve(frame);
      return;
    }
    for (const listener of this.listeners) listener(frame);
  }

  /**
   * Sends a message with an `id`, within the server's message rate; resolves with the reply,
   * rejects with a ServerError. `background`: any other message waiting goes first (a page's
   * own bulk, such as joining many boards). `wanted`: asked again when its turn comes; false
   * drops the message unsent (rejected with `cancelled`), for bulk that is no longer needed.
   * `sent`: called once the message has gone out (not for one dropped unsent).
   */
  async request(message, { background = false, wanted = null, sent = null } = {}) {
    await this.open();
    const id = this.nextId++;
    const ws = this.ws;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      const fail = (code, why) => {
        this.waiting.delete(id);
        reject(new ServerError({ code, message: why }));
      };
      const item = {
        background,
        // Rejected meanwhile (the connection closed), or no longer wanted.
        live: () => this.waiting.has(id) && (!wanted || wanted()),
        drop: () => {
          if (this.waiting.has(id)) fail("cancelled", "no longer needed");
        },
        send: () => {
          try {
            ws.send(JSON.stringify({ ...message, id }));
          } catch (e) {
            fail("disconnected", String(e));
            return;
          }
          sent?.();
        },
      };
      if (this.pacer) this.pacer.submit(item);
      else item.send();
    });
  }
}

/** A JSON document of the read-only HTTP API; a 404 rejects with the server's ServerError. */
async function getJson(path, missing) {
  const response = await fetch(path, { cache: "no-store" });
  if (!response.ok) throw new ServerError(await response.json().catch(() => ({ code: missing })));
  return response.json();
}

/** One line per tournament on the server: `{tournaments: [...]}`. */
export function fetchTournaments() {
  return getJson("/api/tournaments", "internal");
}

/** A player's ratings and rated rounds (`/api/players/NAME`). */
export function fetchProfile(name) {
  return getJson(`/api/players/${encodeURIComponent(name)}`, "unknown_account");
}

/** A player's latest matches, newest first (`/api/players/NAME/matches`). */
export function fetchPlayerMatches(name, limit = 20) {
  return getJson(`/api/players/${encodeURIComponent(name)}/matches?limit=${limit}`, "unknown_account");
}

/** Where the FIDE TRF of a tournament's completed rounds is served. */
export function trfUrl(id) {
  return `/api/tournaments/${encodeURIComponent(id)}/trf`;
}
