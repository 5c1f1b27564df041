// A player's page (`#/player?token=TOKEN`, with the account token the organizer handed out,
// or `#/player` after logging in on this browser): the player's matches as the server
// announces them (`your_match`), each with the link that seats them; a new one is said through
// the live region, and with the reader's leave it sounds and shows a notification: "your match
// is ready". Below: the player's ratings and rated rounds, and the lobby's seeks, to post one
// or accept another's.

import { t } from "./i18n.js";
import { el } from "./board.js";
import { Connection } from "./net.js";
import { describeError, points } from "./words.js";
import { storedSession } from "./account.js";
import { CLOCKS, GAMES } from "./lobby.js";
import { fetchPlayerMatches, fetchProfile } from "./net.js";
import { play, setSounds, soundsOn } from "./sound.js";
import { announce, main } from "./ui.js";

const NOTIFY_KEY = "hakem.notify";

export class PlayerView {
  constructor(params) {
    this.token = params.get("token") || storedSession()?.token || null;
    this.name = null;
    this.profile = null;
    this.seeks = [];
    this.seekError = null;
    this.matches = new Map();
    this.welcomed = false;
    this.error = null;
    this.conn = this.token ? new Connection(this.token) : null;
    this.conn?.onFrame((frame) => {
      if (frame.type === "your_match") this.take(frame);
      // The whole lobby again when this connection fell behind.
      else if (frame.type === "lobby") this.lobby(frame.seeks);
      else if (frame.type === "seek_added") this.lobby([...this.seeks, frame.seek]);
      else if (frame.type === "seek_removed") this.lobby(this.seeks.filter((s) => s.seek !== frame.seek));
    });
    this.paint();
    this.open();
  }

  destroy() {
    // Answers still on their way must not draw over the next page.
    this.destroyed = true;
    this.conn?.close();
    document.title = "hakem";
  }

  relabel() {
    this.paint();
  }

  async open() {
    if (!this.conn) return;
    try {
      const welcome = await this.conn.open();
      // The matches already there come right after the welcome, before the answer to this
      // ping: whatever comes after it is new.
      await this.conn.request({ type: "ping" });
      this.welcomed = true;
      this.name = welcome.identity?.name || null;
      if (!this.name) throw { code: "unauthorized", message: "" };
      await this.watchLobby();
      // Back after a lost connection: the lobby again (the matches come by themselves).
      this.conn.onReconnect = () => this.watchLobby().then(() => this.paint());
      await this.loadProfile();
    } catch (e) {
      this.error = e;
    }
    this.paint();
  }

  async watchLobby() {
    const lobby = await this.conn.request({ type: "watch_lobby" });
    this.seeks = lobby.seeks;
  }

  async loadProfile() {
    try {
      this.profile = await fetchProfile(this.name);
      this.recent = (await fetchPlayerMatches(this.name)).matches;
    } catch {
      this.profile = null;
    }
  }

  lobby(seeks) {
    this.seeks = seeks;
    if (this.welcomed) this.paint();
  }

  async post(form) {
    const [game, variant] = form.querySelector("[name=game]").value.split(":");
    const clock = CLOCKS[form.querySelector("[name=clock]").value];
    const rated = form.querySelector("[name=rated]").checked;
    const to = form.querySelector("[name=to]").value.trim() || undefined;
    await this.ask({ type: "seek", game, variant, sets: 3, clock, rated, to }, t(to ? "seek_challenged" : "seek_posted", { to }));
  }

  async ask(message, done) {
    this.seekError = null;
    try {
      await this.conn.request(message);
      if (done) announce(done);
    } catch (e) {
      this.seekError = describeError(e);
      announce(this.seekError);
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
      // The new match joins the latest ones.
      this.loadProfile().then(() => this.paint());
    }
    this.paint();
  }

  async notify(on) {
    localStorage.setItem(NOTIFY_KEY, on ? "1" : "0");
    if (on && "Notification" in window && Notification.permission === "default") await Notification.requestPermission();
    this.paint();
  }

  paint() {
    if (this.destroyed) return;
    const back = el("p", { class: "back" }, [el("a", { href: "#/", text: t("back_home") })]);
    if (!this.token || this.error) {
      main.replaceChildren(
        back,
        el("div", { class: "card fatal", id: "player-fatal" }, [
          el("h1", { text: t("player_no_token") }),
          el("p", { text: this.error ? describeError(this.error) : t("player_no_token_hint") }),
          el("p", {}, [el("a", { href: "#/account", id: "player-login", text: t("account_title") })]),
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
    const focused = document.activeElement?.id;
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
      // Once the server has said whose page this is.
      ...(this.name ? [ratingsCard(this.name, this.profile), recentCard(this.recent), this.seeksCard()] : []),
    );
    // A list drawn again keeps the focus where it was.
    if (focused) document.getElementById(focused)?.focus();
  }

  seeksCard() {
    const items = this.seeks.map((s) => {
      const own = s.account === this.name;
      const line = !s.to ? "seek_line" : s.to === this.name ? "seek_line_challenges_you" : "seek_line_challenge";
      const what = t(line, {
        to: s.to,
        who: s.account,
        game: t(`game_${s.game}`),
        variant: t(`variant_${s.game}_${s.variant}`),
        clock: s.clock ? t("seek_minutes", { minutes: Math.round(s.clock.initial_ms / 60000) }) : t("clock_none"),
        rated: t(s.rated ? "seek_rated" : "seek_casual"),
      });
      const button = own
        ? el("button", { type: "button", id: `cancel-${s.seek}`, onclick: () => this.ask({ type: "cancel_seek", seek: s.seek }, t("seek_cancelled")), text: t("seek_cancel"), "aria-label": t("seek_cancel_label", { what }) })
        : el("button", { type: "button", id: `accept-${s.seek}`, onclick: () => this.ask({ type: "accept_seek", seek: s.seek }), text: t("seek_accept"), "aria-label": t("seek_accept_label", { what }) });
      const profile = el("a", { href: `#/profile/${encodeURIComponent(s.account)}`, class: "profile-link", text: t("profile_link", { name: s.account }) });
      return el("li", { "data-seek": s.seek }, [el("span", { text: what }), " ", button, " ", profile]);
    });
    const options = [];
    for (const [game, variants] of Object.entries(GAMES)) {
      for (const variant of variants) options.push(el("option", { value: `${game}:${variant}`, text: `${t(`game_${game}`)} — ${t(`variant_${game}_${variant}`)}` }));
    }
    const form = el("form", { id: "seek-form", "aria-labelledby": "seek-form-heading" }, [
      el("div", { class: "fields" }, [
        el("div", { class: "field" }, [el("label", { for: "seek-game", text: t("field_game") }), el("select", { id: "seek-game", name: "game" }, options)]),
        el("div", { class: "field" }, [
          el("label", { for: "seek-clock", text: t("field_clock") }),
          el("select", { id: "seek-clock", name: "clock" }, Object.keys(CLOCKS).map((k) => el("option", { value: k, text: t(`clock_${k.replace("+", "_")}`) }))),
        ]),
      ]),
      el("div", { class: "field" }, [
        el("label", { for: "seek-to", text: t("seek_to_field") }),
        el("input", { type: "text", id: "seek-to", name: "to", maxlength: "40", autocomplete: "off", "aria-describedby": "seek-to-hint" }),
        el("p", { class: "hint", id: "seek-to-hint", text: t("seek_to_hint") }),
      ]),
      el("div", { class: "check" }, [el("input", { type: "checkbox", id: "seek-rated", name: "rated" }), el("label", { for: "seek-rated", text: t("seek_rated_field") })]),
      el("button", { type: "submit", id: "seek-button", text: t("seek_post") }),
    ]);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.post(form);
    });
    return el("section", { class: "card", "aria-labelledby": "seeks-heading" }, [
      el("h2", { id: "seeks-heading", text: t("seeks_heading") }),
      this.seekError ? el("p", { class: "error", id: "seek-error", role: "alert", text: this.seekError }) : null,
      items.length ? el("ul", { id: "seeks" }, items) : el("p", { id: "seeks", class: "empty", text: t("seeks_none") }),
      el("h3", { id: "seek-form-heading", text: t("seek_form_heading") }),
      form,
    ]);
  }
}

/** A player's ratings, one line a game, and their latest rated rounds (links to replay). */
function ratingsCard(name, profile) {
  const pools = Object.entries(profile?.ratings || {});
  const rows = pools.map(([pool, r]) =>
    el("tr", {}, [
      el("th", { scope: "row", text: t(`pool_${pool.replace("-", "_")}`) }),
      el("td", { text: `${Math.round(r.rating)}${r.provisional ? "?" : ""}` }),
      el("td", { text: `±${Math.round(r.deviation)}` }),
      el("td", { text: String(r.rounds) }),
    ]),
  );
  const history = (profile?.history || []).slice(0, 20).map((h) =>
    el("li", {}, [
      el("a", {
        href: `#/replay/${encodeURIComponent(h.match)}`,
        text: t("rating_round", { pool: t(`pool_${h.pool.replace("-", "_")}`), result: t(h.score === 1 ? "rating_won" : h.score === 0 ? "rating_lost" : "rating_drew"), rating: Math.round(h.rating) }),
      }),
    ]),
  );
  return el("section", { class: "card", "aria-labelledby": "ratings-heading" }, [
    el("h2", { id: "ratings-heading", text: t("ratings_heading", { name: name || "" }) }),
    rows.length
      ? el("table", { id: "ratings" }, [
          el("caption", { class: "visually-hidden", text: t("ratings_caption") }),
          el("thead", {}, [el("tr", {}, ["ratings_pool", "ratings_rating", "ratings_deviation", "ratings_rounds"].map((k) => el("th", { scope: "col", text: t(k) })))]),
          el("tbody", {}, rows),
        ])
      : el("p", { id: "ratings", class: "empty", text: t("ratings_none") }),
    rows.length ? el("p", { class: "hint", text: t("ratings_hint") }) : null,
    history.length ? el("h3", { text: t("ratings_history") }) : null,
    history.length ? el("ul", { id: "rating-history" }, history) : null,
  ]);
}

/** A player's latest matches: a finished one links to its replay, a live one to watch it. */
function recentCard(recent) {
  const lines = (recent || []).map((m) => {
    const finished = m.status === "finished";
    const text = t(finished ? "recent_finished" : "recent_live", {
      game: t(`game_${m.game}`),
      p1: m.players.p1,
      p2: m.players.p2,
      score: `${points(m.set_points.p1)}–${points(m.set_points.p2)}`,
      status: t(`status_${m.status}`),
    });
    const href = finished ? `#/replay/${encodeURIComponent(m.match)}` : `#/match/${encodeURIComponent(m.match)}`;
    return el("li", {}, [el("a", { href, text })]);
  });
  return el("section", { class: "card", "aria-labelledby": "recent-heading" }, [
    el("h2", { id: "recent-heading", text: t("recent_heading") }),
    lines.length ? el("ul", { id: "recent" }, lines) : el("p", { id: "recent", class: "empty", text: t("recent_none") }),
  ]);
}

/** Another player's page (`#/profile/NAME`): their ratings, rated rounds and latest matches, from
 * the public API. */
export class ProfileView {
  constructor(name) {
    this.name = name;
    this.profile = null;
    this.recent = null;
    this.failure = null;
    this.destroyed = false;
    document.title = `hakem — ${name}`;
    this.paint();
    this.load();
  }

  destroy() {
    this.destroyed = true;
    document.title = "hakem";
  }

  relabel() {
    this.paint();
  }

  async load() {
    try {
      this.profile = await fetchProfile(this.name);
      this.recent = (await fetchPlayerMatches(this.name)).matches;
    } catch (e) {
      this.failure = e.code === "unknown_account" ? t("profile_missing", { name: this.name }) : describeError(e);
    }
    this.paint();
  }

  paint() {
    if (this.destroyed) return;
    const back = el("p", { class: "back" }, [el("a", { href: "#/", text: t("back_home") })]);
    if (this.failure) {
      main.replaceChildren(back, el("div", { class: "card fatal", id: "profile-missing" }, [el("h1", { text: this.failure })]));
      return;
    }
    main.replaceChildren(
      back,
      el("h1", { class: "page-title", id: "profile-title", text: this.name }),
      ...(this.profile ? [ratingsCard(this.name, this.profile), recentCard(this.recent || [])] : [el("p", { text: t("loading") })]),
    );
  }
}
