// The lobby (`#/`): the live matches, the tournaments and a form to create a casual match.

import { fetchTournaments } from "./net.js";
import { t } from "./i18n.js";
import { el } from "./board.js";
import { describeError, points, sideWords, tournamentStatus } from "./words.js";
import { announce, conn, handoff, main, other, showAlert, unchanged } from "./ui.js";
import { storedSession } from "./account.js";

export const GAMES = {
  pentago: ["tr", "classic"],
  quoridor: ["standard"],
  pente: ["tournament", "free"],
};

export const CLOCKS = {
  "5": { initial_ms: 300000, increment_ms: 0 },
  "10": { initial_ms: 600000, increment_ms: 0 },
  "15": { initial_ms: 900000, increment_ms: 0 },
  "25": { initial_ms: 1500000, increment_ms: 0 },
  "3+2": { initial_ms: 180000, increment_ms: 2000 },
  none: null,
};

export class LobbyView {
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
    const session = storedSession();
    main.replaceChildren(
      el("h1", { class: "page-title", text: t("lobby_title") }),
      el("p", { class: "account-line" }, [
        session
          ? el("a", { href: "#/player", id: "account-link", text: t("account_as_link", { name: session.name }) })
          : el("a", { href: "#/account", id: "account-link", text: t("account_link") }),
      ]),
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
          // An unnamed player stays unnamed: each page then calls them in its own language.
          players: { [mine]: f.me.trim(), [botSeat]: t("bot_name", { level }) },
          house_bot: { seat: botSeat, level },
        });
        handoff.arrival = { match: reply.match, say: t("created_computer_say", { level }) };
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
        el("td", { text: `${t(`game_${x.game}`)} — ${t(`variant_${x.game}_${x.variant}`)}` }),
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
        el("td", { text: `${t(`game_${m.game}`)} — ${t(`variant_${m.game}_${m.variant}`)}` }),
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

