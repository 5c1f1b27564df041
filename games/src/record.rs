//! Game records: a PGN-like text form of a round, one block per set and a closing block for the
//! round, and the check that a record is a legal, correctly scored game.
//!
//! ```text
//! [Game "Pentago"]
//! [Variant "tr"]
//! [Match "k3m9x2ta7qpd"]
//! [Set "1"]
//! [FirstMover "p1"]
//! [P1 "Ayşe Yılmaz"]
//! [P2 "Bora Kaya"]
//! [First "Ayşe Yılmaz"]
//! [Second "Bora Kaya"]
//! [Black "Ayşe Yılmaz"]
//! [White "Bora Kaya"]
//! [Clock "900000+0"]
//! [Result "1-0"]
//! [Reason "five"]
//!
//! 1. b1sw {899120} e5sw {898002} 2. f6sw {897551} ... 16. f2sw 1-0
//!
//! [Game "Pentago"]
//! [Match "k3m9x2ta7qpd"]
//! [RoundWinner "p1"]
//! [RoundReason "sets"]
//! [SetPoints "2-0"]
//! [Points "1-0"]
//! [Warnings "0-1"]
//! {warning p2 1: noise}
//! ```
//!
//! Each move may be followed by `{N}`: the mover's clock, in milliseconds, after the press.
//! Blocks are separated by blank lines; a block with a `Set` tag is a set, a block with a
//! `RoundWinner` tag closes the round, and `{...}` lines in it note the arbiter's acts.

use std::fmt::{self, Write as _};

use crate::{AnyPosition, GameKind};

/// One recorded move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedMove {
    pub notation: String,
    /// The mover's clock after the press, in milliseconds.
    pub clock_ms: Option<u64>,
}

/// One block of tags with its moves (sets) or notes (the round).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block {
    pub tags: Vec<(String, String)>,
    pub moves: Vec<RecordedMove>,
    /// The result token at the end of the moves (`1-0`, `0-1`, `1/2-1/2`, `*`).
    pub result: Option<String>,
    /// `{...}` notes (the arbiter's acts in the round block).
    pub notes: Vec<String>,
}

impl Block {
    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn set_tag(&mut self, key: &str, value: impl Into<String>) {
        self.tags.push((key.to_string(), value.into()));
    }

    pub fn is_set(&self) -> bool {
        self.tag("Set").is_some()
    }
}

/// A whole record: the sets in order, then the round.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub blocks: Vec<Block>,
}

/// A record that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for RecordError {}

/// What checking one set found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetCheck {
    pub set: String,
    pub plies: usize,
    pub result: String,
    pub reason: String,
    /// `None` when the set is consistent; otherwise what is wrong.
    pub problem: Option<String>,
}

const BOARD_REASONS: [&str; 7] = [
    "five",
    "double_five",
    "opponent_five",
    "full_board",
    "goal",
    "captures",
    "move_limit",
];

impl Record {
    /// Reads a record.
    pub fn parse(text: &str) -> Result<Record, RecordError> {
        let mut blocks = Vec::new();
        let mut block = Block::default();
        let mut in_moves = false;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let line = raw.trim();
            let err = |message: String| RecordError {
                line: line_no,
                message,
            };
            if line.is_empty() {
                continue;
            }
            if line.starts_with('[') {
                if in_moves {
                    blocks.push(std::mem::take(&mut block));
                    in_moves = false;
                }
                let (key, value) = parse_tag(line).ok_or_else(|| {
                    err(format!("a tag is written [Key \"value\"], not {line:?}"))
                })?;
                block.tags.push((key, value));
                continue;
            }
            if block.tags.is_empty() {
                return Err(err("moves before any tag".into()));
            }
            in_moves = true;
            read_movetext(line, &mut block).map_err(err)?;
        }
        if !block.tags.is_empty() {
            blocks.push(block);
        }
        if blocks.is_empty() {
            return Err(RecordError {
                line: 0,
                message: "the record is empty".into(),
            });
        }
        Ok(Record { blocks })
    }

    /// The sets, in order.
    pub fn sets(&self) -> impl Iterator<Item = &Block> {
        self.blocks.iter().filter(|b| b.is_set())
    }

    /// The round's closing block, if present.
    pub fn round(&self) -> Option<&Block> {
        self.blocks.iter().find(|b| b.tag("RoundWinner").is_some())
    }

    /// Replays every set and checks its moves, result and reason.
    pub fn verify(&self) -> Vec<SetCheck> {
        self.sets().map(verify_set).collect()
    }

    /// The text form.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (i, block) in self.blocks.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            for (key, value) in &block.tags {
                let value = value.replace('\\', "\\\\").replace('"', "\\\"");
                let _ = writeln!(out, "[{key} \"{value}\"]");
            }
            for note in &block.notes {
                let _ = writeln!(out, "{{{}}}", note.replace(['{', '}'], ""));
            }
            if block.is_set() {
                out.push('\n');
                let mut line = String::new();
                for (ply, mv) in block.moves.iter().enumerate() {
                    if ply % 2 == 0 {
                        let _ = write!(line, "{}. ", ply / 2 + 1);
                    }
                    line.push_str(&mv.notation);
                    if let Some(ms) = mv.clock_ms {
                        let _ = write!(line, " {{{ms}}}");
                    }
                    line.push(' ');
                    if line.len() > 80 {
                        out.push_str(line.trim_end());
                        out.push('\n');
                        line.clear();
                    }
                }
                line.push_str(block.result.as_deref().unwrap_or("*"));
                out.push_str(&line);
                out.push('\n');
            }
        }
        out
    }
}

fn parse_tag(line: &str) -> Option<(String, String)> {
    let inner = line.strip_prefix('[')?.strip_suffix(']')?;
    let (key, rest) = inner.split_once(' ')?;
    let value = rest.trim().strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.push(chars.next()?);
        } else {
            out.push(c);
        }
    }
    (!key.is_empty()).then(|| (key.to_string(), out))
}

fn read_movetext(line: &str, block: &mut Block) -> Result<(), String> {
    let mut rest = line;
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        rest = &rest[start..];
        if let Some(comment) = rest.strip_prefix('{') {
            let end = comment
                .find('}')
                .ok_or_else(|| "a comment { ... } is not closed".to_string())?;
            let text = comment[..end].trim();
            match (text.parse::<u64>(), block.moves.last_mut()) {
                (Ok(ms), Some(last)) if last.clock_ms.is_none() => last.clock_ms = Some(ms),
                _ => block.notes.push(text.to_string()),
            }
            rest = &comment[end + 1..];
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let token = &rest[..end];
        rest = &rest[end..];
        if ["1-0", "0-1", "1/2-1/2", "*"].contains(&token) {
            block.result = Some(token.to_string());
        } else if token.ends_with('.')
            && token[..token.len() - 1].chars().all(|c| c.is_ascii_digit())
        {
            // A move number.
        } else if token
            .chars()
            .all(|c| c.is_ascii_graphic() && !"[]{}\"".contains(c))
        {
            block.moves.push(RecordedMove {
                notation: token.to_string(),
                clock_ms: None,
            });
        } else {
            // Brackets and quotes are the record's own syntax: a "move" holding them would be
            // written back as a tag or a comment.
            return Err(format!(
                "a move is written in the game's notation, not {token:?}"
            ));
        }
    }
    Ok(())
}

fn verify_set(block: &Block) -> SetCheck {
    let set = block.tag("Set").unwrap_or("?").to_string();
    let result = block
        .tag("Result")
        .or(block.result.as_deref())
        .unwrap_or("*")
        .to_string();
    let reason = block.tag("Reason").unwrap_or("").to_string();
    let check = |problem: Option<String>| SetCheck {
        set: set.clone(),
        plies: block.moves.len(),
        result: result.clone(),
        reason: reason.clone(),
        problem,
    };
    let Some(game) = block.tag("Game") else {
        return check(Some("no Game tag".into()));
    };
    let kind: GameKind = match game.parse() {
        Ok(kind) => kind,
        Err(e) => return check(Some(format!("{e}"))),
    };
    let mut position = match AnyPosition::new(kind, block.tag("Variant")) {
        Ok(position) => position,
        Err(e) => return check(Some(e.to_string())),
    };
    if let Some(token) = &block.result {
        if *token != result {
            return check(Some(format!(
                "the Result tag says {result} but the moves end with {token}"
            )));
        }
    }
    for (ply, mv) in block.moves.iter().enumerate() {
        if position.outcome().is_some() {
            return check(Some(format!(
                "move {} ({}) comes after the end of the game",
                ply + 1,
                mv.notation
            )));
        }
        if let Err(e) = position.play_str(&mv.notation) {
            return check(Some(format!(
                "move {} ({}) is refused: {e}",
                ply + 1,
                mv.notation
            )));
        }
    }
    let problem = match (position.outcome(), BOARD_REASONS.contains(&reason.as_str())) {
        (Some(outcome), true)
            if outcome.result() == result && outcome.reason.as_str() == reason =>
        {
            None
        }
        (Some(outcome), _) => Some(format!(
            "the board gives {} by {}, the record says {result} by {reason}",
            outcome.result(),
            outcome.reason
        )),
        (None, true) => Some(format!(
            "the record says {result} by {reason}, but the game is not over on the board"
        )),
        // Time, resignation and the arbiter end a game the board has not decided.
        (None, false) if ["time", "resign", "arbiter"].contains(&reason.as_str()) => None,
        (None, false) if result == "*" => None,
        (None, false) => Some(format!("unknown reason {reason:?}")),
    };
    check(problem)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Record {
        let mut set = Block::default();
        set.set_tag("Game", "Pentago");
        set.set_tag("Variant", "classic");
        set.set_tag("Set", "1");
        set.set_tag("P1", "Ayşe \"the wall\" Yılmaz");
        set.set_tag("Result", "1-0");
        set.set_tag("Reason", "five");
        for mv in "c1nw a6se' e6ne f4nw a1se' e6nw f6ne' b4se d1sw' c2se' f3ne' b1se e1se"
            .split_whitespace()
        {
            set.moves.push(RecordedMove {
                notation: mv.into(),
                clock_ms: Some(890_000),
            });
        }
        set.moves.last_mut().unwrap().clock_ms = None;
        set.result = Some("1-0".into());
        let mut round = Block::default();
        round.set_tag("Game", "Pentago");
        round.set_tag("RoundWinner", "p1");
        round.notes.push("warning p2 1: noise".into());
        Record {
            blocks: vec![set, round],
        }
    }

    #[test]
    fn text_round_trips() {
        let record = sample();
        let text = record.to_text();
        assert_eq!(Record::parse(&text).unwrap(), record, "{text}");
    }

    #[test]
    fn a_correct_record_verifies() {
        let checks = sample().verify();
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].problem, None, "{checks:?}");
        assert_eq!(checks[0].plies, 13);
    }

    #[test]
    fn a_wrong_result_or_move_is_found() {
        let mut record = sample();
        record.blocks[0].tags.retain(|(k, _)| k != "Result");
        record.blocks[0].set_tag("Result", "0-1");
        record.blocks[0].result = Some("0-1".into());
        assert!(record.verify()[0]
            .problem
            .as_deref()
            .unwrap()
            .contains("board gives 1-0"));

        let mut record = sample();
        record.blocks[0].moves[3].notation = "c1nw".into();
        assert!(record.verify()[0]
            .problem
            .as_deref()
            .unwrap()
            .contains("move 4"));
    }

    #[test]
    fn garbage_is_an_error_with_a_line_number() {
        let moves = "[Game \"Pentago\"]\n[Set \"1\"]\n\n1. b1sw [P2 \"x\"]\n";
        let err = Record::parse(moves).unwrap_err();
        assert_eq!(err.line, 4, "{err:?}");
        assert!(err.message.contains("notation"), "{err:?}");
        let err = Record::parse("[Game \"Pentago\"]\n[Broken\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(Record::parse("").is_err());
        assert!(Record::parse("1. d4ne").is_err());
    }
}
