// Moves, events and errors in words, for the live region, the log and the error box.

import { lang, t } from "./i18n.js";
import { parsePentagoMove } from "./board.js";

/** The seat that moves first in the current set (p1 in sets 1 and 3). */
export function firstMover(state) {
  return state?.position?.first_mover || (state?.set % 2 === 0 ? "p2" : "p1");
}

/** A seat's colour word in the current set, as the server gives it (null in Quoridor). */
export function seatColour(state, seat) {
  const colour = state?.colours?.[seat];
  return colour ? t(colour) : null;
}

/** The colour word of a side of the current set: its first mover or the other seat. */
export function sideColour(state, side) {
  const first = firstMover(state);
  return seatColour(state, side === "first" ? first : first === "p1" ? "p2" : "p1");
}

/**
 * The colour of a side in the first set of a game not yet created (forms, column heads):
 * Pentago's first mover is black, Pente's White. In a match, `seatColour` reads the server's.
 */
export function firstSetColour(game, side) {
  if (game === "pentago") return t(side === "first" ? "black" : "white");
  if (game === "pente") return t(side === "first" ? "white" : "black");
  return null;
}

/** What moving first or second in the first set means: a colour, or Quoridor's start. */
export function sideWords(game, side) {
  const colour = firstSetColour(game, side);
  if (colour) return colour;
  if (game === "quoridor") return t(side === "first" ? "starts_e1" : "starts_e9");
  return null;
}

/** The server's names for an unnamed seat (protocol.md), said in the viewer's language. */
const DEFAULT_NAMES = { p1: "Player 1", p2: "Player 2" };

export function playerName(state, seat) {
  const name = state?.players?.[seat]?.name;
  if (!name || name === DEFAULT_NAMES[seat]) return t(seat === "p1" ? "player_1" : "player_2");
  return name;
}

/** How a seat is called in a move: its colour in Pentago and Pente, its name in Quoridor. */
export function moverWord(state, seat) {
  return seatColour(state, seat) || playerName(state, seat);
}

/** A whole move in words: "Black d4, north-east turned clockwise". */
export function describeMove(state, seat, mv) {
  const who = moverWord(state, seat);
  if (state.game === "pentago") {
    const m = parsePentagoMove(mv);
    if (!m) return `${who} ${mv}`;
    if (!m.quadrant) return t("say_pentago_place", { who, cell: m.cell });
    return t("say_pentago_move", {
      who,
      cell: m.cell,
      quadrant: t(`q_${m.quadrant}`),
      dir: t(`turned_${m.dir}`),
    });
  }
  if (state.game === "quoridor") {
    const wall = /^([a-h][1-8])([hv])$/.exec(mv);
    if (wall) return t("say_wall", { who, at: wall[1], orientation: t(wall[2] === "h" ? "horizontal" : "vertical") });
    return t("say_pawn", { who, cell: mv });
  }
  return t("say_stone", { who, cell: mv });
}

export function reasonWords(reason) {
  const key = `reason_${reason}`;
  const text = t(key);
  return text === key ? reason : text;
}

/** The score of the round, "1½–½". */
export function points(value) {
  const n = Number(value) || 0;
  const whole = Math.floor(n);
  const half = n - whole >= 0.5;
  if (!half) return String(whole);
  return whole === 0 ? "½" : `${whole}½`;
}

export function describeSetEnd(state, e) {
  // `state` is from before the event: add this set's points.
  const sp = { p1: Number(state.set_points?.p1) || 0, p2: Number(state.set_points?.p2) || 0 };
  if (e.winner) sp[e.winner] += 1;
  else {
    sp.p1 += 0.5;
    sp.p2 += 0.5;
  }
  const score = t("score_words", {
    p1: playerName(state, "p1"),
    a: points(sp.p1),
    p2: playerName(state, "p2"),
    b: points(sp.p2),
  });
  const how = reasonWords(e.reason);
  if (!e.winner) return `${t("say_set_drawn", { set: e.set, how })} ${score}`;
  return `${t("say_set_won", { set: e.set, who: playerName(state, e.winner), how })} ${score}`;
}

export function describeRoundEnd(state, e) {
  const how = reasonWords(e.reason);
  const score = `${points(e.set_points?.p1)}–${points(e.set_points?.p2)}`;
  if (e.winner === "draw") return t("say_round_drawn", { how, score });
  return t("say_round_won", { who: playerName(state, e.winner), how, score });
}

/**
 * An event in words, or null for one that needs no announcement. `state` is the state before
 * the event (names, colours). `context.skipMoved` is set once a placed/rotated pair has been
 * announced, so that the `moved` that follows is not said twice.
 */
export function describeEvent(state, e, context = {}) {
  switch (e.kind) {
    case "set_started":
      return t("say_set_started", {
        set: e.set,
        who: playerName(state, e.first_mover),
        colour: e.colours?.[e.first_mover] ? `, ${t(e.colours[e.first_mover])}` : "",
      });
    case "placed":
      return t("say_pentago_place", { who: moverWord(state, e.seat), cell: e.cell });
    case "rotated": {
      const cell = state.position?.pending?.cell;
      const mv = cell ? `${cell}${e.quadrant}${e.dir === "ccw" ? "'" : ""}` : null;
      if (mv) return describeMove(state, e.seat, mv);
      return t("say_turned", { who: moverWord(state, e.seat), quadrant: t(`q_${e.quadrant}`), dir: t(`turned_${e.dir}`) });
    }
    case "moved":
      if (context.skipMoved) return null;
      return describeMove(state, e.seat, e.move);
    case "pressed":
      return t("say_pressed", { who: moverWord(state, e.seat) });
    case "set_ended":
      return describeSetEnd(state, e);
    case "warning":
      return t("say_warning", {
        who: playerName(state, e.seat),
        count: e.count,
        limit: state.warnings_limit ?? 3,
        reason: e.reason ? `: ${e.reason}` : "",
      });
    case "round_ended":
      return describeRoundEnd(state, e);
    case "paused":
      return t("say_paused");
    case "resumed":
      return t("say_resumed");
    case "clock_adjusted": {
      const seconds = Math.round(Math.abs(e.delta_ms) / 1000);
      return t(e.delta_ms >= 0 ? "say_clock_plus" : "say_clock_minus", {
        who: playerName(state, e.seat),
        seconds,
      });
    }
    case "claim":
      return t("say_claim", { who: playerName(state, e.seat), text: e.text });
    case "claim_resolved":
      return t(e.upheld ? "say_claim_upheld" : "say_claim_rejected", { n: e.claim, reason: e.reason ? `: ${e.reason}` : "" });
    case "player_connected":
      return t("say_connected", { who: playerName(state, e.seat) });
    case "player_disconnected":
      return t("say_disconnected", { who: playerName(state, e.seat) });
    case "ready":
      return t("say_ready", { who: playerName(state, e.seat) });
    case "declared":
      return t("say_declared", {
        scope: t(e.scope === "set" ? "the_set" : "the_round"),
        winner: e.winner === "draw" ? t("a_draw") : playerName(state, e.winner),
        reason: e.reason ? `: ${e.reason}` : "",
      });
    case "draw_offered":
      return t("say_draw_offered", { who: playerName(state, e.seat) });
    case "draw_declined":
      return t("say_draw_declined", { who: playerName(state, e.seat) });
    default:
      return null;
  }
}

/** A server error in plain words. */
export function describeError(error, game) {
  const code = error?.code || "internal";
  if (code === "illegal_move" && error.rule) {
    const key = `rule_${error.rule}`;
    const text = t(key);
    if (text !== key) return text;
  }
  if (code === "move_incomplete") return t(game === "pentago" ? "err_move_incomplete_pentago" : "err_move_incomplete");
  const key = `err_${code}`;
  const text = t(key, { message: error?.message || "" });
  if (text !== key) return text;
  return t("err_other", { message: error?.message || code });
}

/** m:ss, or m:ss.t under ten seconds; h:mm:ss past an hour. */
export function formatClock(ms) {
  ms = Math.max(0, ms);
  if (ms < 10000) {
    const tenths = Math.floor(ms / 100);
    return `0:0${Math.floor(tenths / 10)}.${tenths % 10}`;
  }
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/** The time in words for the live region: "4 minutes 32 seconds". */
export function clockWords(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(total / 60);
  const s = total % 60;
  if (m === 0) return t("n_seconds", { n: s });
  if (s === 0) return t("n_minutes", { n: m });
  return t("n_minutes_seconds", { m, s });
}

// ---------------------------------------------------------------------------------------------
// Tournaments

/** The i18n key of a tie-break code: `BH-C1` -> `bh_c1`. */
const tiebreakKey = (code) => String(code).toLowerCase().replace(/[^a-z0-9]+/g, "_");

/** A tie-break's full name ("Buchholz Cut 1"), or its code when the page does not know it. */
export function tiebreakName(code) {
  const key = `tb_${tiebreakKey(code)}`;
  const text = t(key);
  return text === key ? code : text;
}

/** What a tie-break counts, in a few words, or "" when the page does not know it. */
export function tiebreakHint(code) {
  const key = `tb_${tiebreakKey(code)}_hint`;
  const text = t(key);
  return text === key ? "" : text;
}

/** A tie-break value: whole numbers as they are, fractions with up to two decimals. */
export function tiebreakValue(value) {
  const n = Number(value);
  if (!Number.isFinite(n)) return "—";
  return new Intl.NumberFormat(lang() === "tr" ? "tr-TR" : "en-GB", { maximumFractionDigits: 2 }).format(n);
}

/** A board's result ("1-0", "1/2-1/2", the forfeits "+-", "-+", "--") in words; null: playing. */
export function boardResult(result) {
  switch (result) {
    case null:
    case undefined:
      return t("result_playing");
    case "1-0":
      return "1–0";
    case "0-1":
      return "0–1";
    case "1/2-1/2":
      return "½–½";
    case "+-":
      return t("result_forfeit_1_0");
    case "-+":
      return t("result_forfeit_0_1");
    case "--":
      return t("result_forfeit_both");
    default:
      return result;
  }
}

/** "1 point", "½ point", "0 points". */
export function pointsWords(value) {
  const n = Number(value) || 0;
  return t(n === 1 || n === 0.5 ? "one_point" : "n_points", { n: points(n) });
}

/** Why a player has no board in a round: the bye's kind in words. */
export function byeWords(kind) {
  const key = `bye_${kind}`;
  const text = t(key);
  return text === key ? kind : text;
}

/** A tournament's status in a word: registration, in play, finished. */
export function tournamentStatus(status) {
  return t(`tstatus_${status}`);
}

/** How far behind spectators see a match (`spectator_delay`): "60 s and 2 moves". */
export function delayWords(delay) {
  const parts = [];
  if (delay?.seconds) parts.push(t("delay_seconds", { n: delay.seconds }));
  if (delay?.moves) parts.push(t(delay.moves === 1 ? "delay_move" : "delay_moves", { n: delay.moves }));
  return parts.length === 2 ? t("delay_both", { a: parts[0], b: parts[1] }) : parts[0] || "";
}
