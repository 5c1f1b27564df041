// The replay of a match (`#/replay/ID`): set by set, press by press, the board and both clocks
// as they were, with buttons and the arrow keys, each step said through the live region, and
// the game record to download. It folds the match's own events (`watch` with `history`), the
// same fold as the live page; it knows no rules.

import { t } from "./i18n.js";
import { createBoard, el } from "./board.js";
import { fold } from "./fold.js";
import { boardFacts, boardView } from "./position.js";
import { describeError, describeMove, formatClock, playerName, reasonWords } from "./words.js";
import { announce, conn, main } from "./ui.js";

/** A deep copy of a state (plain JSON). */
const copy = (state) => JSON.parse(JSON.stringify(state));

export class ReplayView {
  constructor(id) {
    this.id = id;
    this.frames = [];
    this.steps = [];
    this.at = 0;
    this.fatal = null;
    this.board = null;
    // The solver's analyses, by set: {positions, unproven}, or "busy" while asked.
    this.analyses = new Map();
    this.unsubscribe = conn.onFrame((frame) => {
      if (frame.match === this.id && (frame.type === "state" || frame.type === "event")) this.frames.push(frame);
    });
    this.onKey = (e) => this.key(e);
    document.addEventListener("keydown", this.onKey);
    main.replaceChildren(el("h1", { class: "page-title", text: t("loading") }));
    this.load();
  }

  destroy() {
    this.unsubscribe();
    document.removeEventListener("keydown", this.onKey);
    conn.request({ type: "leave", match: this.id }).catch(() => {});
  }

  relabel() {
    this.paint();
  }

  /** The match from its first state, then every event; one step per position worth showing. */
  async load() {
    try {
      const ack = await conn.request({ type: "watch", match: this.id, history: true });
      // Everything up to the ack's `seq` has been sent before it.
      const last = ack.seq ?? 0;
      const deadline = Date.now() + 10000;
      while (!this.frames.some((f) => f.type === "event" && f.seq === last) && last > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
    } catch (e) {
      this.fatal = e;
      this.paint();
      return;
    }
    this.unsubscribe();
    this.build();
    this.at = this.steps.length - 1;
    this.paint();
  }

  /**
   * The steps: each set's empty board, then the position after every move that passed the
   * turn (its press) or ended the set, with the clocks as they stood.
   */
  build() {
    let state = null;
    let mover = null;
    for (const frame of this.frames) {
      if (frame.type === "state") {
        if (frame.seq === 0) state = copy(frame);
        continue;
      }
      if (!state || fold(state, frame) !== "applied") continue;
      const e = frame.event;
      if (e.kind === "moved") mover = e.seat;
      const mv = state.position?.moves?.at(-1);
      if (e.kind === "set_started") this.steps.push({ state: copy(state), set: e.set, ply: 0, said: t("replay_set_start", { n: e.set }) });
      else if (e.kind === "pressed" || (e.kind === "set_ended" && this.steps.at(-1)?.ply !== state.position.moves.length)) {
        const seat = e.kind === "pressed" ? e.seat : mover;
        this.steps.push({ state: copy(state), set: state.set, ply: state.position.moves.length, said: mv ? describeMove(state, seat, mv) : "" });
      } else if (e.kind === "set_ended") {
        const last = this.steps.at(-1);
        last.state = copy(state);
      }
      if (e.kind === "set_ended") {
        const last = this.steps.at(-1);
        const who = e.winner ? playerName(state, e.winner) : null;
        last.ended = who ? t("set_line_won", { who, set: e.set, how: reasonWords(e.reason) }) : t("set_line_drawn", { set: e.set, how: reasonWords(e.reason) });
      }
    }
  }

  go(index, { say = true } = {}) {
    if (!this.steps.length) return;
    this.at = Math.max(0, Math.min(this.steps.length - 1, index));
    this.paint();
    if (say) {
      const step = this.steps[this.at];
      announce([this.where(step), step.said, step.ended].filter(Boolean).join(". "));
    }
  }

  /** The first step of set `n`. */
  goToSet(n) {
    const i = this.steps.findIndex((s) => s.set === n);
    if (i >= 0) this.go(i);
  }

  key(e) {
    if (e.target?.closest?.("input, select, textarea")) return;
    const moves = { ArrowRight: this.at + 1, ArrowLeft: this.at - 1, Home: 0, End: this.steps.length - 1 };
    if (e.key in moves) {
      e.preventDefault();
      this.go(moves[e.key]);
    }
  }

  /** The solver's word on this step's position, and the moves where a set was thrown away. */
  analysisCard(step) {
    const analysis = this.analyses.get(step.set);
    const children = [el("h2", { id: "analysis-heading", text: t("analysis_heading") })];
    if (!analysis) {
      children.push(
        el("p", { class: "hint", text: t("analysis_hint") }),
        el("button", { type: "button", class: "secondary", id: "analyse", text: t("analysis_button", { n: step.set }), onclick: () => this.analyse(step.set) }),
      );
    } else if (analysis === "busy") {
      children.push(el("p", { id: "analysis-busy", text: t("analysis_busy") }));
    } else if (analysis.error) {
      children.push(el("p", { id: "analysis-error", text: analysis.error }));
    } else {
      const here = analysis.positions.find((p) => p.ply === step.ply);
      const who = here ? playerName(step.state, here.to_move) : "";
      const verdict = !here
        ? ""
        : here.value
          ? t(`analysis_${here.value}`, { who }) + (here.keeps?.length ? ` ${t("analysis_keeps", { moves: here.keeps.slice(0, 12).join(", ") })}` : "")
          : here.played
            ? t("analysis_unproven")
            : t("analysis_over");
      children.push(el("p", { id: "analysis-verdict", text: verdict }));
      // The move that led here, when it gave something away.
      const before = analysis.positions.find((p) => p.ply === step.ply - 1);
      if (before?.thrown) children.push(el("p", { class: "thrown", id: "analysis-thrown", text: t(`analysis_thrown_${before.thrown}`, { who: playerName(step.state, before.to_move), move: before.played }) }));
      const turning = analysis.positions.filter((p) => p.thrown);
      children.push(
        el("h3", { id: "turning-heading", text: t("analysis_turning") }),
        turning.length
          ? el(
              "ul",
              { id: "turning-points", "aria-labelledby": "turning-heading" },
              turning.map((p) =>
                el("li", {}, [
                  el("button", {
                    type: "button",
                    class: "link",
                    text: t("analysis_turning_item", { n: p.ply + 1, move: p.played, what: t(`analysis_gave_${p.thrown}`) }),
                    onclick: () => this.go(this.steps.findIndex((x) => x.set === step.set && x.ply === p.ply + 1)),
                  }),
                ]),
              ),
            )
          : el("p", { id: "turning-points", text: t("analysis_no_turning") }),
        analysis.unproven ? el("p", { class: "hint", text: t("analysis_unproven_count", { n: analysis.unproven }) }) : null,
      );
    }
    return el("section", { class: "card analysis", id: "analysis", "aria-labelledby": "analysis-heading", "aria-live": "polite" }, children);
  }

  /** Asks the server's solver about every position of set `n` (bounded there, cached). */
  async analyse(n) {
    this.analyses.set(n, "busy");
    this.paint();
    try {
      const response = await fetch(`/api/matches/${encodeURIComponent(this.id)}/analysis?set=${n}`, { cache: "no-store" });
      const body = await response.json();
      this.analyses.set(n, response.ok ? body : { error: body.message || t("analysis_failed") });
    } catch {
      this.analyses.set(n, { error: t("analysis_failed") });
    }
    this.paint();
  }

  where(step) {
    const plies = Math.max(...this.steps.filter((s) => s.set === step.set).map((s) => s.ply));
    if (step.ply === 0) return t("replay_where_start", { set: step.set, plies });
    return t("replay_where", { set: step.set, ply: step.ply, plies });
  }

  paint() {
    if (this.fatal) {
      main.replaceChildren(
        el("div", { class: "card fatal", id: "replay-fatal" }, [el("h1", { text: t("fatal_unknown") }), el("p", { text: describeError(this.fatal) })]),
      );
      return;
    }
    const step = this.steps[this.at];
    if (!step) {
      main.replaceChildren(
        el("p", { class: "back" }, [el("a", { href: `#/match/${encodeURIComponent(this.id)}`, text: t("replay_back") })]),
        el("h1", { class: "page-title", text: t("replay_nothing") }),
      );
      return;
    }
    const s = step.state;
    const name = (seat) => playerName(s, seat);
    if (!this.board || this.boardGame !== s.game) {
      this.board = createBoard(s.game, {});
      this.boardGame = s.game;
    }
    this.board.update(boardView(s));
    const button = (id, text, index, label) =>
      el("button", { type: "button", class: "secondary", id, text, "aria-label": label, disabled: index === this.at || index < 0 || index >= this.steps.length, onclick: () => this.go(index) });
    const sets = [...new Set(this.steps.map((x) => x.set))];
    const clock = (seat) => (s.clocks ? formatClock(s.clocks[`${seat}_ms`]) : t("untimed"));
    const focused = main.contains(document.activeElement) ? document.activeElement.id : null;
    main.replaceChildren(
      el("p", { class: "back" }, [el("a", { href: `#/match/${encodeURIComponent(this.id)}`, id: "replay-back", text: t("replay_back") })]),
      el("h1", { class: "page-title", id: "replay-title", text: t("replay_title", { game: t(`game_${s.game}`), p1: name("p1"), p2: name("p2") }) }),
      el("p", { class: "turn-line", id: "replay-where", text: this.where(step) }),
      el("div", { class: "replay" }, [
        el("div", { class: "replay-board" }, [this.board.el, el("p", { class: "board-facts", text: boardFacts(s) })]),
        el("section", { class: "card replay-controls", "aria-labelledby": "replay-controls-heading" }, [
          el("h2", { id: "replay-controls-heading", text: t("replay_controls") }),
          el("div", { class: "row", role: "group", "aria-label": t("replay_controls") }, [
            button("replay-first", `« ${t("replay_first")}`, 0, t("replay_first")),
            button("replay-prev", "‹", this.at - 1, t("replay_prev")),
            button("replay-next", "›", this.at + 1, t("replay_next")),
            button("replay-last", `${t("replay_last")} »`, this.steps.length - 1, t("replay_last")),
          ]),
          el("p", { class: "hint", text: t("replay_keys") }),
          sets.length > 1
            ? el("div", { class: "row" }, sets.map((n) => el("button", { type: "button", class: n === step.set ? "primary" : "secondary", id: `replay-set-${n}`, text: t("set_n", { n }), "aria-pressed": String(n === step.set), onclick: () => this.goToSet(n) })))
            : null,
          el("dl", { class: "settings", id: "replay-clocks" }, [
            el("div", {}, [el("dt", { text: name("p1") }), el("dd", { id: "replay-clock-p1", text: clock("p1") })]),
            el("div", {}, [el("dt", { text: name("p2") }), el("dd", { id: "replay-clock-p2", text: clock("p2") })]),
          ]),
          el("p", { id: "replay-said", text: [step.said, step.ended].filter(Boolean).join(". ") }),
          el("a", { href: `/api/matches/${encodeURIComponent(this.id)}/record`, download: `${this.id}.pgn`, id: "replay-record", class: "button secondary", text: t("replay_record") }),
        ]),
        s.game === "pentago" ? this.analysisCard(step) : null,
      ]),
    );
    if (focused) document.getElementById(focused)?.focus({ preventScroll: true });
  }
}
