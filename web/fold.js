// The one fold of a match: a `state` kept up to date by the event frames that follow it,
// exactly as the protocol crate's `MatchState::apply` (protocol/src/fold.rs) does for the
// terminal client and the bots. It needs no rules: every event that changes the position
// carries the board (the `boards` extension), which is copied, never worked out.

/**
 * Folds one event frame into `state` (in place). Returns "applied", "repeated" (an event
 * already in the state, or another match's) or "gap" (an event after a missing one: the state
 * is unchanged and the client should ask for what it missed with `since_seq`).
 */
export function fold(state, frame) {
  if (frame.match !== state.match || frame.seq <= state.seq) return "repeated";
  if (frame.seq !== state.seq + 1) return "gap";
  state.seq = frame.seq;
  state.clocks = frame.clocks ?? null;
  const e = frame.event || {};
  const pos = state.position || (state.position = {});
  if (!["player_connected", "player_disconnected", "ready", "claim", "claim_resolved", "warning", "draw_offered", "draw_declined"].includes(e.kind)) {
    // Whose turn it is changes: the legal moves of the last `state` no longer hold.
    delete pos.legal_moves;
  }
  const player = (seat) => state.players?.[seat] || {};
  switch (e.kind) {
    case "set_started":
      state.set = e.set;
      state.status = "playing";
      state.paused = false;
      player("p1").ready = false;
      player("p2").ready = false;
      pos.to_move = e.first_mover;
      pos.first_mover = e.first_mover;
      pos.moves = [];
      pos.pending = null;
      pos.awaiting_press = null;
      pos.board = e.board ?? null;
      if (e.colours) state.colours = e.colours;
      break;
    case "placed":
      pos.pending = { seat: e.seat, cell: e.cell };
      if (e.board) pos.board = e.board;
      break;
    case "rotated":
      if (pos.pending) Object.assign(pos.pending, { quadrant: e.quadrant, dir: e.dir });
      break;
    case "moved":
      // Moving answers the opponent's draw offer: no. The mover's own offer stands.
      if (state.draw_offer && state.draw_offer !== e.seat) delete state.draw_offer;
      pos.moves = [...(pos.moves || []), e.move];
      pos.pending = null;
      // The mover still has to press; a move that ends the set is followed by `set_ended`.
      pos.awaiting_press = e.seat;
      pos.to_move = e.seat;
      if (e.board) pos.board = e.board;
      break;
    case "pressed":
      pos.awaiting_press = null;
      pos.to_move = e.seat === "p1" ? "p2" : "p1";
      break;
    case "set_ended": {
      const sp = (state.set_points = { ...(state.set_points || { p1: 0, p2: 0 }) });
      if (e.winner) sp[e.winner] = (sp[e.winner] || 0) + 1;
      else {
        sp.p1 = (sp.p1 || 0) + 0.5;
        sp.p2 = (sp.p2 || 0) + 0.5;
      }
      const { kind, ...result } = e;
      delete state.draw_offer;
      state.sets = [...(state.sets || []), result];
      state.status = "between_sets";
      state.paused = false;
      pos.to_move = null;
      pos.pending = null;
      pos.awaiting_press = null;
      break;
    }
    case "warning":
      state.warnings = { ...(state.warnings || {}), [e.seat]: e.count };
      break;
    case "round_ended": {
      const { kind, ...result } = e;
      delete state.draw_offer;
      state.set_points = result.set_points;
      state.round = result;
      state.status = "finished";
      state.paused = false;
      pos.to_move = null;
      pos.pending = null;
      pos.awaiting_press = null;
      break;
    }
    case "expired":
      state.status = "finished";
      state.expired = true;
      break;
    case "paused":
      state.paused = true;
      break;
    case "resumed":
      state.paused = false;
      break;
    case "player_connected":
      player(e.seat).connected = true;
      break;
    case "player_disconnected":
      player(e.seat).connected = false;
      break;
    case "ready":
      player(e.seat).ready = true;
      break;
    case "claim":
      // Only a reader who is shown the claims (the arbiter, the players) keeps them.
      if (state.claims) {
        state.claims.push({ id: e.id ?? state.claims.length + 1, seat: e.seat, text: e.text, set: e.set ?? state.set, ply: e.ply ?? (pos.moves?.length || 0), status: "open" });
      }
      break;
    case "claim_resolved": {
      const claim = state.claims?.find((c) => c.id === e.claim);
      if (claim) {
        claim.status = e.upheld ? "upheld" : "rejected";
        claim.ruling = e.reason;
      }
      break;
    }
    case "draw_offered":
      state.draw_offer = e.seat;
      break;
    case "draw_declined":
      delete state.draw_offer;
      break;
    default:
      // clock_adjusted, declared, and kinds a newer server adds: nothing to fold
      // (the clocks came with the frame).
      break;
  }
  return "applied";
}
