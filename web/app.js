// hakem web client: the match and tournament lists and match creation (`#/`), a match page
// (`#/match/ID`, `?seat=TOKEN` to play, `?arbiter=TOKEN` to arbitrate) and a tournament page
// (`#/tournament/ID`). Everything it shows comes from the server (protocol v1 and the
// read-only HTTP API); it keeps no rules of its own.

import { Connection, ServerError, fetchState, fetchTournament, fetchTournaments, trfUrl } from "./net.js";
import { t, lang, setLang, onLangChange } from "./i18n.js";
import { createBoard, el, parsePentagoMove, pentagoTurnRows } from "./board.js";
import {
  boardResult,
  byeWords,
  clockWords,
  colourOf,
  describeError,
  describeEvent,
  describeMove,
  firstMover,
  formatClock,
  playerName,
  points,
  pointsWords,
  reasonWords,
  sideWords,
  tiebreakHint,
  tiebreakName,
  tiebreakValue,
  tournamentStatus,
} from "./words.js";

const conn = new Connection();
const main = document.getElementById("main");
const announcer = document.getElementById("announcer");
const alertBox = document.getElementById("alert");

const GAMES = {
  pentago: ["tr", "classic"],
  quoridor: ["standard"],
  pente: ["tournament", "free"],
};

const CLOCKS = {
  "5": { initial_ms: 300000, increment_ms: 0 },
  "10": { initial_ms: 600000, increment_ms: 0 },
  "15": { initial_ms: 900000, increment_ms: 0 },
  "25": { initial_ms: 1500000, increment_ms: 0 },
  "3+2": { initial_ms: 180000, increment_ms: 2000 },
  none: null,
};

const other = (seat) => (seat === "p1" ? "p2" : "p1");

// ---------------------------------------------------------------------------------------------
// Announcements and errors

/** Says `text` through the polite live region (and keeps the last few lines there). */
export function announce(text) {
  if (!text) return;
  const line = el("p", { text });
  announcer.append(line);
  while (announcer.childElementCount > 6) announcer.firstElementChild.remove();
}

let alertTimer = null;
function showAlert(text) {
  clearTimeout(alertTimer);
  alertBox.textContent = text;
  alertBox.hidden = !text;
  if (text) alertTimer = setTimeout(() => showAlert(""), 10000);
}

function connectionBanner() {
  const banner = document.getElementById("connection");
  const paint = (status) => {
    banner.hidden = status === "open" || status === "closed" || status === "connecting";
    banner.textContent = status === "reconnecting" ? t("reconnecting") : "";
  };
  conn.onStatus(paint);
  return paint;
}

// ---------------------------------------------------------------------------------------------
// Language switch

function paintLangSwitch() {
  const button = document.getElementById("lang-switch");
  const next = lang() === "tr" ? "en" : "tr";
  button.textContent = next === "tr" ? "Türkçe" : "English";
  button.setAttribute("lang", next);
  button.setAttribute("aria-label", next === "tr" ? "Türkçe'ye geç" : "Switch to English");
  document.documentElement.lang = lang();
  document.getElementById("skip-link").textContent = t("skip_to_content");
  document.getElementById("home-link").setAttribute("aria-label", t("home_label"));
  document.getElementById("tagline").textContent = t("tagline");
  document.getElementById("footer-text").textContent = t("footer");
}

document.getElementById("lang-switch").addEventListener("click", () => {
  setLang(lang() === "tr" ? "en" : "tr");
});

// ---------------------------------------------------------------------------------------------
// Router

let view = null;
/** A match the lobby just created against the computer: its page says so and focuses Ready. */
let arrival = null;

function parseHash() {
  const hash = location.hash.replace(/^#/, "");
  const [path, query = ""] = hash.split("?");
  const params = new URLSearchParams(query);
  const m = /^\/match\/([^/]+)$/.exec(path);
  if (m) return { name: "match", id: decodeURIComponent(m[1]), params };
  const tm = /^\/tournament\/([^/]+)$/.exec(path);
  if (tm) return { name: "tournament", id: decodeURIComponent(tm[1]), params };
  return { name: "lobby", params };
}

function route() {
  view?.destroy();
  view = null;
  showAlert("");
  const where = parseHash();
  if (where.name === "match") view = new MatchView(where.id, where.params);
  else if (where.name === "tournament") view = new TournamentView(where.id);
  else view = new LobbyView();
}

window.addEventListener("hashchange", route);
onLangChange(() => {
  paintLangSwitch();
  view?.relabel();
});

// ---------------------------------------------------------------------------------------------
// Lobby: the live matches, the tournaments and a form to create a casual match

const shown = new WeakMap();

/** True when `node` already shows `data`; otherwise remembers it. Lists polled every few
 * seconds are drawn again only when they change, so that a focused link keeps the focus. */
function unchanged(node, data) {
  const key = JSON.stringify(data);
  if (shown.get(node) === key) return true;
  shown.set(node, key);
  return false;
}

class LobbyView {
  constructor() {
    this.created = null;
    this.matches = null;
    this.tournaments = null;
    this.form = {
      opponent: "person",
      game: "pentago",
      variant: "tr",
      sets: "3",
      clock: "15",
      p1: "",
      p2: "",
      level: "2",
      side: "first",
      me: "",
    };
    document.title = `hakem — ${t("lobby_title")}`;
    this.build();
    this.refresh();
    this.timer = setInterval(() => this.refresh(), 4000);
  }

  destroy() {
    clearInterval(this.timer);
  }

  relabel() {
    this.saveForm();
    document.title = `hakem — ${t("lobby_title")}`;
    this.build();
    this.paintMatches();
    this.paintTournaments();
  }

  saveForm() {
    const form = main.querySelector("#create-form");
    if (!form) return;
    for (const key of Object.keys(this.form)) {
      // A radio group gives a RadioNodeList, whose value is the checked button's.
      const field = form.elements[key];
      if (field && field.value !== undefined) this.form[key] = field.value;
    }
  }

  build() {
    const f = this.form;
    const option = (value, text, selected) => el("option", { value, text, selected: selected === value });
    const variantSelect = el("select", { id: "variant", name: "variant" });
    const fillVariants = (game) => {
      variantSelect.replaceChildren(
        ...GAMES[game].map((v) => option(v, t(`variant_${game}_${v}`), GAMES[game].includes(f.variant) ? f.variant : GAMES[game][0])),
      );
    };
    const gameSelect = el(
      "select",
      {
        id: "game",
        name: "game",
        onchange: (e) => {
          f.game = e.target.value;
          f.variant = GAMES[f.game][0];
          fillVariants(f.game);
          this.paintSides();
        },
      },
      Object.keys(GAMES).map((g) => option(g, t(`game_${g}`), f.game)),
    );
    fillVariants(f.game);
    const field = (id, label, control, hint) =>
      el("div", { class: "field" }, [el("label", { for: id, text: label }), control, hint ? el("p", { class: "hint", id: `${id}-hint`, text: hint }) : null]);
    // A radio button with its label and, under it, a hint that describes it.
    const choice = (name, value, text, hint, checked, onchange) => {
      const id = `${name}-${value}`;
      return el("div", { class: "choice" }, [
        el("input", { type: "radio", name, id, value, checked, "aria-describedby": hint ? `${id}-hint` : null, onchange }),
        el("div", { class: "choice-text" }, [
          el("label", { for: id, text }),
          hint ? el("p", { class: "hint", id: `${id}-hint`, text: hint }) : null,
        ]),
      ]);
    };
    const pickOpponent = (e) => {
      f.opponent = e.target.value;
      this.paintOpponent();
    };

    const opponent = el("fieldset", { class: "choices opponent", id: "opponent-group" }, [
      el("legend", { text: t("field_opponent") }),
      choice("opponent", "person", t("opponent_person"), t("opponent_person_hint"), f.opponent !== "computer", pickOpponent),
      choice("opponent", "computer", t("opponent_computer"), t("opponent_computer_hint"), f.opponent === "computer", pickOpponent),
    ]);

    // Two people: a name for each seat.
    this.personFields = el("div", { class: "fields", id: "person-fields" }, [
      field("p1", t("field_p1"), el("input", { id: "p1", name: "p1", type: "text", maxlength: "100", autocomplete: "off", value: f.p1, placeholder: t("player_1") })),
      field("p2", t("field_p2"), el("input", { id: "p2", name: "p2", type: "text", maxlength: "100", autocomplete: "off", value: f.p2, placeholder: t("player_2") })),
    ]);

    // The computer: its level, the side the person takes, the person's name.
    const levels = ["1", "2", "3", "4", "5"].map((n) => option(n, t(`level_${n}`), f.level));
    this.sideChoices = el("fieldset", { class: "choices sides", id: "side-group", "aria-describedby": "side-hint" }, [
      el("legend", { text: t("field_side") }),
      choice("side", "first", "", null, f.side !== "second", (e) => (f.side = e.target.value)),
      choice("side", "second", "", null, f.side === "second", (e) => (f.side = e.target.value)),
      el("p", { class: "hint", id: "side-hint", text: t("side_hint") }),
    ]);
    this.botFields = el("div", { class: "bot-fields", id: "bot-fields" }, [
      el("div", { class: "fields" }, [
        field("bot-level", t("field_level"), el("select", { id: "bot-level", name: "level", "aria-describedby": "bot-level-hint" }, levels), t("level_hint")),
        field("me", t("field_me"), el("input", { id: "me", name: "me", type: "text", maxlength: "100", autocomplete: "off", value: f.me })),
      ]),
      this.sideChoices,
    ]);

    this.createHint = el("p", { class: "hint", id: "create-hint" });
    const form = el(
      "form",
      {
        id: "create-form",
        class: "card",
        "aria-labelledby": "create-heading",
        onsubmit: (e) => {
          e.preventDefault();
          this.create();
        },
      },
      [
        el("h2", { id: "create-heading", text: t("create_heading") }),
        this.createHint,
        opponent,
        el("div", { class: "fields" }, [
          field("game", t("field_game"), gameSelect),
          field("variant", t("field_variant"), variantSelect),
          field(
            "sets",
            t("field_sets"),
            el("select", { id: "sets", name: "sets" }, [option("3", t("sets_3"), f.sets), option("1", t("sets_1"), f.sets)]),
          ),
          field(
            "clock",
            t("field_clock"),
            el(
              "select",
              { id: "clock", name: "clock" },
              Object.keys(CLOCKS).map((k) => option(k, t(`clock_${k.replace("+", "_")}`), f.clock)),
            ),
          ),
        ]),
        this.personFields,
        this.botFields,
        el("button", { type: "submit", class: "primary", id: "create-button" }),
      ],
    );

    this.createdBox = el("section", { id: "created", class: "card created", "aria-labelledby": "created-heading", hidden: true });
    this.list = el("div", { id: "match-list" });
    const live = el("section", { class: "card", "aria-labelledby": "live-heading" }, [
      el("h2", { id: "live-heading", text: t("live_heading") }),
      this.list,
    ]);
    this.tournamentList = el("div", { id: "tournament-list" });
    const tournaments = el("section", { class: "card", "aria-labelledby": "tournaments-heading" }, [
      el("h2", { id: "tournaments-heading", text: t("tournaments_heading") }),
      this.tournamentList,
    ]);
    main.replaceChildren(
      el("h1", { class: "page-title", text: t("lobby_title") }),
      el("div", { class: "lobby" }, [el("div", { class: "col" }, [form, this.createdBox]), el("div", { class: "col" }, [tournaments, live])]),
    );
    this.paintOpponent();
    this.paintSides();
    this.paintCreated();
  }

  /** Shows the fields of the chosen opponent: names for two people, or the computer's level. */
  paintOpponent() {
    const computer = this.form.opponent === "computer";
    this.personFields.hidden = computer;
    this.botFields.hidden = !computer;
    this.createHint.textContent = t(computer ? "create_hint_computer" : "create_hint");
    main.querySelector("#create-button").textContent = t(computer ? "play_computer_button" : "create_button");
  }

  /** The side choices say what moving first or second means in the chosen game. */
  paintSides() {
    const game = this.form.game;
    for (const side of ["first", "second"]) {
      const what = sideWords(game, side);
      const label = this.sideChoices.querySelector(`label[for="side-${side}"]`);
      label.textContent = what ? t(`side_${side}_as`, { what }) : t(`side_${side}`);
    }
  }

  async create() {
    this.saveForm();
    const f = this.form;
    const button = main.querySelector("#create-button");
    button.disabled = true;
    const base = { type: "create_match", game: f.game, variant: f.variant, sets: Number(f.sets), clock: CLOCKS[f.clock] };
    try {
      if (f.opponent === "computer") {
        // The server seats its own engine on the other seat; the person goes straight to theirs.
        const mine = f.side === "second" ? "p2" : "p1";
        const botSeat = other(mine);
        const level = Number(f.level);
        const reply = await conn.request({
          ...base,
          players: { [mine]: f.me.trim() || t(mine === "p1" ? "player_1" : "player_2"), [botSeat]: t("bot_name", { level }) },
          house_bot: { seat: botSeat, level },
        });
        arrival = { match: reply.match, say: t("created_computer_say", { level }) };
        location.hash = `#/match/${encodeURIComponent(reply.match)}?seat=${encodeURIComponent(reply.seat_tokens[mine])}`;
        return;
      }
      const reply = await conn.request({ ...base, players: { p1: f.p1.trim(), p2: f.p2.trim() } });
      this.created = { ...reply, game: f.game, p1: f.p1.trim(), p2: f.p2.trim() };
      this.paintCreated();
      announce(t("created_say"));
      main.querySelector("#created-heading")?.focus();
      this.refresh();
    } catch (e) {
      showAlert(describeError(e));
    } finally {
      button.disabled = false;
    }
  }

  paintCreated() {
    const c = this.created;
    const box = this.createdBox;
    if (!c) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    const base = `${location.origin}/#/match/${encodeURIComponent(c.match)}`;
    const link = (id, label, url, note) => {
      const input = el("input", { id, type: "text", readonly: true, value: url, class: "link-input", "aria-describedby": `${id}-note` });
      const copy = el("button", {
        type: "button",
        class: "secondary",
        text: t("copy"),
        "aria-label": `${t("copy")}: ${label}`,
        onclick: async () => {
          try {
            await navigator.clipboard.writeText(url);
          } catch {
            input.select();
            document.execCommand("copy");
          }
          announce(t("copied"));
          copy.textContent = t("copied");
          setTimeout(() => (copy.textContent = t("copy")), 2000);
        },
      });
      return el("div", { class: "field link" }, [
        el("label", { for: id, text: label }),
        el("div", { class: "link-row" }, [input, copy, el("a", { href: url, class: "button secondary", text: t("open"), "aria-label": `${t("open")}: ${label}` })]),
        el("p", { class: "hint", id: `${id}-note`, text: note }),
      ]);
    };
    const name = (seat) => c[seat] || t(seat === "p1" ? "player_1" : "player_2");
    box.replaceChildren(
      el("h2", { id: "created-heading", tabindex: "-1", text: t("created_heading") }),
      el("p", { text: t("created_hint") }),
      link("link-p1", t("invite_for", { name: name("p1") }), `${base}?seat=${encodeURIComponent(c.seat_tokens.p1)}`, t("invite_note")),
      link("link-p2", t("invite_for", { name: name("p2") }), `${base}?seat=${encodeURIComponent(c.seat_tokens.p2)}`, t("invite_note")),
      link("link-arbiter", t("arbiter_link"), `${base}?arbiter=${encodeURIComponent(c.arbiter_token)}`, t("arbiter_note")),
      link("link-watch", t("watch_link"), base, t("watch_note")),
    );
  }

  async refresh() {
    const [matches, tournaments] = await Promise.all([
      conn.request({ type: "list_matches" }).then(
        (reply) => reply.matches,
        () => this.matches || [],
      ),
      fetchTournaments().then(
        (reply) => reply.tournaments,
        () => this.tournaments || [],
      ),
    ]);
    this.matches = matches;
    this.tournaments = tournaments;
    this.paintMatches();
    this.paintTournaments();
  }

  /** The tournaments: those in play first, then those taking entries, then the finished; newest first. */
  paintTournaments() {
    const list = this.tournaments;
    if (unchanged(this.tournamentList, list)) return;
    if (!list) {
      this.tournamentList.replaceChildren(el("p", { text: t("loading") }));
      return;
    }
    if (!list.length) {
      this.tournamentList.replaceChildren(el("p", { class: "empty", id: "no-tournaments", text: t("no_tournaments") }));
      return;
    }
    const order = { running: 0, registration: 1, finished: 2 };
    const sorted = [...list].sort((a, b) => (order[a.status] ?? 3) - (order[b.status] ?? 3) || (b.created_ms || 0) - (a.created_ms || 0));
    const rows = sorted.map((x) =>
      el("tr", { "data-tournament": x.tournament }, [
        el("th", { scope: "row" }, [el("a", { href: `#/tournament/${encodeURIComponent(x.tournament)}`, text: x.name })]),
        el("td", { text: `${t(`game_${x.game}`)} (${t(`variant_${x.game}_${x.variant}`)})` }),
        el("td", { class: "num", text: String(x.players) }),
        el("td", { text: tournamentStatus(x.status) }),
        el("td", { text: t("round_of", { n: x.current_round, m: x.rounds }) }),
      ]),
    );
    this.tournamentList.replaceChildren(
      el("table", { class: "matches tournaments" }, [
        el("caption", { class: "visually-hidden", text: t("tournaments_heading") }),
        el("thead", {}, [
          el("tr", {}, [
            el("th", { scope: "col", text: t("col_tournament") }),
            el("th", { scope: "col", text: t("col_game") }),
            el("th", { scope: "col", class: "num", text: t("col_entrants") }),
            el("th", { scope: "col", text: t("col_status") }),
            el("th", { scope: "col", text: t("col_round") }),
          ]),
        ]),
        el("tbody", {}, rows),
      ]),
    );
  }

  paintMatches() {
    const matches = this.matches;
    if (unchanged(this.list, matches)) return;
    if (!matches) {
      this.list.replaceChildren(el("p", { text: t("loading") }));
      return;
    }
    if (!matches.length) {
      this.list.replaceChildren(el("p", { class: "empty", text: t("no_matches") }));
      return;
    }
    const sorted = [...matches].sort((a, b) => {
      const rank = (m) => (m.status === "finished" ? 1 : 0);
      return rank(a) - rank(b);
    });
    const rows = sorted.map((m) =>
      el("tr", {}, [
        el("td", { text: `${t(`game_${m.game}`)} (${t(`variant_${m.game}_${m.variant}`)})` }),
        el("td", {}, [el("a", { href: `#/match/${encodeURIComponent(m.match)}`, text: `${m.players.p1} – ${m.players.p2}` })]),
        el("td", { text: `${points(m.set_points.p1)}–${points(m.set_points.p2)}` }),
        el("td", { text: t(`status_${m.status}`) + (m.status === "playing" ? ` (${t("set_n", { n: m.set })})` : "") }),
      ]),
    );
    this.list.replaceChildren(
      el("table", { class: "matches" }, [
        el("caption", { class: "visually-hidden", text: t("live_heading") }),
        el("thead", {}, [
          el("tr", {}, [
            el("th", { scope: "col", text: t("col_game") }),
            el("th", { scope: "col", text: t("col_players") }),
            el("th", { scope: "col", text: t("col_score") }),
            el("th", { scope: "col", text: t("col_status") }),
          ]),
        ]),
        el("tbody", {}, rows),
      ]),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// A tournament: its settings, the standings with tie-breaks, the pairings of every round with
// links to the matches. It reads `/api/tournaments/ID` again every few seconds until the
// tournament is finished.

const TOURNAMENT_POLL_MS = 2500;

class TournamentView {
  constructor(id) {
    this.id = id;
    this.model = null;
    this.json = null;
    this.fatal = null;
    this.timer = null;
    this.gone = false;
    this.paint();
    this.refresh();
  }

  destroy() {
    this.gone = true;
    clearTimeout(this.timer);
  }

  relabel() {
    this.paint();
  }

  /** Fetches the view, then once more after a pause while the tournament is not finished. */
  async refresh() {
    clearTimeout(this.timer);
    try {
      const v = await fetchTournament(this.id);
      if (this.gone) return;
      this.update(v);
    } catch (e) {
      if (this.gone) return;
      if (e.code === "unknown_tournament") {
        this.fatal = e;
        this.paint();
        return;
      }
      // The server is out of reach for now: the next try comes with the next tick.
    }
    if (this.model?.status !== "finished") this.timer = setTimeout(() => this.refresh(), TOURNAMENT_POLL_MS);
  }

  update(v) {
    const json = JSON.stringify(v);
    if (json === this.json) return;
    this.json = json;
    const before = this.model;
    this.model = v;
    if (before) this.sayNews(before, v);
    this.paint();
  }

  /** A completed round, a newly paired round and the end, through the polite live region. */
  sayNews(before, v) {
    if (v.completed_rounds > before.completed_rounds) announce(t("say_round_complete", { n: v.completed_rounds }));
    if (v.current_round > before.current_round) announce(t("say_round_paired", { n: v.current_round }));
    if (v.status === "finished" && before.status !== "finished") {
      const first = v.standings.filter((s) => s.rank === 1).map((s) => s.name);
      announce(t("say_tournament_finished", { names: first.join(", ") }));
    }
  }

  name(id) {
    return this.model.players.find((p) => p.id === id)?.name || `${t("col_no")} ${id}`;
  }

  statusLine() {
    const v = this.model;
    if (v.status === "registration") return t("status_t_registration");
    if (v.status === "finished") return t("status_t_finished", { n: v.completed_rounds });
    const params = { n: v.current_round, m: v.rounds };
    return t(v.completed_rounds >= v.current_round ? "status_t_waiting" : "status_t_running", params);
  }

  paint() {
    // Drawn anew when something changed: a focused link keeps the focus (links have stable ids).
    const focused = main.contains(document.activeElement) ? document.activeElement.id : null;
    const back = el("p", { class: "back" }, [el("a", { href: "#/", id: "back-link", text: t("back_home") })]);
    const v = this.model;
    if (this.fatal) {
      document.title = `hakem — ${t("fatal_unknown_tournament")}`;
      main.replaceChildren(
        el("div", { class: "card fatal", id: "tournament-fatal" }, [
          el("h1", { text: t("fatal_unknown_tournament") }),
          el("p", { text: describeError(this.fatal) }),
          back,
        ]),
      );
      return;
    }
    if (!v) {
      document.title = `hakem — ${t("tournament_word")}`;
      main.replaceChildren(back, el("h1", { class: "page-title", text: t("loading") }));
      return;
    }
    document.title = `hakem — ${v.name}`;
    main.replaceChildren(
      back,
      el("h1", { class: "page-title tournament-title", id: "tournament-name", text: v.name }),
      el("p", { class: "turn-line tournament-status", id: "tournament-status", text: this.statusLine() }),
      this.about(),
      el("div", { class: "tournament" }, [this.standings(), this.pairings()]),
    );
    if (focused) document.getElementById(focused)?.focus({ preventScroll: true });
  }

  /** The settings in a few words, and the TRF download. */
  about() {
    const v = this.model;
    const item = (label, value) => el("div", {}, [el("dt", { text: label }), el("dd", { text: value })]);
    const match = [
      v.sets === 1 ? t("one_set") : t("best_of", { n: v.sets }),
      v.clock ? t("clock_desc", { min: Math.round(v.clock.initial_ms / 60000), inc: Math.round(v.clock.increment_ms / 1000) }) : t("untimed"),
    ].join(" · ");
    let lot = t("lot_not_yet");
    if (v.colour_lot) {
      const what = t(v.colour_lot.seat === "p1" ? "lot_p1" : "lot_p2");
      lot = v.colour_lot.drawn ? t("lot_drawn", { what }) : what;
    }
    return el("section", { class: "card about", "aria-labelledby": "about-heading" }, [
      el("h2", { id: "about-heading", text: t("about_heading") }),
      el("dl", { class: "settings", id: "tournament-settings" }, [
        item(t("about_game"), `${t(`game_${v.game}`)} — ${t(`variant_${v.game}_${v.variant}`)}`),
        item(t("about_match"), match),
        item(t("about_rounds"), String(v.rounds)),
        item(t("about_players"), String(v.players.length)),
        item(t("about_pairing"), t(`pairing_${v.pairing}`)),
        item(t("about_next_round"), t(v.auto_pair ? "auto_pair_on" : "auto_pair_off")),
        item(t("about_tiebreaks"), t("edition_value", { edition: v.edition })),
        item(t("about_colour_lot"), lot),
        item(t("about_half_byes"), t("half_byes_value", { n: v.max_half_byes })),
      ]),
      el("div", { class: "row" }, [
        el("a", {
          href: trfUrl(v.tournament),
          download: `${v.tournament}.trf`,
          id: "trf-link",
          class: "button secondary",
          "aria-describedby": "trf-hint",
          text: t("trf_link"),
        }),
        el("p", { class: "hint", id: "trf-hint", text: t("trf_hint") }),
      ]),
    ]);
  }

  /** Rank, number, name, points and each tie-break in the tournament's order. */
  standings() {
    const v = this.model;
    const players = new Map(v.players.map((p) => [p.id, p]));
    const nameCell = (id, name) => {
      const withdrawn = players.get(id)?.withdrawn_from;
      return el("th", { scope: "row" }, [
        name,
        withdrawn ? el("span", { class: "withdrawn", text: ` (${t("withdrawn_from", { n: withdrawn })})` }) : null,
      ]);
    };
    const noHead = el("th", { scope: "col", class: "num" }, [el("abbr", { title: t("col_no_title"), text: t("col_no") })]);
    const table = (caption, head, rows) =>
      el("div", { class: "table-wrap", id: "standings-wrap", role: "region", tabindex: "0", "aria-labelledby": "standings-caption" }, [
        el("table", { class: "data-table standings", id: "standings" }, [
          el("caption", { id: "standings-caption", text: caption }),
          el("thead", {}, [el("tr", {}, head)]),
          el("tbody", {}, rows),
        ]),
      ]);
    const section = (children) =>
      el("section", { class: "card", "aria-labelledby": "standings-heading" }, [el("h2", { id: "standings-heading", text: t("standings_heading") }), ...children]);

    if (!v.completed_rounds) {
      // No result yet: the players in the order of their pairing numbers.
      const rows = [...v.players].sort((a, b) => a.id - b.id).map((p) => el("tr", { "data-player": String(p.id) }, [el("td", { class: "num", text: String(p.id) }), nameCell(p.id, p.name)]));
      return section([table(t("starting_caption"), [noHead, el("th", { scope: "col", text: t("col_name") })], rows), el("p", { class: "hint", text: t("starting_hint") })]);
    }
    const codes = v.tiebreaks || [];
    const head = [
      el("th", { scope: "col", class: "num", text: t("col_rank") }),
      noHead,
      el("th", { scope: "col", text: t("col_name") }),
      el("th", { scope: "col", class: "num", text: t("col_points") }),
      ...codes.map((code) => el("th", { scope: "col", class: "num", "data-tiebreak": code }, [el("abbr", { title: tiebreakName(code), text: code })])),
    ];
    const rows = v.standings.map((s) =>
      el("tr", { "data-player": String(s.id) }, [
        el("td", { class: "num", text: String(s.rank) }),
        el("td", { class: "num", text: String(s.id) }),
        nameCell(s.id, s.name),
        el("td", { class: "num points", text: points(s.points) }),
        ...codes.map((code) => el("td", { class: "num", "data-tiebreak": code, text: tiebreakValue(s.tiebreaks?.[code]) })),
      ]),
    );
    const legend = el("dl", { class: "legend", id: "tiebreak-legend" }, codes.map((code) => {
      const hint = tiebreakHint(code);
      return el("div", {}, [el("dt", {}, [el("abbr", { title: tiebreakName(code), text: code })]), el("dd", { text: hint ? `${tiebreakName(code)}: ${hint}` : tiebreakName(code) })]);
    }));
    return section([
      table(t("standings_caption", { n: v.completed_rounds }), head, rows),
      codes.length ? el("h3", { id: "legend-heading", text: t("tiebreaks_legend") }) : null,
      codes.length ? legend : null,
    ]);
  }

  /** Every paired round, the newest first: its boards, results and links, and its byes. */
  pairings() {
    const v = this.model;
    const rounds = [...v.pairings].sort((a, b) => b.round - a.round);
    const side = (which) => {
      const what = sideWords(v.game, which);
      return what ? t(`col_${which}_as`, { what }) : t(`col_${which}`);
    };
    const heads = [side("first"), side("second")];
    return el("section", { class: "card", id: "pairings", "aria-labelledby": "pairings-heading" }, [
      el("h2", { id: "pairings-heading", text: t("pairings_heading") }),
      rounds.length ? el("p", { class: "hint", id: "sides-note", text: t(v.sets === 1 ? "sides_note_one" : "sides_note_sets") }) : null,
      ...(rounds.length ? rounds.map((r) => this.round(r, heads)) : [el("p", { class: "empty", text: t("no_pairings") })]),
    ]);
  }

  round(r, [first, second]) {
    const who = (id) => t("player_no", { name: this.name(id), no: id });
    const playing = r.boards.some((b) => b.result == null);
    const rows = r.boards.map((b) => {
      const text = t(b.result == null ? "watch_live" : "open_match");
      return el("tr", { "data-board": String(b.board) }, [
        el("th", { scope: "row", class: "num", text: String(b.board) }),
        el("td", { text: who(b.p1) }),
        el("td", { class: b.result == null ? "board-result playing" : "board-result", text: boardResult(b.result) }),
        el("td", { text: who(b.p2) }),
        el("td", { class: "match-link" }, [
          el("a", {
            href: `#/match/${encodeURIComponent(b.match)}`,
            id: `match-${b.match}`,
            "aria-label": t("match_link_label", { text, board: b.board, p1: this.name(b.p1), p2: this.name(b.p2) }),
            text,
          }),
        ]),
      ]);
    });
    const byesId = `byes-${r.round}`;
    return el("div", { class: "round", id: `round-${r.round}`, "data-round": String(r.round) }, [
      el("h3", { text: `${t("round_heading", { n: r.round })} (${t(playing ? "round_playing" : "round_done")})` }),
      r.boards.length
        ? el("table", { class: "data-table pairings" }, [
            el("caption", { class: "visually-hidden", text: t("pairings_caption", { n: r.round }) }),
            el("thead", {}, [
              el("tr", {}, [
                el("th", { scope: "col", class: "num", text: t("col_board") }),
                el("th", { scope: "col", text: first }),
                el("th", { scope: "col", text: t("col_result") }),
                el("th", { scope: "col", text: second }),
                el("th", { scope: "col", text: t("col_match") }),
              ]),
            ]),
            el("tbody", {}, rows),
          ])
        : null,
      r.byes.length ? el("p", { class: "byes-label", id: byesId, text: t("byes_label", { n: r.round }) }) : null,
      r.byes.length
        ? el(
            "ul",
            { class: "byes", "aria-labelledby": byesId },
            r.byes.map((x) =>
              el("li", { "data-player": String(x.player), text: t("bye_line", { name: this.name(x.player), no: x.player, kind: byeWords(x.kind), pts: pointsWords(x.points) }) }),
            ),
          )
        : null,
    ]);
  }
}

// ---------------------------------------------------------------------------------------------
// A match: watch, play or arbitrate

function initialBoard(game, old) {
  if (game === "pentago") return { rows: Array(6).fill("......") };
  if (game === "pente") return { rows: Array(19).fill(".".repeat(19)), captures: { first: 0, second: 0 } };
  return { pawns: { first: "e1", second: "e9" }, walls: [], walls_left: old?.walls_left_start || { first: 10, second: 10 } };
}

class MatchView {
  constructor(id, params) {
    this.id = id;
    this.seatToken = params.get("seat");
    this.arbiterToken = params.get("arbiter");
    this.role = this.seatToken ? "player" : this.arbiterToken ? "arbiter" : "spectator";
    this.you = null;
    this.model = null;
    this.wsSeq = 0;
    this.legal = null;
    this.clockBase = null;
    this.mode = "pawn";
    this.selectedQuadrant = null;
    this.claims = [];
    this.log = [];
    this.said = { place: null, move: false };
    this.fatal = null;
    this.autoPress = localStorage.getItem("hakem.autopress") === "1";
    this.board = null;
    this.boardGame = null;
    this.resignArmed = false;
    this.arrival = arrival?.match === id ? arrival : null;
    arrival = null;

    this.unsubscribe = conn.onFrame((frame) => this.onFrame(frame));
    conn.onReconnect = () => this.join();
    this.keyHandler = (e) => this.onKey(e);
    document.addEventListener("keydown", this.keyHandler);
    this.build();
    this.join();
    this.ticker = setInterval(() => this.paintClocks(), 100);
  }

  destroy() {
    clearInterval(this.ticker);
    this.unsubscribe();
    conn.onReconnect = null;
    document.removeEventListener("keydown", this.keyHandler);
    conn.request({ type: "leave", match: this.id }).catch(() => {});
  }

  relabel() {
    this.build();
    this.render();
  }

  async join() {
    const message =
      this.role === "player"
        ? { type: "join", match: this.id, seat_token: this.seatToken, legal_moves: true }
        : this.role === "arbiter"
          ? { type: "join", match: this.id, arbiter_token: this.arbiterToken }
          : { type: "watch", match: this.id };
    try {
      await conn.request(message);
      this.fatal = null;
    } catch (e) {
      if (e.code === "unknown_match" || e.code === "unauthorized") {
        this.fatal = e;
        this.render();
      }
      showAlert(describeError(e));
    }
  }

  // --- frames ---------------------------------------------------------------------------------

  onFrame(frame) {
    if (frame.type === "error") {
      showAlert(describeError(frame, this.model?.game));
      return;
    }
    if (frame.match !== this.id) return;
    if (frame.type === "state") this.onState(frame, true);
    else if (frame.type === "event") this.onEvent(frame);
  }

  onState(s, fromSocket) {
    if (fromSocket) {
      if (s.you) this.you = s.you;
      if (s.seq >= this.wsSeq && Array.isArray(s.position?.legal_moves)) this.legal = s.position.legal_moves;
      this.wsSeq = Math.max(this.wsSeq, s.seq);
    }
    if (!this.model || s.seq >= this.model.seq) {
      const before = this.model;
      this.model = s;
      if (fromSocket || !before || s.seq > before.seq) this.setClocks(s.clocks);
      this.sayCaptures(before, s);
      if (before?.game !== s.game || !before) document.title = `hakem — ${t(`game_${s.game}`)}: ${playerName(s, "p1")} – ${playerName(s, "p2")}`;
    }
    if (!fromSocket && s.seq < this.wsSeq) this.fetchSoon();
    this.render();
  }

  onEvent(frame) {
    if (frame.seq <= this.wsSeq) return;
    const gap = this.wsSeq > 0 && frame.seq > this.wsSeq + 1;
    this.wsSeq = frame.seq;
    const e = frame.event;
    const before = this.model;
    if (before) {
      // The words are made again from a copy of the state when the language changes.
      const snapshot = JSON.parse(JSON.stringify(before));
      const context = { skipMoved: this.skipMoved(e) };
      const yourTurn = e.kind === "pressed" && this.you === other(e.seat) && before.status === "playing";
      const say = () => {
        const words = describeEvent(snapshot, e, context);
        return words && yourTurn ? `${words} ${t("your_turn")}` : words;
      };
      const text = say();
      if (text) {
        announce(text);
        this.log.push(say);
        if (this.log.length > 200) this.log.shift();
      }
      if (e.kind === "claim") this.claims.push(e);
      if (e.kind === "warning" && (this.you === e.seat)) showAlert(text);
    }
    if (this.model && frame.seq > this.model.seq) {
      this.apply(e);
      this.model.seq = frame.seq;
    }
    if ("clocks" in frame) this.setClocks(frame.clocks);
    if (["set_started", "placed", "rotated", "moved", "pressed", "set_ended", "round_ended", "paused"].includes(e.kind)) {
      // A fresh `state` with the legal moves follows when it is this player's turn.
      this.legal = null;
    }
    if (["moved", "set_started", "set_ended"].includes(e.kind)) this.selectedQuadrant = null;
    if (gap || !["claim", "ready", "player_connected", "player_disconnected"].includes(e.kind)) this.fetchSoon();
    this.render();
  }

  /** True when a `moved` repeats what `placed`/`rotated` already said. */
  skipMoved(e) {
    if (e.kind === "placed") this.said.place = e.cell;
    if (e.kind === "rotated") this.said.move = true;
    if (e.kind !== "moved") return false;
    const skip = this.said.move || (this.said.place && this.said.place === e.move);
    this.said = { place: null, move: false };
    return skip;
  }

  /** Brings the picture up to date at once; the state fetched next is the truth. */
  apply(e) {
    const s = this.model;
    const pos = s.position || (s.position = {});
    const first = firstMover(s);
    const markOf = (seat) => (seat === first ? "x" : "o");
    const setMark = (cell, mark) => {
      const rows = pos.board?.rows;
      if (!rows) return;
      const c = cell.charCodeAt(0) - 97;
      const r = 6 - Number(cell.slice(1));
      if (rows[r]) rows[r] = rows[r].slice(0, c) + mark + rows[r].slice(c + 1);
    };
    switch (e.kind) {
      case "set_started":
        s.status = "playing";
        s.set = e.set;
        s.position = {
          to_move: e.first_mover,
          first_mover: e.first_mover,
          moves: [],
          pending: null,
          awaiting_press: null,
          board: initialBoard(s.game, pos.board),
        };
        for (const seat of ["p1", "p2"]) if (s.players?.[seat]) s.players[seat].ready = false;
        break;
      case "placed":
        pos.pending = { seat: e.seat, cell: e.cell };
        if (s.game === "pentago") setMark(e.cell, markOf(e.seat));
        break;
      case "rotated":
        if (pos.pending) Object.assign(pos.pending, { quadrant: e.quadrant, dir: e.dir });
        if (s.game === "pentago" && pos.board?.rows) pos.board.rows = pentagoTurnRows(pos.board.rows, e.quadrant, e.dir);
        break;
      case "moved": {
        const hadPending = pos.pending && pos.pending.seat === e.seat;
        pos.moves = [...(pos.moves || []), e.move];
        if (s.game === "pentago" && !hadPending) {
          const m = parsePentagoMove(e.move);
          if (m) {
            setMark(m.cell, markOf(e.seat));
            if (m.quadrant && pos.board?.rows) pos.board.rows = pentagoTurnRows(pos.board.rows, m.quadrant, m.dir);
          }
        } else if (s.game === "quoridor" && pos.board) {
          const side = e.seat === first ? "first" : "second";
          if (/^[a-h][1-8][hv]$/.test(e.move)) {
            pos.board.walls = [...(pos.board.walls || []), e.move];
            if (pos.board.walls_left) pos.board.walls_left[side] = Math.max(0, pos.board.walls_left[side] - 1);
          } else if (pos.board.pawns) {
            pos.board.pawns[side] = e.move;
          }
        } else if (s.game === "pente" && pos.board?.rows) {
          const m = /^([A-HJ-T])(\d+)$/.exec(e.move);
          if (m) {
            const c = "ABCDEFGHJKLMNOPQRST".indexOf(m[1]);
            const r = 19 - Number(m[2]);
            const row = pos.board.rows[r];
            if (row) pos.board.rows[r] = row.slice(0, c) + markOf(e.seat) + row.slice(c + 1);
          }
        }
        pos.pending = null;
        pos.awaiting_press = e.seat;
        break;
      }
      case "pressed":
        pos.awaiting_press = null;
        pos.to_move = other(e.seat);
        break;
      case "set_ended": {
        s.sets = [...(s.sets || []).filter((x) => x.set !== e.set), { set: e.set, first_mover: e.first_mover, result: e.result, winner: e.winner, reason: e.reason }];
        const sp = (s.set_points = { ...(s.set_points || { p1: 0, p2: 0 }) });
        if (e.winner) sp[e.winner] = (sp[e.winner] || 0) + 1;
        else {
          sp.p1 = (sp.p1 || 0) + 0.5;
          sp.p2 = (sp.p2 || 0) + 0.5;
        }
        s.status = "between_sets";
        pos.to_move = null;
        pos.awaiting_press = null;
        pos.pending = null;
        break;
      }
      case "warning":
        s.warnings = { ...(s.warnings || {}), [e.seat]: e.count };
        break;
      case "round_ended":
        s.round = e;
        s.status = "finished";
        s.set_points = e.set_points;
        pos.to_move = null;
        break;
      case "paused":
        s.paused = true;
        break;
      case "resumed":
        s.paused = false;
        break;
      case "player_connected":
      case "player_disconnected":
        if (s.players?.[e.seat]) s.players[e.seat].connected = e.kind === "player_connected";
        break;
      case "ready":
        if (s.players?.[e.seat]) s.players[e.seat].ready = true;
        break;
      default:
        break;
    }
  }

  sayCaptures(before, after) {
    if (!before || after.game !== "pente" || before.set !== after.set) return;
    const was = before.position?.board?.captures;
    const now = after.position?.board?.captures;
    if (!was || !now) return;
    for (const side of ["first", "second"]) {
      if ((now[side] || 0) > (was[side] || 0)) {
        const say = () =>
          t("say_captures", {
            who: colourOf("pente", side),
            n: now[side] - was[side],
            total: now[side],
          });
        announce(say());
        this.log.push(say);
      }
    }
  }

  fetchSoon() {
    if (this.fetching) {
      this.fetchAgain = true;
      return;
    }
    this.fetching = true;
    fetchState(this.id)
      .then((s) => this.onState(s, false))
      .catch(() => {})
      .finally(() => {
        this.fetching = false;
        if (this.fetchAgain) {
          this.fetchAgain = false;
          setTimeout(() => this.fetchSoon(), 30);
        }
      });
  }

  setClocks(clocks) {
    this.clockBase = clocks ? { ...clocks, at: performance.now() } : null;
    this.paintClocks();
  }

  remaining(seat) {
    const c = this.clockBase;
    if (!c) return null;
    let ms = c[`${seat}_ms`];
    if (c.running === seat && !c.paused && this.model?.status === "playing") ms -= performance.now() - c.at;
    return Math.max(0, ms);
  }

  // --- actions --------------------------------------------------------------------------------

  async act(message, quiet = false) {
    try {
      const reply = await conn.request({ ...message, match: this.id });
      if (!quiet) showAlert("");
      return reply;
    } catch (e) {
      if (e instanceof ServerError || e.code) {
        const text = describeError(e, this.model?.game);
        showAlert(text);
      }
      return null;
    }
  }

  myTurn() {
    const pos = this.model?.position;
    return this.role === "player" && this.model?.status === "playing" && pos?.to_move === this.you && !pos?.awaiting_press;
  }

  onCell(cell) {
    if (this.role !== "player" || !this.model) return;
    const game = this.model.game;
    if (game === "pentago") {
      const pending = this.model.position?.pending;
      if (pending && pending.seat === this.you && !pending.quadrant) {
        showAlert(t("turn_a_quadrant"));
        return;
      }
      this.act({ type: "place", cell });
    } else if (game === "quoridor") {
      const mv = this.mode === "pawn" ? cell : cell + this.mode;
      this.act({ type: "move", move: mv, press: this.autoPress }).then((ok) => {
        if (ok && this.mode !== "pawn") this.setMode("pawn");
      });
    } else {
      this.act({ type: "move", move: cell, press: this.autoPress });
    }
  }

  async onTurn(quadrant, dir) {
    if (this.role !== "player") return;
    this.selectedQuadrant = null;
    const ok = await this.act({ type: "rotate", quadrant, dir });
    if (ok && this.autoPress && this.model?.position?.awaiting_press === this.you) this.press();
  }

  press() {
    if (this.role !== "player") return;
    this.act({ type: "press" });
  }

  setMode(mode) {
    this.mode = mode;
    if (mode !== "pawn") announce(t(mode === "h" ? "mode_h_on" : "mode_v_on"));
    else announce(t("mode_pawn_on"));
    this.render();
    this.previewWall(this.board?.cursorName?.());
  }

  previewWall(cell) {
    if (!this.board || this.model?.game !== "quoridor") return;
    if (this.mode === "pawn" || !cell) {
      this.board.showPreview(null);
      return;
    }
    const wall = cell + this.mode;
    const legal = this.legalSets()?.walls;
    this.board.showPreview(wall, legal ? legal.has(wall) : undefined);
  }

  sayClocks() {
    if (!this.model) return;
    if (!this.clockBase) {
      announce(t("untimed"));
      return;
    }
    const part = (seat) => `${playerName(this.model, seat)}: ${clockWords(this.remaining(seat))}`;
    announce(`${part("p1")}. ${part("p2")}.`);
  }

  sayLastMove() {
    const s = this.model;
    const moves = s?.position?.moves || [];
    if (!moves.length) {
      announce(t("no_moves_yet"));
      return;
    }
    const index = moves.length - 1;
    const first = firstMover(s);
    const seat = index % 2 === 0 ? first : other(first);
    announce(`${t("last_move_is")} ${describeMove(s, seat, moves[index])}`);
  }

  onKey(e) {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.target;
    const tag = target?.tagName;
    if (["INPUT", "TEXTAREA", "SELECT"].includes(tag) || target?.isContentEditable) return;
    const onControl = ["BUTTON", "A", "SUMMARY"].includes(tag);
    if (e.key === " " || e.key === "Spacebar") {
      if (onControl || this.role !== "player") return;
      e.preventDefault();
      this.press();
      return;
    }
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    const game = this.model?.game;
    if (key === "t") return this.sayClocks();
    if (key === "m") return this.sayLastMove();
    if (key === "b") {
      e.preventDefault();
      this.board?.focus();
      return;
    }
    if (this.role !== "player") return;
    if (game === "pentago") {
      const quadrants = { q: "nw", w: "ne", a: "sw", s: "se" };
      if (quadrants[key]) {
        e.preventDefault();
        this.selectedQuadrant = quadrants[key];
        announce(t("quadrant_selected", { quadrant: t(`q_${this.selectedQuadrant}`) }) + (this.model.variant === "tr" ? ` ${t("keys_turn_tr")}` : ` ${t("keys_turn")}`));
        this.render();
        return;
      }
      if (key === "r" || key === "l") {
        e.preventDefault();
        if (!this.selectedQuadrant) {
          announce(t("pick_quadrant_first"));
          return;
        }
        this.onTurn(this.selectedQuadrant, key === "r" ? "cw" : "ccw");
        return;
      }
      if (key === "Escape" && this.selectedQuadrant) {
        this.selectedQuadrant = null;
        this.render();
        return;
      }
    }
    if (game === "quoridor") {
      if (key === "h" || key === "v") {
        e.preventDefault();
        this.setMode(this.mode === key ? "pawn" : key);
        return;
      }
      if (key === "Escape" && this.mode !== "pawn") {
        this.setMode("pawn");
      }
    }
  }

  // --- layout ---------------------------------------------------------------------------------

  build() {
    this.board = null;
    this.boardGame = null;
    const seatPanel = (seat) =>
      el("div", { class: `seat seat-${seat}`, id: `seat-${seat}` }, [
        el("div", { class: "seat-head" }, [
          el("span", { class: "swatch", "aria-hidden": "true" }),
          el("h3", { class: "seat-name" }),
          el("span", { class: "seat-tags" }),
        ]),
        el("div", { class: "seat-line" }, [
          el("span", { class: "clock", role: "timer", "aria-live": "off", id: `clock-${seat}` }),
          el("span", { class: "seat-facts" }),
        ]),
      ]);

    this.el = {
      title: el("h1", { class: "match-title" }),
      subtitle: el("p", { class: "match-sub" }),
      tournament: el("p", { class: "match-tournament", hidden: true }),
      status: el("p", { class: "turn-line", id: "turn-line" }),
      boardBox: el("div", { class: "board-box" }),
      boardTools: el("div", { class: "board-tools" }),
      seats: el("section", { class: "seats", "aria-labelledby": "seats-heading" }, [
        el("h2", { id: "seats-heading", class: "visually-hidden", text: t("seats_heading") }),
        seatPanel("p1"),
        seatPanel("p2"),
      ]),
      press: el("button", { type: "button", id: "press", class: "press", onclick: () => this.press(), "aria-keyshortcuts": "Space" }),
      ready: el("button", { type: "button", id: "ready", class: "primary", onclick: () => this.act({ type: "ready" }) }),
      sets: el("ol", { class: "sets", id: "sets" }),
      // Scrollable lists take the focus so that keyboard users can scroll them.
      moves: el("ol", { class: "moves", id: "moves", tabindex: "0", "aria-labelledby": "moves-heading" }),
      log: el("ol", { class: "log", id: "log", tabindex: "0", "aria-labelledby": "log-heading" }),
      result: el("p", { class: "result", id: "result", hidden: true }),
      fatal: el("div", { class: "card fatal", hidden: true }),
    };
    const E = this.el;

    const playerTools = () => {
      const auto = el("input", {
        type: "checkbox",
        id: "autopress",
        checked: this.autoPress,
        onchange: (e) => {
          this.autoPress = e.target.checked;
          localStorage.setItem("hakem.autopress", this.autoPress ? "1" : "0");
        },
      });
      const resign = el("button", {
        type: "button",
        class: "danger",
        id: "resign",
        text: t("resign"),
        onclick: () => {
          if (!this.resignArmed) {
            this.resignArmed = true;
            resign.textContent = t("resign_confirm");
            announce(t("resign_confirm"));
            setTimeout(() => {
              this.resignArmed = false;
              resign.textContent = t("resign");
            }, 5000);
            return;
          }
          this.resignArmed = false;
          resign.textContent = t("resign");
          this.act({ type: "resign" });
        },
      });
      const claimText = el("input", { type: "text", id: "claim-text", maxlength: "500" });
      const claimForm = el(
        "form",
        {
          class: "inline-form",
          onsubmit: async (e) => {
            e.preventDefault();
            const text = claimText.value.trim();
            if (!text) return;
            if (await this.act({ type: "claim", text })) {
              claimText.value = "";
              announce(t("claim_sent"));
            }
          },
        },
        [
          el("label", { for: "claim-text", text: t("claim_label") }),
          el("div", { class: "row" }, [claimText, el("button", { type: "submit", class: "secondary", text: t("claim_send") })]),
        ],
      );
      return el("section", { class: "card tools", "aria-labelledby": "tools-heading" }, [
        el("h2", { id: "tools-heading", text: t("your_controls") }),
        el("div", { class: "check" }, [auto, el("label", { for: "autopress", text: t("autopress") })]),
        (this.el.claimForm = claimForm),
        el("div", { class: "row" }, [resign]),
      ]);
    };

    const arbiterTools = () => {
      const seatSelect = (id) =>
        el("select", { id }, ["p1", "p2"].map((seat) => el("option", { value: seat, text: this.model ? playerName(this.model, seat) : seat })));
      const warnSeat = seatSelect("warn-seat");
      const warnReason = el("input", { type: "text", id: "warn-reason", maxlength: "200" });
      const adjSeat = seatSelect("adjust-seat");
      const adjSeconds = el("input", { type: "number", id: "adjust-seconds", step: "1", value: "60" });
      const decScope = el("select", { id: "declare-scope" }, [el("option", { value: "set", text: t("the_set") }), el("option", { value: "round", text: t("the_round") })]);
      const decWinner = el("select", { id: "declare-winner" }, [
        ...["p1", "p2"].map((seat) => el("option", { value: seat, text: this.model ? playerName(this.model, seat) : seat })),
        el("option", { value: "draw", text: t("a_draw") }),
      ]);
      const decReason = el("input", { type: "text", id: "declare-reason", maxlength: "200" });
      this.el.claims = el("ol", { class: "claims", id: "claims" });
      this.el.pause = el("button", { type: "button", class: "secondary", id: "pause", text: t("pause"), onclick: () => this.act({ type: "pause" }) });
      this.el.resume = el("button", { type: "button", class: "secondary", id: "resume", text: t("resume"), onclick: () => this.act({ type: "resume" }) });
      const form = (id, legend, fields, button, submit) =>
        el("form", { class: "arb-form", id, onsubmit: (e) => { e.preventDefault(); submit(); } }, [
          el("fieldset", {}, [el("legend", { text: legend }), ...fields, el("button", { type: "submit", class: "primary", text: button })]),
        ]);
      const labelled = (control, text) => el("div", { class: "field" }, [el("label", { for: control.id, text }), control]);
      return el("section", { class: "card arbiter", "aria-labelledby": "arb-heading" }, [
        el("h2", { id: "arb-heading", text: t("arbiter_heading") }),
        el("div", { class: "row" }, [
          this.el.pause,
          this.el.resume,
          el("button", { type: "button", class: "secondary", id: "start-set", text: t("start_set"), onclick: () => this.act({ type: "start_set" }) }),
        ]),
        form("warn-form", t("warn_legend"), [labelled(warnSeat, t("field_player")), labelled(warnReason, t("field_reason"))], t("warn_button"), async () => {
          if (await this.act({ type: "warn", seat: warnSeat.value, reason: warnReason.value.trim() })) warnReason.value = "";
        }),
        form("adjust-form", t("adjust_legend"), [labelled(adjSeat, t("field_player")), labelled(adjSeconds, t("field_seconds"))], t("adjust_button"), () =>
          this.act({ type: "adjust_clock", seat: adjSeat.value, delta_ms: Math.round(Number(adjSeconds.value) * 1000) }),
        ),
        form("declare-form", t("declare_legend"), [labelled(decScope, t("field_scope")), labelled(decWinner, t("field_winner")), labelled(decReason, t("field_reason"))], t("declare_button"), () =>
          this.act({ type: "declare", scope: decScope.value, winner: decWinner.value, reason: decReason.value.trim() }),
        ),
        el("h3", { text: t("claims_heading") }),
        this.el.claims,
      ]);
    };

    const keys = el("details", { class: "card keys" }, [
      el("summary", { text: t("keys_heading") }),
      el("ul", { id: "board-keys" }, [
        ...t("keys_common").split("\n").map((line) => el("li", { text: line })),
        ...(this.role === "player" ? t("keys_player").split("\n").map((line) => el("li", { text: line })) : []),
      ]),
    ]);

    const roleLabel = el("p", { class: `role role-${this.role}`, id: "role" });
    main.replaceChildren(
      E.fatal,
      el("div", { class: "match" }, [
        el("div", { class: "match-head" }, [E.title, E.subtitle, E.tournament, roleLabel, E.status, E.result]),
        el("div", { class: "match-body" }, [
          el("section", { class: "board-area", "aria-label": t("board_area") }, [E.boardBox, E.boardTools]),
          el("div", { class: "side" }, [
            E.seats,
            this.role === "player" ? el("div", { class: "press-row" }, [E.press, E.ready]) : null,
            this.role === "player" ? playerTools() : null,
            this.role === "arbiter" ? arbiterTools() : null,
            el("section", { class: "card", "aria-labelledby": "score-heading" }, [el("h2", { id: "score-heading", text: t("score_heading") }), E.sets]),
            el("section", { class: "card", "aria-labelledby": "moves-heading" }, [el("h2", { id: "moves-heading", text: t("moves_heading") }), E.moves]),
            el("section", { class: "card", "aria-labelledby": "log-heading" }, [el("h2", { id: "log-heading", text: t("log_heading") }), E.log]),
            keys,
          ]),
        ]),
      ]),
    );
    if (this.role !== "player") E.ready.remove();
  }

  ensureBoard() {
    const game = this.model?.game;
    if (!game || this.boardGame === game) return;
    this.boardGame = game;
    this.board = createBoard(game, {
      onCell: (cell) => this.onCell(cell),
      onTurn: (q, dir) => this.onTurn(q, dir),
      onHover: (cell) => this.previewWall(cell),
    });
    this.el.boardBox.replaceChildren(this.board.el);
    const tools = [];
    if (game === "quoridor" && this.role === "player") {
      const modeButton = (mode, text) =>
        el("button", { type: "button", class: "mode secondary", "data-mode": mode, text, onclick: () => this.setMode(mode) });
      tools.push(
        el("div", { class: "row modes", role: "group", "aria-label": t("mode_group") }, [
          modeButton("pawn", t("mode_pawn")),
          modeButton("h", t("mode_h")),
          modeButton("v", t("mode_v")),
        ]),
      );
    }
    tools.push(el("p", { class: "board-facts", id: "board-facts" }));
    this.el.boardTools.replaceChildren(...tools);
  }

  legalSets() {
    if (!this.legal || !this.myTurn()) return null;
    const game = this.model.game;
    if (game === "pentago") {
      const pending = this.model.position?.pending;
      const cells = new Set();
      const turns = new Set();
      for (const mv of this.legal) {
        const m = parsePentagoMove(mv);
        if (!m) continue;
        cells.add(m.cell);
        if (pending && m.cell === pending.cell && m.quadrant) turns.add(`${m.quadrant}:${m.dir}`);
      }
      return { cells: pending ? new Set() : cells, turns };
    }
    if (game === "quoridor") {
      const cells = new Set();
      const walls = new Set();
      for (const mv of this.legal) (/[hv]$/.test(mv) ? walls : cells).add(mv);
      return { cells, walls };
    }
    return { cells: new Set(this.legal) };
  }

  // --- painting -------------------------------------------------------------------------------

  render() {
    const E = this.el;
    E.fatal.hidden = !this.fatal;
    if (this.fatal) {
      E.fatal.replaceChildren(
        el("h1", { text: t(this.fatal.code === "unknown_match" ? "fatal_unknown" : "fatal_unauthorized") }),
        el("p", { text: describeError(this.fatal) }),
        el("p", {}, [el("a", { href: "#/", text: t("back_to_matches") })]),
      );
      main.querySelector(".match").hidden = true;
      return;
    }
    main.querySelector(".match").hidden = false;
    const s = this.model;
    if (!s) {
      E.title.textContent = t("loading");
      return;
    }
    this.ensureBoard();
    const pos = s.position || {};
    const first = firstMover(s);
    const name = (seat) => playerName(s, seat);

    E.title.textContent = `${t(`game_${s.game}`)} · ${name("p1")} – ${name("p2")}`;
    E.subtitle.textContent = [
      t(`variant_${s.game}_${s.variant}`),
      s.sets_max === 1 ? t("one_set") : t("best_of", { n: s.sets_max }),
      s.clock ? t("clock_desc", { min: Math.round(s.clock.initial_ms / 60000), inc: Math.round(s.clock.increment_ms / 1000) }) : t("untimed"),
    ].join(" · ");
    // Claims go to an arbiter; against the server's own bot there is nobody to claim to.
    if (E.claimForm && this.you) {
      const opponent = this.you === "p1" ? "p2" : "p1";
      E.claimForm.hidden = Boolean(s.players?.[opponent]?.house_bot);
    }
    // A tournament's match links back to its standings and pairings.
    E.tournament.hidden = !s.tournament;
    if (s.tournament && E.tournament.dataset.id !== s.tournament) {
      E.tournament.dataset.id = s.tournament;
      E.tournament.replaceChildren(
        el("a", { href: `#/tournament/${encodeURIComponent(s.tournament)}`, id: "tournament-link", text: t("match_of_tournament") }),
      );
    }
    const role = main.querySelector("#role");
    role.textContent =
      this.role === "player" && this.you
        ? t("you_play_as", { name: name(this.you) })
        : this.role === "arbiter"
          ? t("you_arbitrate")
          : t("you_watch");

    // The line that says what happens now.
    E.status.textContent = this.statusLine();
    E.result.hidden = !s.round;
    if (s.round) E.result.textContent = describeRoundResult(s);

    // Seats.
    for (const seat of ["p1", "p2"]) {
      const panel = main.querySelector(`#seat-${seat}`);
      const side = s.status === "playing" || pos.moves?.length ? (seat === first ? "first" : "second") : null;
      panel.querySelector(".seat-name").textContent = name(seat);
      panel.dataset.side = side || "";
      panel.dataset.game = s.game;
      const tags = [];
      if (side && colourOf(s.game, side)) tags.push(colourOf(s.game, side));
      if (side && s.game === "quoridor") tags.push(t(side === "first" ? "starts_e1" : "starts_e9"));
      if (this.you === seat) tags.push(t("you"));
      if (!s.players?.[seat]?.connected) tags.push(t("offline"));
      if (s.players?.[seat]?.ready && s.status !== "playing" && s.status !== "finished") tags.push(t("is_ready"));
      panel.querySelector(".seat-tags").textContent = tags.join(" · ");
      const warnings = s.warnings?.[seat] || 0;
      const facts = [t("points_short", { n: points(s.set_points?.[seat]) }), t("warnings_short", { n: warnings, limit: s.warnings_limit })];
      if (s.game === "pente" && side) facts.push(t("captures_short", { n: pos.board?.captures?.[side] ?? 0 }));
      if (s.game === "quoridor" && side) facts.push(t("walls_short", { n: pos.board?.walls_left?.[side] ?? 0 }));
      panel.querySelector(".seat-facts").textContent = facts.join(" · ");
      panel.classList.toggle("warned", warnings > 0);
      panel.classList.toggle("to-move", s.status === "playing" && (pos.awaiting_press || pos.to_move) === seat);
    }
    this.paintClocks();

    // Player buttons.
    if (this.role === "player") {
      const mine = pos.awaiting_press === this.you;
      E.press.disabled = !(s.status === "playing" && mine && !s.paused);
      E.press.textContent = "";
      E.press.append(
        el("span", { class: "press-main", text: t("press_clock") }),
        el("span", {
          class: "press-sub",
          text:
            s.status !== "playing"
              ? t("press_hint_idle")
              : mine
                ? t("press_hint_now")
                : this.myTurn()
                  ? t("press_hint_move_first")
                  : t("press_hint_wait"),
        }),
      );
      const between = s.status === "waiting" || s.status === "between_sets";
      E.ready.hidden = !between || !!s.round;
      const iAmReady = !!s.players?.[this.you]?.ready;
      E.ready.disabled = iAmReady;
      E.ready.textContent = iAmReady ? t("waiting_for_opponent") : t("ready_for_set", { n: (s.sets?.length || 0) + 1 });
      if (this.arrival && !E.ready.hidden && !E.ready.disabled) {
        // Straight from the lobby's "Play against the computer": one press starts the game.
        announce(this.arrival.say);
        this.arrival = null;
        E.ready.focus();
      }
    }
    if (this.role === "arbiter") {
      // The seat choices carry the players' names once the state is known.
      for (const option of main.querySelectorAll(".arbiter option[value=p1], .arbiter option[value=p2]")) {
        if (option.textContent !== name(option.value)) option.textContent = name(option.value);
      }
    }
    if (this.role === "arbiter" && E.pause) {
      E.pause.disabled = s.paused || s.status !== "playing";
      E.resume.disabled = !s.paused;
      E.claims.replaceChildren(
        ...(this.claims.length ? this.claims.map((c) => el("li", { text: `${name(c.seat)}: ${c.text}` })) : [el("li", { class: "empty", text: t("no_claims") })]),
      );
    }

    // Sets and score.
    const setItems = (s.sets || []).map((x) => {
      const who = x.winner ? t("set_won_by", { who: name(x.winner) }) : t("set_drawn");
      return el("li", { text: `${t("set_n", { n: x.set })}: ${who} (${reasonWords(x.reason)}, ${x.result})` });
    });
    E.sets.replaceChildren(
      el("li", { class: "score", text: t("score_words", { p1: name("p1"), a: points(s.set_points?.p1), p2: name("p2"), b: points(s.set_points?.p2) }) }),
      ...setItems,
    );

    // Moves of this set, in pairs.
    const moves = pos.moves || [];
    const items = [];
    for (let i = 0; i < moves.length; i += 2) {
      const li = el("li", { class: "pair" });
      li.append(el("span", { class: "mv", text: moves[i] }));
      if (moves[i + 1]) li.append(el("span", { class: "mv", text: moves[i + 1] }));
      if (i + 2 >= moves.length) li.classList.add("latest");
      items.push(li);
    }
    if (E.moves.childElementCount !== items.length || E.moves.textContent !== items.map((li) => li.textContent).join("")) {
      E.moves.replaceChildren(...items);
      E.moves.dataset.count = String(moves.length);
    }

    // The log, newest first.
    const logItems = this.log.slice(-40).reverse();
    if (E.log.dataset.size !== String(this.log.length)) {
      E.log.replaceChildren(...logItems.map((say) => el("li", { text: say() })));
      E.log.dataset.size = String(this.log.length);
    }

    this.paintBoard();
  }

  statusLine() {
    const s = this.model;
    const pos = s.position || {};
    const name = (seat) => playerName(s, seat);
    if (s.round) return describeRoundResult(s);
    if (s.paused) return t("status_paused");
    if (s.status === "waiting" || s.status === "between_sets") {
      const next = (s.sets?.length || 0) + 1;
      return t("status_between", { n: next });
    }
    if (s.status !== "playing") return "";
    const mover = pos.awaiting_press || pos.to_move;
    const who = `${name(mover)}${colourOf(s.game, mover === firstMover(s) ? "first" : "second") ? ` (${colourOf(s.game, mover === firstMover(s) ? "first" : "second")})` : ""}`;
    if (this.role === "player" && mover === this.you) {
      if (pos.awaiting_press) return t("status_you_press");
      if (s.game === "pentago" && pos.pending) return t("status_you_turn_quadrant");
      if (s.game === "pentago") return t("status_you_place");
      if (s.game === "quoridor") return t("status_you_quoridor");
      return t("status_you_stone");
    }
    if (pos.awaiting_press) return t("status_waits_press", { who });
    return t("status_to_move", { who, n: s.set });
  }

  paintClocks() {
    const s = this.model;
    if (!s || !this.el) return;
    for (const seat of ["p1", "p2"]) {
      const node = main.querySelector(`#clock-${seat}`);
      if (!node) continue;
      const ms = this.remaining(seat);
      const running = this.clockBase?.running === seat && s.status === "playing";
      const text = ms === null ? "—" : formatClock(ms);
      if (node.textContent !== text) node.textContent = text;
      node.classList.toggle("running", running && !this.clockBase?.paused);
      node.classList.toggle("low", ms !== null && ms < 30000 && s.status === "playing");
      node.setAttribute("aria-label", `${t("clock_of", { name: playerName(s, seat) })}: ${ms === null ? t("untimed") : clockWords(ms)}`);
    }
  }

  paintBoard() {
    const s = this.model;
    const board = this.board;
    if (!board) return;
    const pos = s.position || {};
    const first = firstMover(s);
    const legal = this.legalSets();
    const moves = pos.moves || [];
    const lastMv = moves[moves.length - 1] || null;
    const facts = main.querySelector("#board-facts");
    const toMoveWord = s.status === "playing" && pos.to_move ? `, ${t("to_move_word", { who: playerName(s, pos.awaiting_press || pos.to_move) })}` : "";
    if (s.game === "pentago") {
      const marks = { x: t("marble_of", { colour: t("black") }), o: t("marble_of", { colour: t("white") }) };
      board.update({
        label: t("board_label_pentago") + toMoveWord,
        rows: pos.board?.rows,
        marks,
        lastMove: pos.pending ? null : parsePentagoMove(lastMv),
        pending: pos.pending,
        legal,
        canTurn: this.role === "player" && !!pos.pending && pos.pending.seat === this.you && !pos.pending.quadrant,
        clockwiseOnly: s.variant === "tr",
        selectedQuadrant: this.selectedQuadrant,
      });
      facts.textContent = s.variant === "tr" ? t("facts_pentago_tr") : t("facts_pentago_classic");
    } else if (s.game === "quoridor") {
      const names = { first: playerName(s, first), second: playerName(s, other(first)) };
      board.update({
        label: t("board_label_quoridor") + toMoveWord,
        pawns: pos.board?.pawns,
        walls: pos.board?.walls,
        names,
        lastMove: lastMv,
        legal,
        mode: this.mode,
      });
      const left = pos.board?.walls_left || {};
      facts.textContent = t("facts_quoridor", { a: names.first, n: left.first ?? 0, b: names.second, m: left.second ?? 0 });
      for (const button of main.querySelectorAll(".modes .mode")) button.setAttribute("aria-pressed", String(button.dataset.mode === this.mode));
    } else {
      const marks = { x: t("stone_of", { colour: t("white") }), o: t("stone_of", { colour: t("black") }) };
      board.update({ label: t("board_label_pente") + toMoveWord, rows: pos.board?.rows, marks, lastMove: lastMv, legal });
      const caps = pos.board?.captures || {};
      facts.textContent = t("facts_pente", { a: caps.first ?? 0, b: caps.second ?? 0 });
    }
  }
}

function describeRoundResult(s) {
  const r = s.round;
  const score = `${points(r.set_points?.p1)}–${points(r.set_points?.p2)}`;
  if (r.winner === "draw") return t("say_round_drawn", { how: reasonWords(r.reason), score });
  return t("say_round_won", { who: playerName(s, r.winner), how: reasonWords(r.reason), score });
}

// ---------------------------------------------------------------------------------------------
// Start

paintLangSwitch();
connectionBanner();
route();
