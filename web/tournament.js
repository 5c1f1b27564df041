// A tournament (`#/tournament/ID`): its settings, the standings with tie-breaks, the pairings
// of every round with links to the matches. The server pushes every change
// (`watch_tournament`); the page never asks again.

import { trfUrl } from "./net.js";
import { t } from "./i18n.js";
import { el } from "./board.js";
import {
  boardResult,
  byeWords,
  delayWords,
  describeError,
  points,
  pointsWords,
  sideWords,
  tiebreakHint,
  tiebreakName,
  tiebreakValue,
} from "./words.js";
import { announce, conn, main } from "./ui.js";
import { Desk } from "./desk.js";

/**
 * Opens the print dialog for the whole tournament (`what` null: every round on a page of its
 * own, the standings, the crosstable) or, with "round", only the current round's pairings on
 * one page: the style sheet prints what `body[data-print]` says, until the dialog is closed.
 */
function printPages(what) {
  if (what) document.body.dataset.print = what;
  else delete document.body.dataset.print;
  window.addEventListener("afterprint", () => delete document.body.dataset.print, { once: true });
  window.print();
}

export class TournamentView {
  constructor(id, params) {
    this.id = id;
    // With the tournament's arbiter token, the page is also the arbiter's desk.
    const token = params?.get("arbiter");
    this.desk = token ? new Desk(id, token, (no) => this.name(no)) : null;
    this.model = null;
    this.json = null;
    this.fatal = null;
    this.gone = false;
    this.unsubscribe = conn.onFrame((frame) => {
      if (frame.type === "tournament" && frame.tournament === this.id) this.take(frame);
    });
    // After a lost connection the server knows nothing of this page: watch again, and the desk
    // joins its boards again.
    conn.onReconnect = () => {
      this.desk?.rejoin();
      return this.watch();
    };
    this.paint();
    this.watch();
  }

  destroy() {
    this.gone = true;
    delete document.body.dataset.print;
    this.desk?.destroy();
    this.unsubscribe();
    conn.onReconnect = null;
    conn.request({ type: "unwatch_tournament", tournament: this.id }).catch(() => {});
  }

  relabel() {
    this.paint();
  }

  /** The view now (the reply), then every change as the server pushes it. */
  async watch() {
    try {
      const reply = await conn.request({ type: "watch_tournament", tournament: this.id });
      if (!this.gone) this.take(reply);
    } catch (e) {
      if (this.gone) return;
      if (e.code === "unknown_tournament") {
        this.fatal = e;
        this.paint();
      }
      // Out of reach: the connection watches again once it is back.
    }
  }

  /** A `tournament` frame: the view without the frame's own fields. */
  take(frame) {
    const view = { ...frame };
    delete view.type;
    delete view.re;
    this.update(view);
  }

  update(v) {
    const json = JSON.stringify(v);
    if (json === this.json) return;
    this.json = json;
    const before = this.model;
    this.model = v;
    this.desk?.update(v);
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
    const parts = [
      back,
      el("h1", { class: "page-title tournament-title", id: "tournament-name", text: v.name }),
      el("p", { class: "turn-line tournament-status", id: "tournament-status", text: this.statusLine() }),
      this.about(),
      this.desk?.el,
      el("div", { class: "tournament" }, [this.standings(), this.pairings()]),
      this.crosstable(),
    ];
    main.replaceChildren(...parts.filter(Boolean));
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
        item(t("about_delay"), v.spectator_delay ? t("delay_value", { behind: delayWords(v.spectator_delay) }) : t("delay_live")),
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
        el("button", { type: "button", class: "secondary", id: "print-button", onclick: () => printPages(null), text: t("print_button") }),
        v.current_round
          ? el("button", { type: "button", class: "secondary", id: "print-round-button", onclick: () => printPages("round"), text: t("print_round_button", { n: v.current_round }) })
          : null,
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

  /**
   * The crosstable of the completed rounds, in the order of the standings: for each round the
   * opponent's number, the colour (Pentago, whose marbles stay with the seats) and the result,
   * or the bye. Printed on a page of its own.
   */
  crosstable() {
    const v = this.model;
    const done = v.completed_rounds || 0;
    if (!done) return null;
    const rounds = [...v.pairings].filter((r) => r.round <= done).sort((a, b) => a.round - b.round);
    // Each player's round cells: "12 b 1", "5 w ½", or a bye's points.
    const cells = new Map(v.players.map((p) => [p.id, new Array(done).fill("")]));
    const mine = (result, seat) => {
      const [a, b] = { "1-0": ["1", "0"], "0-1": ["0", "1"], "1/2-1/2": ["½", "½"], "+-": ["+", "−"], "-+": ["−", "+"], "--": ["−", "−"] }[result] || ["", ""];
      return seat === "p1" ? a : b;
    };
    const colour = (seat) => (v.game === "pentago" ? t(seat === "p1" ? "cross_black" : "cross_white") : "");
    for (const r of rounds) {
      for (const b of r.boards) {
        for (const [seat, me, opp] of [["p1", b.p1, b.p2], ["p2", b.p2, b.p1]]) {
          const row = cells.get(me);
          if (row) row[r.round - 1] = [String(opp), colour(seat), mine(b.result, seat)].filter(Boolean).join(" ");
        }
      }
      for (const x of r.byes) {
        const row = cells.get(x.player);
        if (row) row[r.round - 1] = t("cross_bye", { pts: points(x.points) });
      }
    }
    const head = [
      el("th", { scope: "col", class: "num", text: t("col_rank") }),
      el("th", { scope: "col", class: "num" }, [el("abbr", { title: t("col_no_title"), text: t("col_no") })]),
      el("th", { scope: "col", text: t("col_name") }),
      ...rounds.map((r) => el("th", { scope: "col", class: "num", text: t("cross_round", { n: r.round }) })),
      el("th", { scope: "col", class: "num", text: t("col_points") }),
    ];
    const rows = v.standings.map((s) =>
      el("tr", { "data-player": String(s.id) }, [
        el("td", { class: "num", text: String(s.rank) }),
        el("td", { class: "num", text: String(s.id) }),
        el("th", { scope: "row", text: s.name }),
        ...(cells.get(s.id) || []).map((text) => el("td", { class: "num cross", text })),
        el("td", { class: "num points", text: points(s.points) }),
      ]),
    );
    return el("section", { class: "card crosstable-card", "aria-labelledby": "crosstable-heading" }, [
      el("h2", { id: "crosstable-heading", text: t("crosstable_heading") }),
      el("div", { class: "table-wrap", role: "region", tabindex: "0", "aria-labelledby": "crosstable-caption" }, [
        el("table", { class: "data-table crosstable", id: "crosstable" }, [
          el("caption", { id: "crosstable-caption", text: t("crosstable_caption", { n: done }) }),
          el("thead", {}, [el("tr", {}, head)]),
          el("tbody", {}, rows),
        ]),
      ]),
      el("p", { class: "hint", text: t(v.game === "pentago" ? "crosstable_hint_colours" : "crosstable_hint") }),
    ]);
  }

  /** Every paired round, the newest first: its boards, results and links, and its byes. */
  pairings() {
    const v = this.model;
    const rounds = [...v.pairings].sort((a, b) => b.round - a.round);
    const side = (which) => {
      // Pentago's stones stay with the seats: the columns are the colours of the whole round.
      if (v.game === "pentago") return t(which === "first" ? "black" : "white");
      const what = sideWords(v.game, which);
      return what ? t(`col_${which}_as`, { what }) : t(`col_${which}`);
    };
    const heads = [side("first"), side("second")];
    const note = v.game === "pentago" && v.sets > 1 ? "sides_note_pentago" : v.sets === 1 ? "sides_note_one" : "sides_note_sets";
    return el("section", { class: "card", id: "pairings", "aria-labelledby": "pairings-heading" }, [
      el("h2", { id: "pairings-heading", text: t("pairings_heading") }),
      rounds.length ? el("p", { class: "hint", id: "sides-note", text: t(note) }) : null,
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
          // A board decided by forfeit has no game to replay.
          b.result && !["+-", "-+", "--"].includes(b.result)
            ? el("a", {
                href: `#/replay/${encodeURIComponent(b.match)}`,
                id: `replay-${b.match}`,
                class: "replay-board-link",
                "aria-label": t("replay_link_label", { board: b.board, p1: this.name(b.p1), p2: this.name(b.p2) }),
                text: t("replay_short"),
              })
            : null,
        ]),
      ]);
    });
    const byesId = `byes-${r.round}`;
    const current = r.round === this.model.current_round;
    return el("div", { class: current ? "round current-round" : "round", id: `round-${r.round}`, "data-round": String(r.round) }, [
      // On paper each round has a page of its own, which says whose and which round it is.
      el("p", { class: "print-only round-print-title", text: t("print_round_title", { name: this.model.name, n: r.round }) }),
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
                el("th", { scope: "col", class: "match-head", text: t("col_match") }),
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

