// A tournament player's page (`#/player?token=TOKEN`, with the account token the organizer
// handed out): the player's matches as the server announces them (`your_match`), each with
// the link that seats them. A new one is said through the live region, and with the reader's
// leave it sounds and shows a notification: "your match is ready".

import { t } from "./i18n.js";
import { el } from "./board.js";
import { Connection } from "./net.js";
import { describeError } from "./words.js";
import { play, setSounds, soundsOn } from "./sound.js";
import { announce, main } from "./ui.js";

const NOTIFY_KEY = "hakem.notify";

export class PlayerView {
  constructor(params) {
    this.token = params.get("token");
    this.matches = new Map();
    this.welcomed = false;
    this.error = null;
    this.conn = this.token ? new Connection(this.token) : null;
    this.conn?.onFrame((frame) => {
      if (frame.type === "your_match") this.take(frame);
    });
    this.paint();
    this.open();
  }

  destroy() {
    this.conn?.close();
    document.title = "hakem";
  }

  relabel() {
    this.paint();
  }

  async open() {
    if (!this.conn) return;
    try {
      await this.conn.open();
      // The matches already there come right after the welcome, before the answer to this
      // ping: whatever comes after it is new.
      await this.conn.request({ type: "ping" });
      this.welcomed = true;
    } catch (e) {
      this.error = e;
    }
    this.paint();
  }

  take(frame) {
    const known = this.matches.has(frame.match);
    this.matches.set(frame.match, frame);
    if (!known && this.welcomed) {
      const say = t("player_ready", { game: t(`game_${frame.game}`) });
      announce(say);
      play("ready");
      if (localStorage.getItem(NOTIFY_KEY) === "1" && "Notification" in window && Notification.permission === "granted") {
        new Notification("hakem", { body: say });
      }
      document.title = `● ${say} — hakem`;
    }
    this.paint();
  }

  async notify(on) {
    localStorage.setItem(NOTIFY_KEY, on ? "1" : "0");
    if (on && "Notification" in window && Notification.permission === "default") await Notification.requestPermission();
    this.paint();
  }

  paint() {
    const back = el("p", { class: "back" }, [el("a", { href: "#/", text: t("back_home") })]);
    if (!this.token || this.error) {
      main.replaceChildren(
        back,
        el("div", { class: "card fatal", id: "player-fatal" }, [
          el("h1", { text: t("player_no_token") }),
          el("p", { text: this.error ? describeError(this.error) : t("player_no_token_hint") }),
        ]),
      );
      return;
    }
    const items = [...this.matches.values()].map((m) =>
      el("li", { "data-match": m.match }, [
        el("a", {
          href: `#/match/${encodeURIComponent(m.match)}?seat=${encodeURIComponent(m.seat_token)}`,
          id: `play-${m.match}`,
          text: t("player_match", { game: t(`game_${m.game}`), variant: t(`variant_${m.game}_${m.variant}`), id: m.match }),
        }),
      ]),
    );
    const sounds = el("input", { type: "checkbox", id: "player-sounds", checked: soundsOn(), onchange: (e) => setSounds(e.target.checked) });
    const notifyOn = localStorage.getItem(NOTIFY_KEY) === "1";
    const notify = el("input", { type: "checkbox", id: "player-notify", checked: notifyOn, onchange: (e) => this.notify(e.target.checked) });
    main.replaceChildren(
      back,
      el("h1", { class: "page-title", id: "player-title", text: t("player_title") }),
      el("section", { class: "card", "aria-labelledby": "player-matches-heading" }, [
        el("h2", { id: "player-matches-heading", text: t("player_matches") }),
        items.length ? el("ul", { id: "player-matches" }, items) : el("p", { id: "player-matches", class: "empty", text: t("player_none") }),
        el("p", { class: "hint", text: t("player_hint") }),
        el("div", { class: "check" }, [sounds, el("label", { for: "player-sounds", text: t("sounds_ready") })]),
        el("div", { class: "check" }, [notify, el("label", { for: "player-notify", text: t("player_notify") })]),
      ]),
    );
  }
}
