// The arbiter's desk on a tournament page (`#/tournament/ID?arbiter=TOKEN`): the commands of
// `hakem tournament` (start, the next pairing shown before it is published, results entered or
// corrected, withdrawals, late entries, half-point byes, forfeits) and an overview of the
// current round, every board live.
// It is built once and kept across the page's redraws, so that what the arbiter types stays.

import { t } from "./i18n.js";
import { el } from "./board.js";
import { fold } from "./fold.js";
import { boardResult, byeWords, describeError, formatClock, points, pointsWords } from "./words.js";
import { announce, conn, showAlert } from "./ui.js";

export class Desk {
  constructor(id, token, names) {
    this.id = id;
    this.token = token;
    this.name = names;
    this.model = null;
    // The current round's matches, followed as their arbiter: id -> state (null until it
    // arrives); and those whose join has gone out (the others' still wait in the pacer).
    this.boards = new Map();
    this.joined = new Set();
    this.round = 0;
    this.paintSoon = null;
    this.unsubscribe = conn.onFrame((frame) => this.onFrame(frame));
    this.ticker = setInterval(() => this.paintOverview(), 1000);
    this.build();
  }

  destroy() {
    this.unsubscribe();
    clearInterval(this.ticker);
    clearTimeout(this.paintSoon);
    this.leaveAll();
  }

  /**
   * Leaves the boards whose join has gone out; the joins still waiting for their turn are
   * dropped unsent (no longer wanted), so there is nothing to leave for them.
   */
  leaveAll() {
    for (const match of this.joined) conn.request({ type: "leave", match }, { background: true }).catch(() => {});
    this.joined.clear();
    this.boards.clear();
  }

  /** Sends a tournament command with the arbiter token; says a refusal in the alert line. */
  async command(message) {
    try {
      return await conn.request({ ...message, tournament: this.id, arbiter_token: this.token });
    } catch (e) {
      showAlert(describeError(e));
      return null;
    }
  }

  build() {
    const button = (id, text, onclick, kind = "secondary") => el("button", { type: "button", class: kind, id, text, onclick });
    const field = (control, text) => el("div", { class: "field" }, [el("label", { for: control.id, text }), control]);
    this.lot = el("select", { id: "desk-lot" }, [
      el("option", { value: "", text: t("desk_lot_draw") }),
      el("option", { value: "p1", text: t("lot_p1") }),
      el("option", { value: "p2", text: t("lot_p2") }),
    ]);
    this.player = el("select", { id: "desk-player" });
    this.byeRound = el("input", { type: "number", id: "desk-bye-round", min: "1", step: "1" });
    this.double = el("input", { type: "checkbox", id: "desk-double" });
    this.surname = el("input", { type: "text", id: "desk-surname", maxlength: "100" });
    this.given = el("input", { type: "text", id: "desk-given", maxlength: "100" });
    this.account = el("input", { type: "text", id: "desk-account", maxlength: "64", autocomplete: "off", spellcheck: "false", "aria-describedby": "desk-account-hint" });
    this.preview = el("div", { id: "desk-preview" });
    this.resultRound = el("input", { type: "number", id: "desk-result-round", min: "1", step: "1" });
    this.resultBoard = el("input", { type: "number", id: "desk-result-board", min: "1", step: "1" });
    this.result = el(
      "select",
      { id: "desk-result" },
      ["1-0", "0-1", "1/2-1/2", "+-", "-+", "--"].map((r) => el("option", { value: r, text: boardResult(r) })),
    );
    this.entered = el("p", { class: "hint", id: "desk-entered", "aria-live": "polite" });
    this.assistantName = el("input", { type: "text", id: "desk-assistant-name", maxlength: "100" });
    this.assistantBoards = el("input", { type: "text", id: "desk-assistant-boards", maxlength: "200", placeholder: "1-5, 8" });
    this.assistants = el("ul", { id: "desk-assistants" });
    this.assistantToken = el("p", { class: "hint", id: "desk-assistant-token", "aria-live": "polite" });
    this.status = el("p", { class: "hint", id: "desk-status" });
    this.overview = el("tbody", {});
    this.startRow = el("div", { class: "row", id: "desk-start" }, [
      field(this.lot, t("desk_lot")),
      button("desk-start-button", t("desk_start"), () => this.start(), "primary"),
    ]);
    this.nextRow = el("div", { class: "row", id: "desk-next" }, [button("desk-preview-button", t("desk_preview"), () => this.showPreview(), "primary")]);
    this.el = el("section", { class: "card desk", id: "desk", "aria-labelledby": "desk-heading" }, [
      el("h2", { id: "desk-heading", text: t("desk_heading") }),
      this.status,
      this.startRow,
      this.nextRow,
      this.preview,
      el("h3", { text: t("desk_result_heading") }),
      el("p", { class: "hint", text: t("desk_result_hint") }),
      el("div", { class: "row" }, [
        field(this.resultRound, t("desk_bye_round")),
        field(this.resultBoard, t("col_board")),
        field(this.result, t("col_result")),
        button("desk-set-result", t("desk_set_result"), () => this.setResult()),
      ]),
      el("h3", { text: t("desk_players") }),
      el("div", { class: "row" }, [
        field(this.player, t("field_player")),
        button("desk-withdraw", t("desk_withdraw"), () => this.playerCommand("withdraw")),
        field(this.byeRound, t("desk_bye_round")),
        button("desk-bye", t("desk_bye"), () => this.playerCommand("request_bye")),
        el("div", { class: "field check" }, [this.double, el("label", { for: this.double.id, text: t("desk_double") })]),
        button("desk-forfeit", t("desk_forfeit"), () => this.playerCommand("forfeit")),
      ]),
      el("h3", { text: t("desk_entry") }),
      el("div", { class: "row" }, [
        field(this.surname, t("desk_surname")),
        field(this.given, t("desk_given")),
        field(this.account, t("desk_account")),
        button("desk-add", t("desk_add"), () => this.addPlayer()),
      ]),
      el("p", { class: "hint", id: "desk-account-hint", text: t("desk_account_hint") }),
      this.entered,
      el("h3", { text: t("desk_assistants") }),
      this.assistants,
      el("div", { class: "row" }, [
        field(this.assistantName, t("desk_assistant_name")),
        field(this.assistantBoards, t("desk_assistant_boards")),
        button("desk-add-assistant", t("desk_add_assistant"), () => this.addAssistant()),
      ]),
      this.assistantToken,
      el("h3", { id: "overview-heading", text: t("desk_overview") }),
      el("div", { class: "table-wrap", role: "region", tabindex: "0", "aria-labelledby": "overview-heading" }, [
        el("table", { class: "data-table overview", id: "overview" }, [
          el("thead", {}, [
            el("tr", {}, [
              el("th", { scope: "col", class: "num", text: t("col_board") }),
              el("th", { scope: "col", text: t("desk_col_players") }),
              el("th", { scope: "col", class: "num", text: t("desk_col_sets") }),
              el("th", { scope: "col", class: "num", text: t("desk_col_warnings") }),
              el("th", { scope: "col", class: "num", text: t("desk_col_claims") }),
              el("th", { scope: "col", text: t("desk_col_clocks") }),
              el("th", { scope: "col", text: t("col_match") }),
            ]),
          ]),
          this.overview,
        ]),
      ]),
    ]);
  }

  /** The tournament changed (or was first seen): the controls, and the boards to follow. */
  update(v) {
    this.model = v;
    const running = v.status === "running";
    this.startRow.hidden = v.status !== "registration";
    this.nextRow.hidden = !running;
    const chosen = this.player.value;
    this.player.replaceChildren(...v.players.map((p) => el("option", { value: String(p.id), text: `${p.name} (${p.id})` })));
    if (chosen) this.player.value = chosen;
    if (!this.byeRound.value) this.byeRound.value = String(Math.min(v.rounds, v.current_round + 1));
    if (!this.resultRound.value && v.current_round) this.resultRound.value = String(v.current_round);
    this.status.textContent =
      v.status === "registration" ? t("desk_status_registration") : v.status === "finished" ? t("desk_status_finished") : v.completed_rounds === v.current_round ? t("desk_status_pair", { n: v.current_round + 1 }) : t("desk_status_playing", { n: v.current_round });
    this.assistants.replaceChildren(...(v.assistants || []).map((a) => el("li", { text: t("desk_assistant_line", { name: a.name, boards: a.boards.join(", ") }) })));
    if (v.current_round !== this.round) this.follow(v);
    this.paintOverview();
  }

  /** After a lost connection the server has forgotten the joins: the boards are joined again. */
  rejoin() {
    // The new connection has joined nothing: nothing to leave.
    this.joined.clear();
    this.boards.clear();
    if (this.model) this.follow(this.model);
  }

  /**
   * Joins every match of the current round as its arbiter (the tournament's token opens them).
   * A round may have hundreds of boards: the joins go out paced within the server's message
   * rate, behind anything the arbiter asks meanwhile, and each row fills in as its board's
   * state arrives. Joins of a round no longer shown are not sent.
   */
  follow(v) {
    this.leaveAll();
    this.round = v.current_round;
    this.preview.replaceChildren();
    const round = v.pairings.find((r) => r.round === v.current_round);
    for (const b of round?.boards || []) {
      this.boards.set(b.match, null);
      const wanted = () => this.boards.has(b.match);
      const sent = () => this.joined.add(b.match);
      conn.request({ type: "join", match: b.match, arbiter_token: this.token }, { background: true, wanted, sent }).catch(() => {});
    }
  }

  onFrame(frame) {
    if (!this.boards.has(frame.match)) return;
    if (frame.type === "state") {
      this.boards.set(frame.match, { state: frame, at: performance.now() });
    } else if (frame.type === "event") {
      const seen = this.boards.get(frame.match);
      if (seen && fold(seen.state, frame) === "applied") seen.at = performance.now();
      if (frame.event?.kind === "claim") announce(t("desk_say_claim", { board: this.boardOf(frame.match) }));
    } else return;
    // The states of a large round arrive in a stream: one repaint for those of a moment.
    if (this.paintSoon) return;
    this.paintSoon = setTimeout(() => {
      this.paintSoon = null;
      this.paintOverview();
    }, 50);
  }

  boardOf(match) {
    const round = this.model?.pairings.find((r) => r.round === this.round);
    return round?.boards.find((b) => b.match === match)?.board ?? "?";
  }

  /** One row per board: who plays, the set score, warnings, open claims, both clocks now. */
  paintOverview() {
    const v = this.model;
    if (!v) return;
    const round = v.pairings.find((r) => r.round === this.round);
    const rows = (round?.boards || []).map((b) => {
      const seen = this.boards.get(b.match);
      const s = seen?.state;
      const sets = s ? `${points(s.set_points?.p1)}–${points(s.set_points?.p2)}` : "…";
      const warnings = s ? `${s.warnings?.p1 ?? 0}–${s.warnings?.p2 ?? 0}` : "…";
      const open = (s?.claims || []).filter((c) => c.status === "open").length;
      const clock = (seat) => {
        const c = s?.clocks;
        if (!c) return "—";
        let ms = c[`${seat}_ms`];
        if (c.running === seat && !c.paused && s.status === "playing") ms = Math.max(0, ms - (performance.now() - seen.at));
        return formatClock(ms);
      };
      const result = b.result ? boardResult(b.result) : s?.status === "playing" ? t("desk_set_n", { n: s.set }) : t("round_playing");
      return el("tr", { "data-board": String(b.board), class: open ? "has-claims" : "" }, [
        el("th", { scope: "row", class: "num", text: String(b.board) }),
        el("td", { text: `${this.name(b.p1)} – ${this.name(b.p2)} (${result})` }),
        el("td", { class: "num", text: sets }),
        el("td", { class: "num", text: warnings }),
        el("td", { class: open ? "num claims-open" : "num", text: String(open) }),
        el("td", { class: "clocks", text: `${clock("p1")} · ${clock("p2")}` }),
        el("td", {}, [
          el("a", {
            href: `#/match/${encodeURIComponent(b.match)}?arbiter=${encodeURIComponent(this.token)}`,
            id: `desk-go-${b.board}`,
            text: t("desk_go", { board: b.board }),
          }),
        ]),
      ]);
    });
    this.overview.replaceChildren(...(rows.length ? rows : [el("tr", {}, [el("td", { colspan: "7", class: "empty", text: t("no_pairings") })])]));
  }

  async start() {
    const lot = this.lot.value;
    const message = { type: "start_tournament" };
    if (lot) message.colour_lot = lot;
    if (await this.command(message)) announce(t("desk_done_start"));
  }

  /** The next round as it would be paired now, with the button that publishes it. */
  async showPreview() {
    const shown = await this.command({ type: "preview_pairing" });
    if (shown) this.paintPreview(shown);
  }

  /** A pairing not yet published: its boards and byes, Publish and Put away. */
  paintPreview(shown) {
    // Publish names this pairing: the server publishes it only if it is still the pairing.
    this.shownPairing = shown.pairing || null;
    const rows = shown.boards.map((b) =>
      el("tr", { "data-board": String(b.board) }, [
        el("th", { scope: "row", class: "num", text: String(b.board) }),
        el("td", { text: `${this.name(b.p1)} (${b.p1})` }),
        el("td", { text: `${this.name(b.p2)} (${b.p2})` }),
      ]),
    );
    const byes = shown.byes.map((x) => el("li", { text: t("bye_line", { name: this.name(x.player), no: x.player, kind: byeWords(x.kind), pts: pointsWords(x.points) }) }));
    this.preview.replaceChildren(
      el("h3", { id: "preview-heading", text: t("desk_preview_heading", { n: shown.round }) }),
      shown.search_stopped ? el("p", { class: "thrown", id: "preview-warning", text: t("desk_search_stopped") }) : null,
      el("table", { class: "data-table", id: "preview-table", "aria-labelledby": "preview-heading" }, [
        el("thead", {}, [el("tr", {}, [el("th", { scope: "col", class: "num", text: t("col_board") }), el("th", { scope: "col", text: this.side("first") }), el("th", { scope: "col", text: this.side("second") })])]),
        el("tbody", {}, rows),
      ]),
      byes.length ? el("ul", { class: "byes" }, byes) : null,
      el("div", { class: "row" }, [
        el("button", { type: "button", class: "primary", id: "desk-publish", text: t("desk_publish", { n: shown.round }), onclick: () => this.publish() }),
        el("button", { type: "button", class: "secondary", id: "desk-discard", text: t("desk_discard"), onclick: () => this.preview.replaceChildren() }),
      ]),
    );
    document.getElementById("preview-heading")?.focus?.();
  }

  /** A pairing column's head: Pentago's colours stay with the seats, as in the pairings. */
  side(which) {
    if (this.model?.game === "pentago") return t(which === "first" ? "black" : "white");
    return t(which === "first" ? "col_first" : "col_second");
  }

  /**
   * Publishes the pairing shown. If something changed since it was shown (a result, a bye, an
   * entry), the server publishes nothing and sends the pairing as it is now: that is shown in
   * its place, and said, for the arbiter to look at before publishing.
   */
  async publish() {
    const message = { type: "pair_next", tournament: this.id, arbiter_token: this.token };
    if (this.shownPairing) message.pairing = this.shownPairing;
    try {
      const paired = await conn.request(message);
      this.preview.replaceChildren();
      announce(t("desk_done_paired", { n: paired.current_round }));
    } catch (e) {
      if (e.code === "pairing_changed" && e.reply?.preview) {
        this.paintPreview(e.reply.preview);
        showAlert(t("desk_pairing_changed", { n: e.reply.preview.round }));
      } else showAlert(describeError(e));
    }
  }

  /** `1-5, 8` as board numbers; null when it is not such a list. */
  static boards(text) {
    const boards = [];
    for (const part of text.split(",").map((p) => p.trim()).filter(Boolean)) {
      const m = /^(\d+)\s*(?:-\s*(\d+))?$/.exec(part);
      if (!m) return null;
      const from = Number(m[1]);
      const to = m[2] ? Number(m[2]) : from;
      if (to < from || to - from > 1000) return null;
      for (let b = from; b <= to; b++) boards.push(b);
    }
    return boards.length ? boards : null;
  }

  async addAssistant() {
    const name = this.assistantName.value.trim();
    const boards = Desk.boards(this.assistantBoards.value);
    if (!name || !boards) {
      showAlert(t("desk_assistant_invalid"));
      return;
    }
    const added = await this.command({ type: "add_assistant", name, boards });
    if (added) {
      this.assistantName.value = "";
      this.assistantBoards.value = "";
      this.assistantToken.textContent = t("desk_assistant_token", { name: added.name, boards: added.boards.join(", "), token: added.token });
    }
  }

  async setResult() {
    const round = Number(this.resultRound.value);
    const board = Number(this.resultBoard.value);
    if (!round || !board) return;
    if (await this.command({ type: "set_result", round, board, result: this.result.value })) {
      announce(t("desk_done_result", { round, board, result: boardResult(this.result.value) }));
    }
  }

  async playerCommand(type) {
    const player = Number(this.player.value);
    if (!player) return;
    const message = { type, player };
    if (type === "request_bye") message.round = Number(this.byeRound.value);
    if (type === "forfeit") message.double = this.double.checked;
    if (await this.command(message)) announce(t(`desk_done_${type}`, { name: this.name(player) }));
  }

  async addPlayer() {
    const surname = this.surname.value.trim();
    if (!surname) return;
    const player = { surname, given: this.given.value.trim() };
    const account = this.account.value.trim();
    if (account) player.account = account;
    const added = await this.command({ type: "add_players", players: [player] });
    if (added) {
      this.surname.value = "";
      this.given.value = "";
      this.account.value = "";
      // A new account's token is shown once, for the arbiter to hand over; a player with an
      // account of their own plays with it.
      const p = added.players?.[0];
      this.entered.textContent = p?.token
        ? t("desk_entered_token", { name: p.name, no: p.id, token: p.token })
        : account
          ? t("desk_entered_account", { name: p?.name ?? surname, no: p?.id ?? "", account })
          : t("desk_entered", { name: p?.name ?? surname, no: p?.id ?? "" });
    }
  }
}
