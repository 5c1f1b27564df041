// A match (`#/match/ID`, `?seat=TOKEN` to play, `?arbiter=TOKEN` to arbitrate): the board,
// the clocks, the score and what happened, kept up to date by the match's events alone. The
// page joins with the whole history, folds every event into the state (fold.js) and draws the
// boards the events carry; it knows no rules. The match's chat is chat.js's; the players of a
// casual Pente or Quoridor match may agree a set drawn here.

import { Connection, ServerError } from "./net.js";
import { storedSession } from "./account.js";
import { ChatPanel } from "./chat.js";
import { t } from "./i18n.js";
import { createBoard, el, parsePentagoMove } from "./board.js";
import { boardFacts, boardView } from "./position.js";
import { play, setSounds, soundsOn } from "./sound.js";
import { fold } from "./fold.js";
import {
  clockWords,
  delayWords,
  seatColour,
  sideColour,
  describeError,
  describeEvent,
  describeMove,
  firstMover,
  formatClock,
  playerName,
  points,
  reasonWords,
} from "./words.js";
import { announce, conn, handoff, main, other, paintConnection, showAlert } from "./ui.js";

export class MatchView {
  constructor(id, params) {
    this.id = id;
    this.seatToken = params.get("seat");
    this.rematch = { mine: false, theirs: false, made: false };
    this.arbiterToken = params.get("arbiter");
    this.role = this.seatToken ? "player" : this.arbiterToken ? "arbiter" : "spectator";
    // A spectator who is logged in watches on a connection of the account, so that they may
    // write in the spectators' chat; everyone else shares the page's guest connection.
    const session = this.role === "spectator" ? storedSession() : null;
    this.ownConn = Boolean(session);
    this.conn = session ? new Connection(session.token) : conn;
    if (this.ownConn) this.conn.onStatus(paintConnection);
    this.chat = new ChatPanel(this);
    // The (set, moves made) of each seat's last draw offer: one offer per move.
    this.lastDrawOffer = { p1: null, p2: null };
    this.you = null;
    this.model = null;
    // Until the server acknowledges the join, the events are the match so far: logged, not
    // spoken.
    this.catchingUp = true;
    this.legal = null;
    this.clockBase = null;
    this.mode = "pawn";
    this.selectedQuadrant = null;
    this.log = [];
    this.said = { place: null, move: false };
    this.fatal = null;
    this.autoPress = localStorage.getItem("hakem.autopress") === "1";
    this.board = null;
    this.boardGame = null;
    this.resignArmed = false;
    this.arrival = handoff.arrival?.match === id ? handoff.arrival : null;
    handoff.arrival = null;

    this.unsubscribe = this.conn.onFrame((frame) => this.onFrame(frame));
    this.conn.onReconnect = () => this.join();
    this.keyHandler = (e) => this.onKey(e);
    document.addEventListener("keydown", this.keyHandler);
    this.build();
    this.join();
    this.ticker = setInterval(() => this.paintClocks(), 100);
  }

  destroy() {
    clearInterval(this.ticker);
    this.unsubscribe();
    this.conn.onReconnect = null;
    document.removeEventListener("keydown", this.keyHandler);
    if (this.ownConn) {
      this.conn.close();
      paintConnection("closed");
    } else {
      this.conn.request({ type: "leave", match: this.id }).catch(() => {});
    }
  }

  relabel() {
    this.build();
    this.render();
  }

  /** Joins (or watches) the match: the first time with its whole history, which builds the
   * log; after a lost connection or a gap, with the events since the last one folded in. */
  async join() {
    const entry =
      this.role === "player"
        ? { type: "join", match: this.id, seat_token: this.seatToken, legal_moves: true }
        : this.role === "arbiter"
          ? { type: "join", match: this.id, arbiter_token: this.arbiterToken }
          : { type: "watch", match: this.id };
    const message = this.model ? { ...entry, since_seq: this.model.seq } : { ...entry, history: true };
    this.catchingUp = true;
    try {
      await this.conn.request(message);
      this.fatal = null;
      this.catchingUp = false;
      this.render();
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
    if (frame.type === "state") this.onState(frame);
    else if (frame.type === "event") this.onEvent(frame);
    else if (frame.type === "rematch_offered") this.rematchOffered(frame.seat);
    else if (frame.type === "rematch") this.rematchMade(frame);
    else this.chat.onFrame(frame);
  }

  // --- draws by agreement ---------------------------------------------------------------------

  /** A seated player of a casual Pente or Quoridor match may offer a draw of the set in play. */
  mayOfferDraw() {
    const s = this.model;
    return (
      this.role === "player" &&
      Boolean(this.you) &&
      (s?.game === "pente" || s?.game === "quoridor") &&
      !s.tournament &&
      !s.players?.p1?.house_bot &&
      !s.players?.p2?.house_bot &&
      s.status === "playing"
    );
  }

  /** True when this player's last offer was made at this very point of the set: the next one
   * waits for a move. */
  offeredThisMove() {
    const s = this.model;
    return this.lastDrawOffer[this.you] === `${s?.set}:${s?.position?.moves?.length || 0}`;
  }

  paintDraw() {
    const box = this.el?.draw;
    if (!box) return;
    const s = this.model;
    box.hidden = !this.mayOfferDraw();
    if (box.hidden) return;
    const theirs = s.draw_offer === other(this.you);
    const mine = s.draw_offer === this.you;
    const later = !theirs && !mine && this.offeredThisMove();
    const said = mine ? t("draw_mine") : theirs ? t("draw_theirs") : later ? t("draw_again_later") : t("draw_hint");
    const [line, row] = box.children;
    const [offer, decline] = row.children;
    if (line.textContent !== said) line.textContent = said;
    line.classList.toggle("draw-open", mine || theirs);
    const text = t(theirs ? "draw_accept" : "draw_offer");
    if (offer.textContent !== text) offer.textContent = text;
    offer.className = theirs ? "primary" : "secondary";
    offer.disabled = mine || later;
    decline.hidden = !theirs;
  }

  /** The live region's words for a draw event on a player's page, or null for the log's own. */
  drawWords(e) {
    if (this.role !== "player" || !this.you) return null;
    if (e.kind === "draw_offered") return t(e.seat === this.you ? "draw_mine" : "draw_theirs");
    if (e.kind === "draw_declined" && e.seat !== this.you) return t("draw_declined_theirs");
    return null;
  }

  // --- rematch --------------------------------------------------------------------------------

  /** A player of a finished casual round may offer to play again, seats swapped. */
  mayRematch() {
    const s = this.model;
    return this.role === "player" && s?.status === "finished" && !s.tournament && !s.players?.p1?.house_bot && !s.players?.p2?.house_bot;
  }

  async offerRematch() {
    const reply = await this.act({ type: "offer_rematch" });
    if (!reply) return;
    if (reply.type === "rematch") {
      this.rematchMade(reply);
      return;
    }
    if (!this.rematch.made) {
      this.rematch.mine = true;
      announce(t(this.rematch.theirs ? "rematch_starting" : "rematch_sent"));
      this.paintRematch();
    }
  }

  rematchOffered(seat) {
    if (seat === this.you) return;
    this.rematch.theirs = true;
    announce(t("rematch_offered"));
    this.paintRematch();
  }

  rematchMade(frame) {
    if (this.rematch.made) return;
    this.rematch.made = true;
    announce(t("rematch_ready"));
    location.hash = `#/match/${encodeURIComponent(frame.new_match)}?seat=${encodeURIComponent(frame.seat_token)}`;
  }

  paintRematch() {
    const box = this.el?.rematch;
    if (!box) return;
    box.hidden = !this.mayRematch();
    const [say, button] = box.children;
    say.textContent = t(this.rematch.mine ? "rematch_waiting" : this.rematch.theirs ? "rematch_their_offer" : "rematch_hint");
    button.textContent = t(this.rematch.theirs && !this.rematch.mine ? "rematch_accept" : "rematch_offer");
    button.disabled = this.rematch.mine;
  }

  onState(s) {
    if (s.you) this.you = s.you;
    if (this.model && s.seq < this.model.seq) return;
    if (Array.isArray(s.position?.legal_moves)) this.legal = s.position.legal_moves;
    const before = this.model;
    this.model = s;
    this.setClocks(s.clocks);
    this.render();
  }

  onEvent(frame) {
    if (!this.model) return;
    const before = JSON.parse(JSON.stringify(this.model));
    const folded = fold(this.model, frame);
    if (folded === "repeated") return;
    if (folded === "gap") {
      // Some events went missing: ask for them.
      if (!this.catchingUp) this.join();
      return;
    }
    const e = frame.event;
    if (e.kind === "draw_offered") this.lastDrawOffer[e.seat] = `${before.set}:${before.position?.moves?.length || 0}`;
    // The words are made again from the state before the event when the language changes.
    const context = { skipMoved: this.skipMoved(e) };
    const yourTurn = e.kind === "pressed" && this.you === other(e.seat) && before.status === "playing";
    const say = () => {
      const words = describeEvent(before, e, context);
      return words && yourTurn ? `${words} ${t("your_turn")}` : words;
    };
    const text = say();
    if (text) {
      if (!this.catchingUp) announce(this.drawWords(e) || text);
      this.log.push(say);
      if (this.log.length > 500) this.log.shift();
    }
    if (e.kind === "warning" && this.you === e.seat && !this.catchingUp) showAlert(text);
    if (!this.model.position?.legal_moves) {
      // A fresh `state` with the legal moves follows when it is this player's turn.
      this.legal = null;
    }
    if (["moved", "set_started", "set_ended"].includes(e.kind)) this.selectedQuadrant = null;
    this.setClocks(frame.clocks);
    this.sayCaptures(before, this.model);
    if (!this.catchingUp) {
      if (e.kind === "moved") play("move");
      if (e.kind === "set_ended") play("end");
      if (e.kind === "set_started") this.lowSaid = false;
    }
    // The match so far is drawn once, when it has all come in.
    if (!this.catchingUp) this.render();
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

  sayCaptures(before, after) {
    if (!before || after.game !== "pente" || before.set !== after.set) return;
    const was = before.position?.board?.captures;
    const now = after.position?.board?.captures;
    if (!was || !now) return;
    for (const side of ["first", "second"]) {
      if ((now[side] || 0) > (was[side] || 0)) {
        const say = () =>
          t("say_captures", {
            who: sideColour(after, side),
            n: now[side] - was[side],
            total: now[side],
          });
        if (!this.catchingUp) announce(say());
        this.log.push(say);
      }
    }
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
      const reply = await this.conn.request({ ...message, match: this.id });
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
    const ok = await this.act({ type: "rotate", quadrant, dir });
    // A refused turn (counter-clockwise under Turkish rules) changes nothing: the quadrant
    // chosen stays chosen.
    if (ok) this.selectedQuadrant = null;
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
    // A new claims list is drawn from scratch (after a change of language, say).
    this.claimsKey = null;
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
      delay: el("p", { class: "match-delay", id: "spectator-delay", hidden: true }),
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
      replay: el("p", { class: "replay-link", hidden: true }, [el("a", { href: `#/replay/${encodeURIComponent(this.id)}`, id: "replay-link", text: t("replay_link") })]),
      rematch: el("div", { class: "rematch", id: "rematch", hidden: true }, [
        el("p", { id: "rematch-said" }),
        el("button", { type: "button", id: "rematch-button", onclick: () => this.offerRematch() }),
      ]),
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
          id: "claim-form",
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
        // Put away once the round is over: a finished match is a finished page.
        (this.el.liveControls = el("div", { id: "play-controls" }, [
          el("div", { class: "check" }, [auto, el("label", { for: "autopress", text: t("autopress") })]),
          (this.el.claimForm = claimForm),
          (this.el.draw = el("div", { class: "draw", id: "draw", hidden: true }, [
            el("p", { class: "hint", id: "draw-said" }),
            el("div", { class: "row" }, [
              el("button", { type: "button", class: "secondary", id: "offer-draw", onclick: () => this.act({ type: "offer_draw" }) }),
              el("button", { type: "button", class: "secondary", id: "decline-draw", text: t("draw_decline"), hidden: true, onclick: () => this.act({ type: "decline_draw" }) }),
            ]),
          ])),
          el("div", { class: "row" }, [resign]),
        ])),
        el("h3", { text: t("claims_heading") }),
        (this.el.claims = el("ol", { class: "claims", id: "claims" })),
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
        (this.el.liveControls = el("div", { id: "arb-controls" }, [
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
        ])),
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
    const sounds = el("input", { type: "checkbox", id: "sounds", checked: soundsOn(), onchange: (e) => setSounds(e.target.checked) });
    const soundsRow = el("div", { class: "check sounds" }, [sounds, el("label", { for: "sounds", text: t("sounds") })]);
    main.replaceChildren(
      E.fatal,
      el("div", { class: "match" }, [
        el("div", { class: "match-head" }, [E.title, E.subtitle, E.tournament, E.delay, roleLabel, E.status, E.result, E.replay, E.rematch, soundsRow]),
        el("div", { class: "match-body" }, [
          el("section", { class: "board-area", "aria-label": t("board_area") }, [E.boardBox, E.boardTools]),
          el("div", { class: "side" }, [
            E.seats,
            this.role === "player" ? el("div", { class: "press-row" }, [E.press, E.ready]) : null,
            this.role === "player" ? playerTools() : null,
            this.role === "arbiter" ? arbiterTools() : null,
            this.chat.build(),
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
    this.paintTitle();
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
    // The server holds events back from spectators; the page only says so.
    E.delay.hidden = !s.spectator_delay || s.status === "finished";
    if (s.spectator_delay) {
      const behind = delayWords(s.spectator_delay);
      E.delay.textContent = t(this.role === "spectator" ? "delay_you" : "delay_others", { behind });
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

    // The line that says what happens now; once the round is over, the result says it all.
    const now = this.statusLine();
    E.status.textContent = now;
    E.status.hidden = !now;
    if (E.liveControls) E.liveControls.hidden = s.status === "finished";
    E.result.hidden = !s.round;
    if (s.round) E.result.textContent = describeRoundResult(s);
    // A finished match can be gone through again, press by press.
    E.replay.hidden = s.status !== "finished";
    this.paintRematch();
    this.paintDraw();
    this.chat.paint();

    // Seats.
    for (const seat of ["p1", "p2"]) {
      const panel = main.querySelector(`#seat-${seat}`);
      const side = s.status === "playing" || pos.moves?.length ? (seat === first ? "first" : "second") : null;
      panel.querySelector(".seat-name").textContent = name(seat);
      panel.dataset.side = side || "";
      panel.dataset.game = s.game;
      const tags = [];
      if (side && seatColour(s, seat)) tags.push(seatColour(s, seat));
      if (side && s.game === "quoridor") tags.push(t(side === "first" ? "starts_e1" : "starts_e9"));
      if (this.you === seat) tags.push(t("you"));
      if (!s.players?.[seat]?.connected) tags.push(t("offline"));
      if (s.players?.[seat]?.ready && s.status !== "playing" && s.status !== "finished") tags.push(t("is_ready"));
      panel.querySelector(".seat-tags").textContent = tags.join(" · ");
      const warnings = s.warnings?.[seat] || 0;
      const facts = [t("points_short", { n: points(s.set_points?.[seat]) }), t("warnings_short", { n: warnings, limit: s.warnings_limit })];
      if (s.game === "pente" && side) facts.push(t("captures_short", { n: pos.board?.captures?.[side] ?? 0 }));
      // The walls come with the board: none is shown before set 1 has one.
      if (s.game === "quoridor" && side && pos.board?.walls_left) facts.push(t("walls_short", { n: pos.board.walls_left[side] }));
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
    }
    if (E.claims) this.paintClaims(s);

    // Sets and score.
    const setItems = (s.sets || []).map((x) => {
      // Who won and how, in words; the first mover's 1-0 stays in the record.
      const how = reasonWords(x.reason);
      const text = x.winner ? t("set_line_won", { who: name(x.winner), set: x.set, how }) : t("set_line_drawn", { set: x.set, how });
      return el("li", { "data-set": String(x.set), text });
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
    if (s.round) return "";
    if (s.paused) return t("status_paused");
    if (s.status === "waiting" || s.status === "between_sets") {
      const next = (s.sets?.length || 0) + 1;
      const ready = ["p1", "p2"].filter((seat) => s.players?.[seat]?.ready);
      if (ready.length === 1) return t("status_between_one", { n: next, ready: name(ready[0]), waiting: name(other(ready[0])) });
      return t("status_between", { n: next });
    }
    if (s.status !== "playing") return "";
    const mover = pos.awaiting_press || pos.to_move;
    const colour = seatColour(s, mover);
    const who = `${name(mover)}${colour ? ` (${colour})` : ""}`;
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

  /**
   * Every claim of the match with its ruling (the state keeps them for the arbiter and the
   * players); the arbiter rules on each open one. Rebuilt only when a claim changed, so that a
   * reason being typed survives the events around it.
   */
  paintClaims(s) {
    const claims = s.claims || [];
    const key = JSON.stringify(claims);
    if (key === this.claimsKey) return;
    this.claimsKey = key;
    const name = (seat) => playerName(s, seat);
    const item = (c) => {
      const about = t("claim_about", { who: name(c.seat), set: c.set, ply: c.ply });
      const status = t(`claim_${c.status}`);
      const parts = [el("p", { text: `${t("claim_n", { n: c.id })} · ${about} · ${status}` }), el("p", { class: "claim-text", text: c.text })];
      if (c.ruling) parts.push(el("p", { class: "hint", text: t("claim_ruling", { reason: c.ruling }) }));
      if (this.role === "arbiter" && c.status === "open") {
        const reason = el("input", { type: "text", id: `claim-${c.id}-reason`, maxlength: "500" });
        const warn = el("input", { type: "checkbox", id: `claim-${c.id}-warn` });
        const rule = (upheld) => this.act({ type: "resolve_claim", claim: c.id, upheld, warn: upheld && warn.checked, reason: reason.value.trim() });
        parts.push(
          el("div", { class: "field" }, [el("label", { for: reason.id, text: t("field_reason") }), reason]),
          el("div", { class: "field check" }, [warn, el("label", { for: warn.id, text: t("claim_warn", { who: name(c.seat === "p1" ? "p2" : "p1") }) })]),
          el("div", { class: "row" }, [
            el("button", { type: "button", class: "primary", id: `claim-${c.id}-uphold`, text: t("claim_uphold"), onclick: () => rule(true) }),
            el("button", { type: "button", class: "secondary", id: `claim-${c.id}-reject`, text: t("claim_reject"), onclick: () => rule(false) }),
          ]),
        );
      }
      return el("li", { class: `claim ${c.status}`, id: `claim-${c.id}` }, parts);
    };
    this.el.claims.replaceChildren(...(claims.length ? claims.map(item) : [el("li", { class: "empty", text: t("no_claims") })]));
  }

  /** The tab's title says whose turn it is, so that a player in another tab sees it. */
  paintTitle() {
    const s = this.model;
    if (!s) return;
    const match = `${t(`game_${s.game}`)}: ${playerName(s, "p1")} – ${playerName(s, "p2")}`;
    const pos = s.position || {};
    const mover = pos.awaiting_press || pos.to_move;
    let now = "";
    if (s.status === "finished") now = t("title_over");
    else if (s.status === "playing" && mover) now = this.role === "player" && mover === this.you ? t("title_your_turn") : t("title_to_move", { who: playerName(s, mover) });
    document.title = now ? `${now} · ${match} — hakem` : `${match} — hakem`;
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
      const low = ms !== null && ms < 30000 && s.status === "playing";
      node.classList.toggle("low", low);
      // Once a set, when the reader's own clock runs low.
      if (low && running && seat === this.you && !this.lowSaid) {
        this.lowSaid = true;
        play("low");
      }
      node.setAttribute("aria-label", `${t("clock_of", { name: playerName(s, seat) })}: ${ms === null ? t("untimed") : clockWords(ms)}`);
    }
  }

  paintBoard() {
    const s = this.model;
    const board = this.board;
    if (!board) return;
    const pos = s.position || {};
    const view = { ...boardView(s), legal: this.legalSets() };
    if (s.game === "pentago") {
      view.canTurn = this.role === "player" && !!pos.pending && pos.pending.seat === this.you && !pos.pending.quadrant;
      view.selectedQuadrant = this.selectedQuadrant;
    } else if (s.game === "quoridor") {
      view.mode = this.mode;
      for (const button of main.querySelectorAll(".modes .mode")) button.setAttribute("aria-pressed", String(button.dataset.mode === this.mode));
    }
    board.update(view);
    main.querySelector("#board-facts").textContent = boardFacts(s);
  }
}

function describeRoundResult(s) {
  const r = s.round;
  const score = `${points(r.set_points?.p1)}–${points(r.set_points?.p2)}`;
  if (r.winner === "draw") return t("say_round_drawn", { how: reasonWords(r.reason), score });
  return t("say_round_won", { who: playerName(s, r.winner), how: reasonWords(r.reason), score });
}

