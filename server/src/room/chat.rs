//! A match's chat, kept by its room: two channels (the players' and the spectators'), the
//! arbiter's switch and mutes, and the limits that keep it small: a message's length, a
//! writer's pace, a channel's total. The rules of who reads and writes what are here, as pure
//! functions; the room stores each message before anyone reads it.

use std::collections::{HashMap, VecDeque};

use hakem_protocol::{
    ChatChannel, ChatLine, ChatMute, ChatRole, PerSeat, Seat, ServerMessage, MAX_CHAT_CHARS,
};
use tokio::time::Instant;

use super::Role;
use crate::store::PerChannel;

/// Messages of each channel a room keeps in memory and shows a member who comes in.
pub const RECENT: usize = 100;
/// Messages one channel of a match may have in all.
pub const MAX_LINES: u64 = 5_000;
/// Seats and accounts one match may have muted.
pub const MAX_MUTES: usize = 200;
/// A writer writes a burst of this many messages, then one every [`CHAT_EVERY_SECS`].
const BURST: f64 = 5.0;
const CHAT_EVERY_SECS: f64 = 2.0;
/// Writers whose pace a room remembers; past that the ones back to a full burst are forgotten.
const PACES: usize = 1_000;

/// Who sends a message or a moderation: what the room knows beyond the member's role. The
/// session says it with each action, so that an account disabled or logged out meanwhile no
/// longer speaks.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Speaker {
    /// The account the connection speaks for.
    pub account: Option<String>,
    /// The connection is the organizer's: it may moderate every match.
    pub organizer: bool,
}

/// A writer's pace.
#[derive(Debug)]
struct Pace {
    tokens: f64,
    last: Instant,
}

impl Pace {
    fn new(now: Instant) -> Pace {
        Pace {
            tokens: BURST,
            last: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let earned = now.duration_since(self.last).as_secs_f64() / CHAT_EVERY_SECS;
        self.tokens = (self.tokens + earned).min(BURST);
        self.last = now;
    }
}

/// Who a writer is for its pace and its mutes: a seat (whoever holds it) or an account.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Writer {
    Seat(Seat),
    Account(String),
    Arbiter,
    Organizer,
}

/// The settings of a chat, changed by the arbiter or the organizer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub enabled: bool,
    pub mutes: Vec<ChatMute>,
}

impl Settings {
    /// Mutes `target` or lets it speak again; an error when the list is full.
    pub fn set_muted(&mut self, target: ChatMute, muted: bool) -> Result<(), String> {
        let present = self.mutes.contains(&target);
        if muted && !present {
            if self.mutes.len() >= MAX_MUTES {
                return Err(format!(
                    "at most {MAX_MUTES} seats and accounts are muted in a match"
                ));
            }
            self.mutes.push(target);
        } else if !muted {
            self.mutes.retain(|mute| *mute != target);
        }
        Ok(())
    }

    fn mutes(&self, seat: Option<Seat>, account: Option<&str>) -> bool {
        self.mutes.iter().any(|mute| {
            (seat.is_some() && mute.seat == seat)
                || (account.is_some() && mute.name.as_deref() == account)
        })
    }
}

/// A member of the room as the chat sees it.
#[derive(Clone, Copy, Debug)]
pub struct Someone<'a> {
    pub role: Role,
    pub speaker: &'a Speaker,
}

/// What the chat knows of the match.
#[derive(Clone, Copy, Debug)]
pub struct Match<'a> {
    pub players: &'a PerSeat<String>,
    /// The accounts seated in it.
    pub accounts: &'a PerSeat<Option<String>>,
}

impl Match<'_> {
    /// The seat an account holds here, if any.
    fn seat_of(&self, account: Option<&str>) -> Option<Seat> {
        let account = account?;
        Seat::BOTH
            .into_iter()
            .find(|&seat| self.accounts.get(seat).as_deref() == Some(account))
    }
}

/// Why a message or a moderation was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    Forbidden(&'static str),
    Bad(String),
    TooFast,
}

/// The chat of one match as its room holds it.
#[derive(Debug)]
pub struct Chat {
    pub settings: Settings,
    /// Each channel's last [`RECENT`] messages, oldest first.
    recent: PerChannel<VecDeque<ChatLine>>,
    /// Messages stored so far in each channel: the last one's number.
    counts: PerChannel<u64>,
    paces: HashMap<Writer, Pace>,
}

impl Chat {
    /// A chat as stored: its settings, its last messages and how many each channel has.
    pub fn new(settings: Settings, mut lines: Vec<ChatLine>, counts: PerChannel<u64>) -> Chat {
        lines.sort_by_key(|line| line.n);
        let mut recent: PerChannel<VecDeque<ChatLine>> = PerChannel::default();
        for line in lines {
            let kept = recent.get_mut(line.channel);
            kept.push_back(line);
            if kept.len() > RECENT {
                kept.pop_front();
            }
        }
        Chat {
            settings,
            recent,
            counts,
            paces: HashMap::new(),
        }
    }

    /// The recent messages `someone` may read, oldest first (by time, across channels).
    pub fn lines_for(&self, someone: Someone<'_>, game: Match<'_>) -> Vec<ChatLine> {
        let mut lines: Vec<ChatLine> = [ChatChannel::Players, ChatChannel::Spectators]
            .into_iter()
            .filter(|&channel| reads(someone, channel, game))
            .flat_map(|channel| self.recent.get(channel).iter().cloned())
            .collect();
        lines.sort_by_key(|line| line.at_ms);
        lines
    }

    /// Whether `someone` is muted: by its seat, or by the account it speaks for or sits as.
    pub fn is_muted(&self, someone: Someone<'_>, game: Match<'_>) -> bool {
        let seat = match someone.role {
            Role::Player(seat) => Some(seat),
            _ => None,
        };
        let seated_account = seat.and_then(|seat| game.accounts.get(seat).as_deref());
        self.settings
            .mutes(seat, someone.speaker.account.as_deref())
            || (seated_account.is_some() && self.settings.mutes(None, seated_account))
    }

    /// Checks a message of `someone` and, if it may be written, makes its line (numbered, its
    /// writer's pace taken). Nothing changes on a refusal but the pace of one that came too
    /// fast.
    pub fn write(
        &mut self,
        someone: Someone<'_>,
        game: Match<'_>,
        channel: Option<ChatChannel>,
        text: &str,
        now: Instant,
        at_ms: u64,
    ) -> Result<(ChatLine, Option<String>), Refused> {
        let own = match someone.role {
            Role::Spectator => ChatChannel::Spectators,
            _ => ChatChannel::Players,
        };
        let channel = channel.unwrap_or(own);
        let account = someone.speaker.account.as_deref();
        match someone.role {
            Role::Arbiter => {}
            Role::Player(_) if channel != own => {
                return Err(Refused::Forbidden("players write in the players' chat"))
            }
            Role::Spectator if channel != own => {
                return Err(Refused::Forbidden(
                    "spectators write in the spectators' chat",
                ))
            }
            Role::Spectator if game.seat_of(account).is_some() => {
                return Err(Refused::Forbidden(
                    "a player of the match writes in the players' chat",
                ))
            }
            Role::Spectator if account.is_none() && !someone.speaker.organizer => {
                return Err(Refused::Forbidden(
                    "log in to write in the spectators' chat",
                ))
            }
            _ => {}
        }
        let text = clean(text).map_err(Refused::Bad)?;
        if someone.role != Role::Arbiter {
            if !self.settings.enabled {
                return Err(Refused::Forbidden("the chat is off in this match"));
            }
            if self.is_muted(someone, game) {
                return Err(Refused::Forbidden("you are muted in this match"));
            }
        }
        if *self.counts.get(channel) >= MAX_LINES {
            return Err(Refused::Bad("this match's chat is full".into()));
        }
        let (writer, from, role) = match someone.role {
            Role::Player(seat) => (
                Writer::Seat(seat),
                game.players.get(seat).clone(),
                ChatRole::of_seat(seat),
            ),
            Role::Arbiter => (Writer::Arbiter, String::new(), ChatRole::Arbiter),
            Role::Spectator => match account {
                Some(name) => (
                    Writer::Account(name.to_string()),
                    name.to_string(),
                    ChatRole::Spectator,
                ),
                None => (Writer::Organizer, String::new(), ChatRole::Organizer),
            },
        };
        self.take_pace(writer, now)?;
        let account = match someone.role {
            Role::Player(seat) => game.accounts.get(seat).clone(),
            _ => someone.speaker.account.clone(),
        };
        let n = self.counts.get(channel) + 1;
        // Counted now, even if storing fails: a row that was stored after all must not have its
        // number taken again.
        *self.counts.get_mut(channel) = n;
        let line = ChatLine {
            match_id: String::new(),
            n,
            channel,
            from,
            role,
            text,
            at_ms,
        };
        Ok((line, account))
    }

    fn take_pace(&mut self, writer: Writer, now: Instant) -> Result<(), Refused> {
        if self.paces.len() >= PACES && !self.paces.contains_key(&writer) {
            self.paces.retain(|_, pace| {
                pace.refill(now);
                pace.tokens < BURST
            });
        }
        let pace = self.paces.entry(writer).or_insert_with(|| Pace::new(now));
        pace.refill(now);
        if pace.tokens < 1.0 {
            return Err(Refused::TooFast);
        }
        pace.tokens -= 1.0;
        Ok(())
    }

    /// The chat as `someone` is told it when it comes in: on or off, whether it is muted, the
    /// mutes (for those who moderate) and the messages it may read.
    pub fn history(&self, match_id: &str, someone: Someone<'_>, game: Match<'_>) -> ServerMessage {
        ServerMessage::ChatHistory {
            match_id: match_id.to_string(),
            enabled: self.settings.enabled,
            muted: self.is_muted(someone, game),
            lines: self.lines_for(someone, game),
            mutes: moderates(someone).then(|| self.settings.mutes.clone()),
        }
    }

    /// The settings as `someone` is told them when they change: as in [`Chat::history`],
    /// without the messages.
    pub fn settings_message(
        &self,
        match_id: &str,
        someone: Someone<'_>,
        game: Match<'_>,
    ) -> ServerMessage {
        ServerMessage::ChatSettings {
            match_id: match_id.to_string(),
            enabled: self.settings.enabled,
            muted: self.is_muted(someone, game),
            mutes: moderates(someone).then(|| self.settings.mutes.clone()),
        }
    }

    /// A stored message, kept for members who come in.
    pub fn keep(&mut self, line: ChatLine) {
        let kept = self.recent.get_mut(line.channel);
        kept.push_back(line);
        while kept.len() > RECENT {
            kept.pop_front();
        }
    }
}

/// A room's chat from what the store holds (`None`: no store), on by default unless
/// `default_on` is false.
pub fn restored(stored: Option<crate::store::StoredChat>, default_on: bool) -> Chat {
    let fresh = Settings {
        enabled: default_on,
        mutes: Vec::new(),
    };
    match stored {
        Some(stored) => {
            let settings = match stored.settings {
                Some((enabled, mutes)) => Settings {
                    enabled,
                    mutes: serde_json::from_str(&mutes).unwrap_or_default(),
                },
                None => fresh,
            };
            Chat::new(settings, stored.lines, stored.counts)
        }
        None => Chat::new(fresh, Vec::new(), PerChannel::default()),
    }
}

/// Whether `someone` reads `channel`: the players and the arbiter read the players' chat, the
/// spectators and the arbiter the spectators'; an account seated in the match never reads the
/// spectators' chat, even as a spectator.
pub fn reads(someone: Someone<'_>, channel: ChatChannel, game: Match<'_>) -> bool {
    match (someone.role, channel) {
        (Role::Arbiter, _) | (Role::Player(_), ChatChannel::Players) => true,
        (Role::Spectator, ChatChannel::Spectators) => {
            game.seat_of(someone.speaker.account.as_deref()).is_none()
        }
        _ => false,
    }
}

/// Whether `someone` moderates the chat: the arbiter, or the organizer in any role.
pub fn moderates(someone: Someone<'_>) -> bool {
    someone.role == Role::Arbiter || someone.speaker.organizer
}

/// A mute's target as checked: a seat, or an account's name.
pub fn mute_target(target: ChatMute) -> Result<ChatMute, String> {
    let name = target.name.as_deref().map(str::trim);
    match (target.seat, name) {
        (Some(seat), None) => Ok(ChatMute {
            seat: Some(seat),
            name: None,
        }),
        (None, Some(name)) if crate::accounts::valid_name(name) => Ok(ChatMute {
            seat: None,
            name: Some(name.to_string()),
        }),
        _ => Err("mute names a `seat` or an account's `name`".into()),
    }
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
            role: ChatRole::P1,
            text: format!("line {n}"),
            at_ms: n,
        }
    }

    fn on() -> Settings {
        Settings {
            enabled: true,
            mutes: Vec::new(),
        }
    }

    struct Fixture {
        players: PerSeat<String>,
        accounts: PerSeat<Option<String>>,
        guest: Speaker,
        zeynep: Speaker,
        ayse: Speaker,
    }

    impl Fixture {
        fn new() -> Fixture {
            let speaker = |name: &str| Speaker {
                account: Some(name.into()),
                organizer: false,
            };
            Fixture {
                players: PerSeat::new("Ayşe".into(), "Bora".into()),
                accounts: PerSeat::new(Some("ayse".into()), None),
                guest: Speaker::default(),
                zeynep: speaker("zeynep"),
                ayse: speaker("ayse"),
            }
        }

        fn game(&self) -> Match<'_> {
            Match {
                players: &self.players,
                accounts: &self.accounts,
            }
        }
    }

    fn someone(role: Role, speaker: &Speaker) -> Someone<'_> {
        Someone { role, speaker }
    }

    #[test]
    fn each_role_reads_its_own_channel_and_a_seated_account_never_the_spectators() {
        let f = Fixture::new();
        let mut chat = Chat::new(on(), Vec::new(), PerChannel::default());
        chat.keep(line(1, ChatChannel::Players));
        chat.keep(line(1, ChatChannel::Spectators));
        let channels = |who: Someone<'_>| {
            chat.lines_for(who, f.game())
                .iter()
                .map(|l| l.channel)
                .collect::<Vec<_>>()
        };
        use ChatChannel::{Players, Spectators};
        assert_eq!(
            channels(someone(Role::Player(Seat::P2), &f.guest)),
            [Players]
        );
        assert_eq!(channels(someone(Role::Spectator, &f.zeynep)), [Spectators]);
        assert_eq!(
            channels(someone(Role::Arbiter, &f.guest)),
            [Players, Spectators]
        );
        // Ayşe plays here: watching her own match, she still does not read the spectators.
        assert!(channels(someone(Role::Spectator, &f.ayse)).is_empty());
    }

    #[test]
    fn memory_keeps_the_last_messages_of_each_channel() {
        let f = Fixture::new();
        let mut stored: Vec<ChatLine> = (1..=250)
            .rev()
            .map(|n| line(n, ChatChannel::Spectators))
            .collect();
        stored.push(line(1, ChatChannel::Players));
        let counts = PerChannel {
            players: 1,
            spectators: 250,
        };
        let mut chat = Chat::new(on(), stored, counts);
        let player = someone(Role::Player(Seat::P1), &f.guest);
        // A flood of the spectators' does not push the players' message out.
        assert_eq!(chat.lines_for(player, f.game()).len(), 1);
        let spectators = chat.lines_for(someone(Role::Spectator, &f.zeynep), f.game());
        assert_eq!((spectators.len(), spectators[0].n), (RECENT, 151));
        chat.keep(line(251, ChatChannel::Spectators));
        let spectators = chat.lines_for(someone(Role::Spectator, &f.zeynep), f.game());
        assert_eq!((spectators.len(), spectators[0].n), (RECENT, 152));
    }

    #[test]
    fn who_writes_where() {
        let f = Fixture::new();
        let mut chat = Chat::new(on(), Vec::new(), PerChannel::default());
        let now = Instant::now();
        let mut write =
            |who: Someone<'_>, channel| chat.write(who, f.game(), channel, "gg", now, 0);
        let (line, account) = write(someone(Role::Player(Seat::P1), &f.guest), None).unwrap();
        assert_eq!(
            (line.channel, line.n, line.role),
            (ChatChannel::Players, 1, ChatRole::P1)
        );
        assert_eq!(
            (line.from.as_str(), account.as_deref()),
            ("Ayşe", Some("ayse"))
        );
        let forbidden = |r: Result<_, Refused>| matches!(r, Err(Refused::Forbidden(_)));
        let spectators = Some(ChatChannel::Spectators);
        assert!(forbidden(write(
            someone(Role::Player(Seat::P2), &f.guest),
            spectators
        )));
        assert!(forbidden(write(someone(Role::Spectator, &f.guest), None)));
        assert!(forbidden(write(someone(Role::Spectator, &f.ayse), None)));
        assert!(forbidden(write(
            someone(Role::Spectator, &f.zeynep),
            Some(ChatChannel::Players)
        )));
        let (line, _) = write(someone(Role::Spectator, &f.zeynep), None).unwrap();
        assert_eq!((line.channel, line.n), (ChatChannel::Spectators, 1));
        let (line, _) = write(someone(Role::Arbiter, &f.guest), spectators).unwrap();
        assert_eq!((line.n, line.role), (2, ChatRole::Arbiter));
    }

    #[test]
    fn mutes_are_by_seat_or_by_account_also_of_a_seat() {
        let f = Fixture::new();
        let mut settings = on();
        let seat = ChatMute {
            seat: Some(Seat::P2),
            name: None,
        };
        settings.set_muted(seat.clone(), true).unwrap();
        settings.set_muted(seat.clone(), true).unwrap();
        assert_eq!(settings.mutes.len(), 1);
        let by_name = ChatMute {
            seat: None,
            name: Some("ayse".into()),
        };
        settings.set_muted(by_name, true).unwrap();
        let chat = Chat::new(settings.clone(), Vec::new(), PerChannel::default());
        assert!(chat.is_muted(someone(Role::Player(Seat::P2), &f.guest), f.game()));
        // Ayşe's account sits at p1: muted by name although this connection said no hello.
        assert!(chat.is_muted(someone(Role::Player(Seat::P1), &f.guest), f.game()));
        assert!(!chat.is_muted(someone(Role::Spectator, &f.zeynep), f.game()));
        for i in 0..MAX_MUTES - 2 {
            let name = ChatMute {
                seat: None,
                name: Some(format!("a{i}")),
            };
            settings.set_muted(name, true).unwrap();
        }
        let one_more = ChatMute {
            seat: None,
            name: Some("late".into()),
        };
        assert!(settings.set_muted(one_more, true).is_err());
        settings.set_muted(seat, false).unwrap();
        assert_eq!(settings.mutes.len(), MAX_MUTES - 1);
    }

    #[test]
    fn a_mute_names_a_seat_or_a_valid_account_name() {
        let by = |seat: Option<Seat>, name: Option<&str>| {
            mute_target(ChatMute {
                seat,
                name: name.map(str::to_string),
            })
        };
        assert!(by(Some(Seat::P1), None).is_ok());
        assert_eq!(
            by(None, Some(" zeynep ")).unwrap().name.as_deref(),
            Some("zeynep")
        );
        assert!(by(None, None).is_err());
        assert!(by(Some(Seat::P1), Some("zeynep")).is_err());
        assert!(by(None, Some("")).is_err());
        assert!(by(None, Some(&"z".repeat(500))).is_err());
    }

    #[test]
    fn text_is_one_trimmed_line_within_the_limit() {
        assert_eq!(clean("  gg\nwp\t ").unwrap(), "gg wp");
        assert!(clean(" \n ").is_err());
        assert!(clean(&"ş".repeat(MAX_CHAT_CHARS)).is_ok());
        assert!(clean(&"ş".repeat(MAX_CHAT_CHARS + 1)).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_writer_has_one_pace_however_many_times_it_comes_in() {
        let f = Fixture::new();
        let mut chat = Chat::new(on(), Vec::new(), PerChannel::default());
        let zeynep = someone(Role::Spectator, &f.zeynep);
        let write = |chat: &mut Chat| chat.write(zeynep, f.game(), None, "hi", Instant::now(), 0);
        for _ in 0..5 {
            assert!(write(&mut chat).is_ok());
        }
        assert_eq!(write(&mut chat).unwrap_err(), Refused::TooFast);
        tokio::time::advance(std::time::Duration::from_millis(2_100)).await;
        assert!(write(&mut chat).is_ok());
        assert_eq!(write(&mut chat).unwrap_err(), Refused::TooFast);
        // Another writer has a pace of its own.
        let p1 = someone(Role::Player(Seat::P1), &f.guest);
        assert!(chat
            .write(p1, f.game(), None, "gg", Instant::now(), 0)
            .is_ok());
    }

    #[test]
    fn a_full_channel_refuses_and_the_other_goes_on() {
        let f = Fixture::new();
        let counts = PerChannel {
            players: 0,
            spectators: MAX_LINES,
        };
        let mut chat = Chat::new(on(), Vec::new(), counts);
        let now = Instant::now();
        let zeynep = someone(Role::Spectator, &f.zeynep);
        assert!(matches!(
            chat.write(zeynep, f.game(), None, "x", now, 0),
            Err(Refused::Bad(_))
        ));
        let p1 = someone(Role::Player(Seat::P1), &f.guest);
        assert!(chat.write(p1, f.game(), None, "gg", now, 0).is_ok());
    }
}
