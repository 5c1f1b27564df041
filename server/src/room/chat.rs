//! A match's chat, kept by its room: two channels (the players' and the spectators'), the
//! arbiter's switch and mutes, and the limits that keep it small: a message's length, a
//! member's pace, a match's total. Every message is stored before anyone reads it.

use std::collections::VecDeque;

use hakem_protocol::{ChatChannel, ChatLine, ChatMute, Seat, MAX_CHAT_CHARS};
use tokio::time::Instant;

use super::Role;

/// Messages a room keeps in memory and shows a member who comes in.
pub const RECENT: usize = 100;
/// Messages one match may have in all.
pub const MAX_LINES: u64 = 5_000;
/// Seats and accounts one match may have muted.
pub const MAX_MUTES: usize = 200;
/// A member writes a burst of this many messages, then one every [`CHAT_EVERY_SECS`].
const BURST: f64 = 5.0;
const CHAT_EVERY_SECS: f64 = 2.0;

/// Who may write: what the room knows of a member beyond its role.
#[derive(Clone, Debug, Default)]
pub struct Speaker {
    /// The account the connection speaks for.
    pub account: Option<String>,
    /// The connection is the organizer's: it may moderate every match.
    pub organizer: bool,
}

/// A member's pace of writing.
#[derive(Debug)]
pub struct Pace {
    tokens: f64,
    last: Instant,
}

impl Default for Pace {
    fn default() -> Pace {
        Pace {
            tokens: BURST,
            last: Instant::now(),
        }
    }
}

impl Pace {
    /// Takes one message's allowance; false when the member writes too fast.
    pub fn take(&mut self) -> bool {
        let now = Instant::now();
        let earned = now.duration_since(self.last).as_secs_f64() / CHAT_EVERY_SECS;
        self.tokens = (self.tokens + earned).min(BURST);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The chat of one match as its room holds it.
#[derive(Debug)]
pub struct Chat {
    pub enabled: bool,
    pub mutes: Vec<ChatMute>,
    /// The last [`RECENT`] messages, oldest first.
    recent: VecDeque<ChatLine>,
    /// Messages stored so far: the last one's number.
    pub count: u64,
}

impl Chat {
    /// A chat as stored: its settings (none yet: on unless the match is a tournament's),
    /// its last messages and how many it has.
    pub fn new(enabled: bool, mutes: Vec<ChatMute>, mut recent: Vec<ChatLine>, count: u64) -> Chat {
        recent.sort_by_key(|line| line.n);
        let skip = recent.len().saturating_sub(RECENT);
        Chat {
            enabled,
            mutes,
            recent: recent.into_iter().skip(skip).collect(),
            count,
        }
    }

    pub fn push(&mut self, line: ChatLine) {
        self.count = self.count.max(line.n);
        self.recent.push_back(line);
        while self.recent.len() > RECENT {
            self.recent.pop_front();
        }
    }

    /// The recent messages `role` may read.
    pub fn lines_for(&self, role: Role) -> Vec<ChatLine> {
        self.recent
            .iter()
            .filter(|line| reads(role, line.channel))
            .cloned()
            .collect()
    }

    /// Whether a seat's player or an account is muted.
    pub fn is_muted(&self, seat: Option<Seat>, account: Option<&str>) -> bool {
        self.mutes.iter().any(|mute| {
            (seat.is_some() && mute.seat == seat)
                || (account.is_some() && mute.name.as_deref() == account)
        })
    }

    /// Mutes `target` or lets it speak again; false when the list is full.
    pub fn set_muted(&mut self, target: ChatMute, muted: bool) -> bool {
        let present = self.mutes.contains(&target);
        if muted && !present {
            if self.mutes.len() >= MAX_MUTES {
                return false;
            }
            self.mutes.push(target);
        } else if !muted {
            self.mutes.retain(|mute| *mute != target);
        }
        true
    }
}

/// Whether `role` reads `channel`: the players and the arbiter read the players' chat, the
/// spectators and the arbiter the spectators'.
pub fn reads(role: Role, channel: ChatChannel) -> bool {
    matches!(
        (role, channel),
        (Role::Arbiter, _)
            | (Role::Player(_), ChatChannel::Players)
            | (Role::Spectator, ChatChannel::Spectators)
    )
}

/// A message's text as stored: one line, trimmed, within [`MAX_CHAT_CHARS`].
pub fn clean(text: &str) -> Result<String, String> {
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let text = text.trim();
    if text.is_empty() {
        return Err("a chat message needs some text".into());
    }
    if text.chars().count() > MAX_CHAT_CHARS {
        return Err(format!(
            "a chat message is at most {MAX_CHAT_CHARS} characters"
        ));
    }
    Ok(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: u64, channel: ChatChannel) -> ChatLine {
        ChatLine {
            match_id: "m".into(),
            n,
            channel,
            from: "Ayşe".into(),
            role: "p1".into(),
            text: format!("line {n}"),
            at_ms: n,
        }
    }

    #[test]
    fn each_role_reads_its_own_channel_and_the_arbiter_both() {
        let mut chat = Chat::new(true, Vec::new(), Vec::new(), 0);
        chat.push(line(1, ChatChannel::Players));
        chat.push(line(2, ChatChannel::Spectators));
        let ns = |role| chat.lines_for(role).iter().map(|l| l.n).collect::<Vec<_>>();
        assert_eq!(ns(Role::Player(Seat::P2)), [1]);
        assert_eq!(ns(Role::Spectator), [2]);
        assert_eq!(ns(Role::Arbiter), [1, 2]);
    }

    #[test]
    fn memory_keeps_the_last_messages_only() {
        let stored: Vec<ChatLine> = (1..=250)
            .rev()
            .map(|n| line(n, ChatChannel::Players))
            .collect();
        let mut chat = Chat::new(true, Vec::new(), stored, 250);
        assert_eq!(chat.lines_for(Role::Arbiter).len(), RECENT);
        assert_eq!(chat.lines_for(Role::Arbiter)[0].n, 151);
        chat.push(line(251, ChatChannel::Players));
        let lines = chat.lines_for(Role::Arbiter);
        assert_eq!((lines.len(), lines[0].n, chat.count), (RECENT, 152, 251));
    }

    #[test]
    fn mutes_are_by_seat_or_account_and_bounded() {
        let mut chat = Chat::new(true, Vec::new(), Vec::new(), 0);
        let seat = ChatMute {
            seat: Some(Seat::P1),
            name: None,
        };
        assert!(chat.set_muted(seat.clone(), true));
        assert!(chat.set_muted(seat.clone(), true));
        assert_eq!(chat.mutes.len(), 1);
        assert!(chat.is_muted(Some(Seat::P1), None));
        assert!(!chat.is_muted(Some(Seat::P2), None));
        assert!(!chat.is_muted(None, Some("p1")));
        for i in 0..MAX_MUTES - 1 {
            let name = ChatMute {
                seat: None,
                name: Some(format!("a{i}")),
            };
            assert!(chat.set_muted(name, true));
        }
        assert!(chat.is_muted(None, Some("a7")));
        let one_more = ChatMute {
            seat: None,
            name: Some("late".into()),
        };
        assert!(!chat.set_muted(one_more, true));
        assert!(chat.set_muted(seat, false));
        assert!(!chat.is_muted(Some(Seat::P1), None));
    }

    #[test]
    fn text_is_one_trimmed_line_within_the_limit() {
        assert_eq!(clean("  gg\nwp\t ").unwrap(), "gg wp");
        assert!(clean(" \n ").is_err());
        assert!(clean(&"ş".repeat(MAX_CHAT_CHARS)).is_ok());
        assert!(clean(&"ş".repeat(MAX_CHAT_CHARS + 1)).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_member_writes_a_burst_then_one_message_every_two_seconds() {
        let mut pace = Pace::default();
        for _ in 0..5 {
            assert!(pace.take());
        }
        assert!(!pace.take());
        tokio::time::advance(std::time::Duration::from_millis(2_100)).await;
        assert!(pace.take());
        assert!(!pace.take());
    }
}
