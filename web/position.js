// What a board shows of a match's state, for `board.update`: the position in colours, the
// marks in words and the last move. The live match page adds what a player can do (legal
// cells, turns); the replay shows it as it is.

import { t } from "./i18n.js";
import { parsePentagoMove } from "./board.js";
import { firstMover, playerName } from "./words.js";
import { other } from "./ui.js";

export function boardView(s) {
  const pos = s.position || {};
  const first = firstMover(s);
  const moves = pos.moves || [];
  const lastMv = moves[moves.length - 1] || null;
  const toMoveWord = s.status === "playing" && pos.to_move ? `, ${t("to_move_word", { who: playerName(s, pos.awaiting_press || pos.to_move) })}` : "";
  if (s.game === "pentago") {
    // The board marks the set's first mover `x`; it is drawn in colours, and white moves
    // first in set 2 (the stones stay with the seats).
    const whiteFirst = s.colours?.[first] === "white";
    const rows = whiteFirst ? pos.board?.rows?.map((row) => row.replace(/[xo]/g, (m) => (m === "x" ? "o" : "x"))) : pos.board?.rows;
    return {
      label: t("board_label_pentago") + toMoveWord,
      rows,
      marks: { x: t("marble_of", { colour: t("black") }), o: t("marble_of", { colour: t("white") }) },
      lastMove: pos.pending ? null : parsePentagoMove(lastMv),
      pending: pos.pending,
      clockwiseOnly: s.variant === "tr",
    };
  }
  if (s.game === "quoridor") {
    return {
      label: t("board_label_quoridor") + toMoveWord,
      pawns: pos.board?.pawns,
      walls: pos.board?.walls,
      names: { first: playerName(s, first), second: playerName(s, other(first)) },
      lastMove: lastMv,
    };
  }
  return {
    label: t("board_label_pente") + toMoveWord,
    rows: pos.board?.rows,
    marks: { x: t("stone_of", { colour: t("white") }), o: t("stone_of", { colour: t("black") }) },
    lastMove: lastMv,
  };
}

/** The line under the board: the rules in short, or the walls and captures left. */
export function boardFacts(s) {
  const board = s.position?.board || {};
  if (s.game === "pentago") return s.variant === "tr" ? t("facts_pentago_tr") : t("facts_pentago_classic");
  if (s.game === "quoridor") {
    const first = firstMover(s);
    const left = board.walls_left || {};
    return t("facts_quoridor", { a: playerName(s, first), n: left.first ?? 0, b: playerName(s, other(first)), m: left.second ?? 0 });
  }
  const caps = board.captures || {};
  return t("facts_pente", { a: caps.first ?? 0, b: caps.second ?? 0 });
}
