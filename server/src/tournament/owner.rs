//! The task that owns one tournament, as a room owns its match. It alone changes the
//! tournament: the organizer's and the arbiter's commands and the results of its matches come
//! in through its mailboxes and are handled one at a time, each change made on a copy, stored,
//! and only then put in place and published. Nobody waits on it but the one who asked: a room
//! reports its result without waiting, and readers read what it last published.

use std::sync::{Arc, Weak};

use hakem_protocol::tournament::{
    ColourLot, NewPlayer, PairingPreview, PlayerToken, TournamentView,
};
use hakem_protocol::{ErrorCode, MatchStatus, RoundResult, Seat, Winner};
use tokio::sync::{mpsc, oneshot, watch};

use super::link;
use super::{
    draw_lot, enter, forbidden, pairing_id, store, AssistantAdded, BoardResult, Caller, Failure,
    Published, Refused, Tournament,
};
use crate::tokens::new_token;
use crate::App;

pub(super) type Reply<T> = oneshot::Sender<Result<T, Failure>>;

/// What the owner is asked to do; each is answered on its `reply`.
pub(super) enum Command {
    AddPlayers {
        caller: Caller,
        players: Vec<NewPlayer>,
        reply: Reply<Vec<PlayerToken>>,
    },
    Start {
        caller: Caller,
        lot: Option<Seat>,
        reply: Reply<TournamentView>,
    },
    PairNext {
        caller: Caller,
        /// The identifier of the pairing the arbiter saw, if they name one.
        expected: Option<String>,
        reply: Reply<TournamentView>,
    },
    Preview {
        caller: Caller,
        reply: Reply<PairingPreview>,
    },
    AddAssistant {
        caller: Caller,
        name: String,
        boards: Vec<u32>,
        reply: Reply<AssistantAdded>,
    },
    SetResult {
        caller: Caller,
        round: u32,
        board: u32,
        result: BoardResult,
        reply: Reply<TournamentView>,
    },
    Withdraw {
        caller: Caller,
        player: u32,
        reply: Reply<TournamentView>,
    },
    RequestBye {
        caller: Caller,
        player: u32,
        round: u32,
        reply: Reply<TournamentView>,
    },
    Forfeit {
        caller: Caller,
        player: u32,
        round: Option<u32>,
        double: bool,
        reply: Reply<TournamentView>,
    },
    /// Brings the tournament up to date with its matches (at start).
    CatchUp { reply: oneshot::Sender<()> },
}

pub(super) struct Owner {
    /// Weak: the registry in the server holds the owner's mailboxes, and the owner must not
    /// keep the server alive.
    app: Weak<App>,
    t: Arc<Tournament>,
    published: watch::Sender<Arc<Published>>,
}

impl Owner {
    pub(super) fn new(
        app: Weak<App>,
        t: Arc<Tournament>,
    ) -> (Owner, watch::Receiver<Arc<Published>>) {
        let (published, receiver) = watch::channel(Published::of(t.clone()));
        (Owner { app, t, published }, receiver)
    }

    /// Runs until the tournament's handles are gone (or the server is). Results come first:
    /// a round completed by them is paired before the next command looks at it.
    pub(super) async fn run(
        mut self,
        mut commands: mpsc::Receiver<Command>,
        mut results: mpsc::UnboundedReceiver<(String, RoundResult)>,
    ) {
        loop {
            tokio::select! {
                biased;
                Some((match_id, result)) = results.recv() => {
                    let Some(app) = self.app.upgrade() else { break };
                    self.match_finished(&app, &match_id, &result).await;
                }
                command = commands.recv() => {
                    let (Some(command), Some(app)) = (command, self.app.upgrade()) else { break };
                    self.handle(&app, command).await;
                }
            }
        }
    }

    /// One handler per command. An answer nobody waits for any more (the asker left) is
    /// dropped; the change itself is made all the same.
    async fn handle(&mut self, app: &App, command: Command) {
        match command {
            Command::AddPlayers {
                caller,
                players,
                reply,
            } => {
                let _ = reply.send(self.add_players(app, &caller, players).await);
            }
            Command::Start { caller, lot, reply } => {
                let _ = reply.send(self.start(app, &caller, lot).await);
            }
            Command::PairNext {
                caller,
                expected,
                reply,
            } => {
                let _ = reply.send(self.pair_next(app, &caller, expected).await);
            }
            Command::Preview { caller, reply } => {
                let _ = reply.send(self.preview(app, &caller).await);
            }
            Command::AddAssistant {
                caller,
                name,
                boards,
                reply,
            } => {
                let _ = reply.send(self.add_assistant(app, &caller, &name, &boards).await);
            }
            Command::SetResult {
                caller,
                round,
                board,
                result,
                reply,
            } => {
                let _ = reply.send(self.set_result(app, &caller, round, board, result).await);
            }
            Command::Withdraw {
                caller,
                player,
                reply,
            } => {
                let done = self
                    .change_for(app, caller.speaks_for(&self.t, player), |t| {
                        t.withdraw(player)
                    })
                    .await;
                let _ = reply.send(done);
            }
            Command::RequestBye {
                caller,
                player,
                round,
                reply,
            } => {
                let done = self
                    .change_for(app, caller.speaks_for(&self.t, player), |t| {
                        t.request_bye(player, round)
                    })
                    .await;
                let _ = reply.send(done);
            }
            Command::Forfeit {
                caller,
                player,
                round,
                double,
                reply,
            } => {
                let _ = reply.send(self.forfeit(app, &caller, player, round, double).await);
            }
            Command::CatchUp { reply } => {
                self.catch_up(app).await;
                let _ = reply.send(());
            }
        }
    }

    fn view(&self) -> TournamentView {
        self.published.borrow().view.clone()
    }

    /// Puts a stored state in place and tells its watchers.
    fn put(&mut self, t: Tournament) {
        self.t = Arc::new(t);
        self.published.send_replace(Published::of(self.t.clone()));
    }

    /// The copy, store and swap steps of a change; a change that paired a round also creates
    /// its matches.
    async fn apply<T>(
        &mut self,
        app: &App,
        change: impl FnOnce(&mut Tournament) -> Result<T, Refused>,
    ) -> Result<T, Failure> {
        let mut next = (*self.t).clone();
        let out = change(&mut next)?;
        self.store_and_swap(app, next).await?;
        Ok(out)
    }

    /// The store and swap steps of a changed copy.
    async fn store_and_swap(&mut self, app: &App, mut next: Tournament) -> Result<(), Failure> {
        store(app, &mut next, false).await?;
        let paired = next.current_round() != self.t.current_round();
        self.put(next);
        if paired {
            link::open_matches(app, &self.t).await;
        }
        Ok(())
    }

    /// [`Owner::apply`] for a change that computes (pairing a large round takes a fraction of
    /// a second): it runs on a thread of its own, so that no room or connection on the
    /// runtime's threads waits for it. The owner takes no other command meanwhile.
    async fn apply_aside<T: Send + 'static>(
        &mut self,
        app: &App,
        change: impl FnOnce(&mut Tournament) -> Result<T, Refused> + Send + 'static,
    ) -> Result<T, Failure> {
        let (next, out) = aside((*self.t).clone(), change).await?;
        self.store_and_swap(app, next).await?;
        Ok(out)
    }

    /// A change the caller may make (`allowed`), answered with the view it published.
    async fn change_for(
        &mut self,
        app: &App,
        allowed: bool,
        change: impl FnOnce(&mut Tournament) -> Result<(), Refused>,
    ) -> Result<TournamentView, Failure> {
        if !allowed {
            return Err(forbidden());
        }
        self.apply(app, change).await?;
        Ok(self.view())
    }

    /// More players (late entries once the tournament runs).
    async fn add_players(
        &mut self,
        app: &App,
        caller: &Caller,
        players: Vec<NewPlayer>,
    ) -> Result<Vec<PlayerToken>, Failure> {
        if !caller.arbitrates(&self.t) {
            return Err(forbidden());
        }
        if players.is_empty() {
            return Err(Failure::new(ErrorCode::BadRequest, "no players to add"));
        }
        let mut next = (*self.t).clone();
        let entered = enter(app, &mut next, players).await?;
        store(app, &mut next, false).await?;
        self.put(next);
        tracing::info!(tournament = %self.t.id, players = entered.len(), "players entered");
        Ok(entered)
    }

    /// Ranks the players, settles the colour lot (given now, given at creation, or else drawn
    /// now) and pairs round 1.
    async fn start(
        &mut self,
        app: &App,
        caller: &Caller,
        lot: Option<Seat>,
    ) -> Result<TournamentView, Failure> {
        if !caller.arbitrates(&self.t) {
            return Err(forbidden());
        }
        let given = lot.map(|seat| ColourLot { seat, drawn: false });
        let round = self
            .apply_aside(app, move |t| {
                let lot = given.or(t.colour_lot).unwrap_or_else(|| ColourLot {
                    seat: draw_lot(),
                    drawn: true,
                });
                t.start(lot)?;
                t.pair_next()
            })
            .await?;
        tracing::info!(tournament = %self.t.id, round, "tournament started");
        Ok(self.view())
    }

    /// Pairs the next round and publishes it; with `expected`, only if its pairing is the one
    /// of that identifier (the one the arbiter was shown): otherwise nothing is published and
    /// the refusal carries the pairing as it is now.
    async fn pair_next(
        &mut self,
        app: &App,
        caller: &Caller,
        expected: Option<String>,
    ) -> Result<TournamentView, Failure> {
        if !caller.arbitrates(&self.t) {
            return Err(forbidden());
        }
        // Results a failed store write left unrecorded are picked up first.
        self.catch_up(app).await;
        let (next, round) = aside((*self.t).clone(), Tournament::pair_next).await?;
        if let Some(expected) = expected {
            let now = preview_of(&next, round)?;
            if now.pairing != expected {
                tracing::info!(tournament = %self.t.id, round, "pairing not published: not the one shown");
                return Err(Failure {
                    preview: Some(Box::new(now)),
                    ..Failure::new(
                        ErrorCode::PairingChanged,
                        format!(
                            "round {round} would not be paired as shown: something changed since \
                             (a result, a bye, a withdrawal or an entry), so nothing was published; \
                             look at the pairing as it is now and publish that one"
                        ),
                    )
                });
            }
        }
        self.store_and_swap(app, next).await?;
        let id = &self.t.id;
        tracing::info!(tournament = %id, round, "round paired");
        let view = self.view();
        if view
            .pairings
            .iter()
            .any(|r| r.round == round && r.search_stopped)
        {
            tracing::warn!(tournament = %id, round, "the pairing search stopped at its budget: check the pairing");
        }
        Ok(view)
    }

    /// The next round as `pair_next` would pair it now, paired on a copy that is then dropped:
    /// the arbiter sees the pairing before publishing it. Pairing is deterministic, so
    /// `pair_next` publishes this pairing unless something changes in between.
    async fn preview(&mut self, app: &App, caller: &Caller) -> Result<PairingPreview, Failure> {
        if !caller.arbitrates(&self.t) {
            return Err(forbidden());
        }
        self.catch_up(app).await;
        let (trial, round) = aside((*self.t).clone(), Tournament::pair_next).await?;
        preview_of(&trial, round)
    }

    /// The chief arbiter names an assistant arbiter for some board numbers, in every round.
    async fn add_assistant(
        &mut self,
        app: &App,
        caller: &Caller,
        name: &str,
        boards: &[u32],
    ) -> Result<AssistantAdded, Failure> {
        if !caller.arbitrates(&self.t) {
            return Err(forbidden());
        }
        let added = self
            .apply(app, |t| {
                let a = t.add_assistant(name, boards, new_token())?;
                Ok(AssistantAdded {
                    name: a.name.clone(),
                    boards: a.boards.clone(),
                    token: a.token.clone(),
                })
            })
            .await?;
        tracing::info!(tournament = %self.t.id, boards = ?added.boards, "assistant arbiter named");
        Ok(added)
    }

    /// The arbiter enters a board's result (a board played over the board) or corrects one.
    /// A result entered for a board still being played ends its match with that result; a
    /// correction changes the tournament's result only.
    async fn set_result(
        &mut self,
        app: &App,
        caller: &Caller,
        round: u32,
        board: u32,
        result: BoardResult,
    ) -> Result<TournamentView, Failure> {
        if !caller.arbitrates(&self.t) {
            return Err(forbidden());
        }
        let (match_id, new) = self
            .apply(app, |t| t.set_result(round, board, result))
            .await?;
        tracing::info!(tournament = %self.t.id, round, board, result = result.text(), new, "result set by the arbiter");
        if new {
            let reason = format!("result {} entered by the arbiter", result.text());
            // The room's own report of this end finds the board decided and changes nothing.
            if let Err(e) =
                link::end_by_decree(app, &match_id, result.winner(), &reason, false).await
            {
                // Ended meanwhile (its own result stays in its record), or never opened.
                tracing::info!(%match_id, error = %e, "match not ended by the entered result");
            }
        }
        self.after_result(app).await;
        Ok(self.view())
    }

    /// The arbiter's forfeit for a no-show. A match that has begun (a set started) or ended
    /// is not a no-show: the arbiter decides it in the match, with `declare`. The forfeit is
    /// stored, then the match is ended by decree if it still has not begun (again at the next
    /// start if the server stops between); if it began meanwhile, the forfeit is taken back.
    async fn forfeit(
        &mut self,
        app: &App,
        caller: &Caller,
        player: u32,
        round: Option<u32>,
        double: bool,
    ) -> Result<TournamentView, Failure> {
        if !caller.arbitrates(&self.t) {
            return Err(forbidden());
        }
        let board = self.t.current_board(player, round)?.clone();
        let begun = || {
            Failure::new(
                ErrorCode::BadRequest,
                format!(
                    "the match of player {player} has begun; the arbiter decides it there (declare)"
                ),
            )
        };
        if board.result.is_none() {
            if let Some(state) = link::snapshot(app, &board.match_id).await {
                if let Some(result) = &state.round {
                    // Its end is on its way here: record it now.
                    self.apply(app, |t| Ok(t.record(&board.match_id, result)))
                        .await?;
                    self.after_result(app).await;
                    return Err(Failure::new(
                        ErrorCode::BadRequest,
                        format!("the match of player {player} has ended; its result is recorded"),
                    ));
                }
                if state.status != MatchStatus::Waiting || !state.sets.is_empty() {
                    return Err(begun());
                }
            }
        }
        let outcome = self
            .apply(app, |t| t.forfeit(player, round, double))
            .await?;
        if let Err(e) = link::end_by_forfeit(app, &outcome.match_id, outcome.end_with, true).await {
            tracing::info!(match_id = %outcome.match_id, error = %e, "forfeit taken back");
            self.apply(app, |t| {
                t.undo_forfeit(&outcome.match_id);
                Ok(())
            })
            .await?;
            return Err(begun());
        }
        // A forfeit may complete the round.
        self.after_result(app).await;
        Ok(self.view())
    }

    /// A match of the tournament ended: its result is recorded, and a round it completes is
    /// followed by the next one when the tournament pairs by itself.
    async fn match_finished(&mut self, app: &App, match_id: &str, result: &RoundResult) {
        if self.record(app, match_id, result).await {
            self.after_result(app).await;
        }
    }

    /// Records a match's result; `false` if there was nothing to record.
    async fn record(&mut self, app: &App, match_id: &str, result: &RoundResult) -> bool {
        if !self.t.open_boards().any(|b| b.match_id == match_id) {
            // Decided already (a forfeit, a result the arbiter entered), or reported twice.
            return false;
        }
        match self.apply(app, |t| Ok(t.record(match_id, result))).await {
            Ok(recorded) => recorded,
            Err(e) => {
                // Picked up again by the next `pair_next`, or at the next start.
                tracing::error!(%match_id, error = ?e, "result not recorded");
                false
            }
        }
    }

    /// With automatic pairing, a complete round is followed by the next one at once (and a
    /// round that is complete as soon as it is paired, everyone having a bye, by the one after
    /// it).
    async fn after_result(&mut self, app: &App) {
        while self.t.wants_pairing() {
            match self.apply_aside(app, Tournament::pair_next).await {
                Ok(round) => {
                    tracing::info!(tournament = %self.t.id, round, "round paired automatically")
                }
                Err(e) => {
                    tracing::warn!(tournament = %self.t.id, error = ?e, "next round not paired");
                    return;
                }
            }
        }
    }

    /// Creates the current round's missing matches, ends those decided by forfeit that still
    /// run, and records the results of those that ended while the tournament was not listening.
    async fn catch_up(&mut self, app: &App) {
        link::open_matches(app, &self.t).await;
        let forfeited: Vec<(String, Winner)> = self
            .t
            .forfeited_boards()
            .map(|(b, winner)| (b.match_id.clone(), winner))
            .collect();
        for (match_id, winner) in forfeited {
            // The tournament's decision stands; its match was not ended before the server
            // stopped.
            if app.is_live(&match_id) {
                if let Err(e) = link::end_by_forfeit(app, &match_id, winner, false).await {
                    tracing::warn!(%match_id, error = %e, "forfeit not applied to the match");
                }
            }
        }
        let open: Vec<String> = self.t.open_boards().map(|b| b.match_id.clone()).collect();
        for match_id in open {
            if let Some(result) = link::snapshot(app, &match_id).await.and_then(|s| s.round) {
                self.record(app, &match_id, &result).await;
            }
        }
        self.after_result(app).await;
    }
}

/// Round `round` of `t`, just paired, as a preview with its pairing's identifier.
fn preview_of(t: &Tournament, round: u32) -> Result<PairingPreview, Failure> {
    let round = t
        .view()
        .pairings
        .into_iter()
        .find(|r| r.round == round)
        .ok_or_else(|| Failure::new(ErrorCode::Internal, "the paired round is missing"))?;
    Ok(PairingPreview {
        pairing: pairing_id(&round),
        round,
    })
}

/// One tournament's change computed at a time: pairing a large round takes a core and tens of
/// MB for a fraction of a second, and the rooms need the rest of a small machine.
static COMPUTING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// Runs `change` on a copy of the tournament on a blocking thread; the copy and its outcome.
async fn aside<T: Send + 'static>(
    mut t: Tournament,
    change: impl FnOnce(&mut Tournament) -> Result<T, Refused> + Send + 'static,
) -> Result<(Tournament, T), Failure> {
    let _turn = COMPUTING
        .acquire()
        .await
        .map_err(|_| Failure::new(ErrorCode::Internal, "the server is stopping"))?;
    let (t, out) = tokio::task::spawn_blocking(move || {
        let out = change(&mut t);
        (t, out)
    })
    .await
    .map_err(|_| Failure::new(ErrorCode::Internal, "the change could not be computed"))?;
    Ok((t, out?))
}
