//! A match's claims as events tell them: the one fold of `claim` and `claim_resolved` shared by
//! the round (server) and the clients.

use crate::{ClaimStatus, ClaimView, Event};

/// Folds a `claim` or `claim_resolved` event into `claims`; other events change nothing.
/// `set` and `ply` (the current set and its completed moves) stand in for the fields of a claim
/// stored before events carried them.
pub fn fold_claim(claims: &mut Vec<ClaimView>, event: &Event, set: u8, ply: u32) {
    match event {
        Event::Claim {
            seat,
            text,
            id,
            set: claimed_set,
            ply: claimed_ply,
        } => claims.push(ClaimView {
            id: id.unwrap_or(claims.len() as u32 + 1),
            seat: *seat,
            text: text.clone(),
            set: claimed_set.unwrap_or(set),
            ply: claimed_ply.unwrap_or(ply),
            status: ClaimStatus::Open,
            ruling: None,
        }),
        Event::ClaimResolved {
            claim,
            upheld,
            reason,
        } => {
            if let Some(c) = claims.iter_mut().find(|c| c.id == *claim) {
                c.status = if *upheld {
                    ClaimStatus::Upheld
                } else {
                    ClaimStatus::Rejected
                };
                c.ruling = Some(reason.clone());
            }
        }
        _ => {}
    }
}
