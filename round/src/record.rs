//! The game record of a match (see `hakem_games::record`), built from its event log.

use hakem_games::record::{Block, Record, RecordedMove};
use hakem_protocol::{Event, EventFrame, Seat, ServerMessage, StoneColour};

use crate::round::MatchConfig;

fn title(game: &str) -> String {
    let mut chars = game.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The record of match `id`, from its event frames in order.
pub fn record_of(id: &str, config: &MatchConfig, frames: &[String]) -> Record {
    let game = title(config.game.as_str());
    let clock = config.clock.map_or("-".to_string(), |c| {
        format!("{}+{}", c.initial_ms, c.increment_ms)
    });
    let mut sets: Vec<Block> = Vec::new();
    let mut round = Block::default();
    round.set_tag("Game", game.clone());
    round.set_tag("Variant", config.variant);
    round.set_tag("Match", id);
    round.set_tag("P1", config.players.p1.clone());
    round.set_tag("P2", config.players.p2.clone());
    let mut set_no = 0;
    let mut finished = false;
    for text in frames {
        let Ok(ServerMessage::Event(frame)) = serde_json::from_str::<ServerMessage>(text) else {
            continue;
        };
        let EventFrame { event, clocks, .. } = *frame;
        let note_prefix = if set_no == 0 {
            String::new()
        } else {
            format!("set {set_no}: ")
        };
        match event {
            Event::SetStarted {
                set, first_mover, ..
            } => {
                set_no = set;
                let mut block = Block::default();
                block.set_tag("Game", game.clone());
                block.set_tag("Variant", config.variant);
                block.set_tag("Match", id);
                block.set_tag("Set", set.to_string());
                block.set_tag("FirstMover", first_mover.as_str());
                block.set_tag("P1", config.players.p1.clone());
                block.set_tag("P2", config.players.p2.clone());
                block.set_tag("First", config.players.get(first_mover).clone());
                block.set_tag("Second", config.players.get(first_mover.other()).clone());
                // PGN's own colour tags, as the colours are in this set (rules.md section 2).
                if let Some(colours) =
                    hakem_protocol::seat_colours(config.game.as_str(), Some(first_mover))
                {
                    for seat in Seat::BOTH {
                        let tag = match colours.get(seat) {
                            StoneColour::Black => "Black",
                            StoneColour::White => "White",
                        };
                        block.set_tag(tag, config.players.get(seat).clone());
                    }
                }
                block.set_tag("Clock", clock.clone());
                sets.push(block);
            }
            Event::Moved { mv, .. } => {
                if let Some(block) = sets.last_mut() {
                    block.moves.push(RecordedMove {
                        notation: mv,
                        clock_ms: None,
                    });
                }
            }
            Event::Pressed { seat } => {
                if let (Some(block), Some(clocks)) = (sets.last_mut(), clocks) {
                    if let Some(last) = block.moves.last_mut() {
                        last.clock_ms = Some(clocks.remaining(seat));
                    }
                }
            }
            Event::SetEnded(result) => {
                if let Some(block) = sets.last_mut() {
                    block.set_tag("Result", result.result.as_str());
                    block.set_tag("Reason", result.reason.as_str());
                    block.set_tag("Winner", result.winner.map_or("draw", Seat::as_str));
                    block.result = Some(result.result.to_string());
                }
            }
            Event::RoundEnded(result) => {
                finished = true;
                round.set_tag("RoundWinner", format!("{:?}", result.winner).to_lowercase());
                round.set_tag("RoundReason", result.reason.as_str());
                round.set_tag(
                    "SetPoints",
                    format!(
                        "{}-{}",
                        result.set_points.p1.as_f64(),
                        result.set_points.p2.as_f64()
                    ),
                );
                round.set_tag(
                    "Points",
                    format!(
                        "{}-{}",
                        result.points.p1.as_f64(),
                        result.points.p2.as_f64()
                    ),
                );
            }
            Event::Warning {
                seat,
                count,
                reason,
            } => round
                .notes
                .push(format!("{note_prefix}warning {seat} {count}: {reason}")),
            Event::Declared {
                scope,
                winner,
                reason,
            } => round.notes.push(format!(
                "{note_prefix}arbiter declared the {} to {}: {reason}",
                format!("{scope:?}").to_lowercase(),
                format!("{winner:?}").to_lowercase()
            )),
            Event::Paused => round.notes.push(format!("{note_prefix}clocks paused")),
            Event::Resumed => round.notes.push(format!("{note_prefix}clocks resumed")),
            Event::ClockAdjusted { seat, delta_ms } => round.notes.push(format!(
                "{note_prefix}clock of {seat} adjusted by {delta_ms} ms"
            )),
            Event::Expired => round
                .notes
                .push("expired: nobody played the match".to_string()),
            Event::Claim {
                seat,
                text,
                id,
                ply,
                ..
            } => {
                let about = match (id, ply) {
                    (Some(id), Some(ply)) => format!(" {id} (ply {ply})"),
                    _ => String::new(),
                };
                round
                    .notes
                    .push(format!("{note_prefix}claim{about} by {seat}: {text}"))
            }
            Event::ClaimResolved {
                claim,
                upheld,
                reason,
            } => round.notes.push(format!(
                "{note_prefix}claim {claim} {}: {reason}",
                if upheld { "upheld" } else { "rejected" }
            )),
            Event::DrawOffered { seat } => round
                .notes
                .push(format!("{note_prefix}draw offered by {seat}")),
            Event::DrawDeclined { seat } => round
                .notes
                .push(format!("{note_prefix}draw declined by {seat}")),
            _ => {}
        }
    }
    if !finished {
        round.set_tag("RoundWinner", "*");
    }
    sets.push(round);
    Record { blocks: sets }
}
