//! Glicko-2 ratings (Mark Glickman, "Example of the Glicko-2 system", 2013), one pool per game:
//! a rated round is one rating period for each of its two players, with one game, scored by
//! the round's result (1, ½, 0), against the opponent's rating as it was before the round.

use serde::{Deserialize, Serialize};

/// The Glicko-2 scale factor between the Glicko scale and the internal one.
const SCALE: f64 = 173.7178;
/// The system constant τ: how much the volatility may change (the paper suggests 0.3 to 1.2;
/// 0.5 is its example's value and a common choice).
pub const TAU: f64 = 0.5;
/// The convergence tolerance of the volatility iteration (the paper's ε).
const EPSILON: f64 = 0.000_001;
/// A newcomer: 1500, RD 350, volatility 0.06 (the paper's defaults).
pub const START: Rating = Rating {
    rating: 1500.0,
    deviation: 350.0,
    volatility: 0.06,
    rounds: 0,
};
/// Rated rounds before a rating stops being provisional.
pub const PROVISIONAL_ROUNDS: u32 = 10;

/// A player's rating in one pool.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub rating: f64,
    /// The rating deviation (RD).
    pub deviation: f64,
    pub volatility: f64,
    /// Rated rounds played in the pool.
    pub rounds: u32,
}

impl From<&Rating> for hakem_protocol::RatingView {
    fn from(r: &Rating) -> hakem_protocol::RatingView {
        hakem_protocol::RatingView {
            rating: r.rating,
            deviation: r.deviation,
            volatility: r.volatility,
            rounds: r.rounds,
            provisional: r.provisional(),
        }
    }
}

impl Default for Rating {
    fn default() -> Rating {
        START
    }
}

/// One game of a rating period: the opponent's rating before it, and the score (1 a win, 0.5
/// a draw, 0 a loss).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Game {
    pub opponent: Rating,
    pub score: f64,
}

fn g(phi: f64) -> f64 {
    1.0 / (1.0 + 3.0 * phi * phi / (std::f64::consts::PI * std::f64::consts::PI)).sqrt()
}

fn expected(mu: f64, mu_j: f64, phi_j: f64) -> f64 {
    1.0 / (1.0 + (-g(phi_j) * (mu - mu_j)).exp())
}

impl Rating {
    /// Still provisional: too few rated rounds to be trusted.
    pub fn provisional(&self) -> bool {
        self.rounds < PROVISIONAL_ROUNDS
    }

    /// The rating after a rating period with `games` (steps 2 to 8 of the paper). A period
    /// without games only widens the deviation.
    pub fn after(&self, games: &[Game]) -> Rating {
        let mu = (self.rating - 1500.0) / SCALE;
        let phi = self.deviation / SCALE;
        let sigma = self.volatility;
        if games.is_empty() {
            let phi = (phi * phi + sigma * sigma).sqrt();
            return Rating {
                deviation: (phi * SCALE).min(START.deviation),
                ..*self
            };
        }
        // Steps 3 and 4: the estimated variance and the estimated improvement.
        let (mut inverse_v, mut sum) = (0.0, 0.0);
        for game in games {
            let mu_j = (game.opponent.rating - 1500.0) / SCALE;
            let phi_j = game.opponent.deviation / SCALE;
            let e = expected(mu, mu_j, phi_j);
            inverse_v += g(phi_j) * g(phi_j) * e * (1.0 - e);
            sum += g(phi_j) * (game.score - e);
        }
        let v = 1.0 / inverse_v;
        let delta = v * sum;
        let sigma = new_volatility(phi, sigma, v, delta);
        // Steps 6 to 8.
        let phi_star = (phi * phi + sigma * sigma).sqrt();
        let phi = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
        let mu = mu + phi * phi * sum;
        Rating {
            rating: SCALE * mu + 1500.0,
            deviation: (SCALE * phi).min(START.deviation),
            volatility: sigma,
            rounds: self.rounds + 1,
        }
    }
}

/// Step 5: the new volatility σ', by the Illinois algorithm on f(x) = 0.
fn new_volatility(phi: f64, sigma: f64, v: f64, delta: f64) -> f64 {
    let a = (sigma * sigma).ln();
    let f = |x: f64| {
        let ex = x.exp();
        ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex).powi(2))
            - (x - a) / (TAU * TAU)
    };
    let mut big_a = a;
    let mut big_b = if delta * delta > phi * phi + v {
        (delta * delta - phi * phi - v).ln()
    } else {
        let mut k = 1.0;
        // f is decreasing with f(a) = 0 > f(a - kτ) for some k: bounded for finite inputs,
        // and capped in case of a non-finite one.
        while f(a - k * TAU) < 0.0 && k < 1000.0 {
            k += 1.0;
        }
        a - k * TAU
    };
    let (mut f_a, mut f_b) = (f(big_a), f(big_b));
    for _ in 0..200 {
        if (big_b - big_a).abs() <= EPSILON {
            break;
        }
        let c = big_a + (big_a - big_b) * f_a / (f_b - f_a);
        let f_c = f(c);
        if f_c * f_b <= 0.0 {
            big_a = big_b;
            f_a = f_b;
        } else {
            f_a /= 2.0;
        }
        big_b = c;
        f_b = f_c;
    }
    (big_a / 2.0).exp()
}

/// The pool a match is rated in: Pentago under each rule set apart, Quoridor, and Pente (its
/// presets share one pool: the same game with or without the tournament rule).
pub fn pool(game: &str, variant: &str) -> String {
    match game {
        "pentago" => format!("pentago-{variant}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rated(rating: f64, deviation: f64) -> Rating {
        Rating {
            rating,
            deviation,
            ..START
        }
    }

    /// The worked example of Glickman's paper, section "Example calculation".
    #[test]
    fn the_papers_example_comes_out_as_published() {
        let player = rated(1500.0, 200.0);
        let games = [
            Game {
                opponent: rated(1400.0, 30.0),
                score: 1.0,
            },
            Game {
                opponent: rated(1550.0, 100.0),
                score: 0.0,
            },
            Game {
                opponent: rated(1700.0, 300.0),
                score: 0.0,
            },
        ];
        let after = player.after(&games);
        // Published, each to the digits given: μ' = -0.2069, φ' = 0.8722, σ' = 0.05999, and
        // from those r' = 1464.06, RD' = 151.52 (so within the rounding of μ' and φ').
        let mu = (after.rating - 1500.0) / SCALE;
        let phi = after.deviation / SCALE;
        assert!((mu - -0.2069).abs() < 0.00005, "{after:?}");
        assert!((phi - 0.8722).abs() < 0.00005, "{after:?}");
        // (σ' is printed cut at 0.05999; it is 0.0599960.)
        assert!((after.volatility - 0.05999).abs() < 0.00001, "{after:?}");
        assert!((after.rating - 1464.06).abs() < 0.01, "{after:?}");
        assert!((after.deviation - 151.52).abs() < 0.01, "{after:?}");
        assert_eq!(after.rounds, 1);
    }

    #[test]
    fn a_period_without_games_only_widens_the_deviation() {
        let player = rated(1600.0, 100.0);
        let after = player.after(&[]);
        assert_eq!(after.rating, 1600.0);
        assert_eq!(after.rounds, 0);
        let expected = ((100.0 / SCALE).powi(2) + 0.06f64.powi(2)).sqrt() * SCALE;
        assert!((after.deviation - expected).abs() < 1e-9);
        assert_eq!(
            START.after(&[]).deviation,
            350.0,
            "never wider than a newcomer's"
        );
    }

    #[test]
    fn wins_raise_losses_lower_and_a_draw_between_equals_changes_nothing() {
        let (a, b) = (START, START);
        let win = a.after(&[Game {
            opponent: b,
            score: 1.0,
        }]);
        let loss = b.after(&[Game {
            opponent: a,
            score: 0.0,
        }]);
        assert!(win.rating > 1500.0 && loss.rating < 1500.0);
        assert!((win.rating - 1500.0 + loss.rating - 1500.0).abs() < 1e-9);
        let draw = a.after(&[Game {
            opponent: b,
            score: 0.5,
        }]);
        assert!((draw.rating - 1500.0).abs() < 1e-9);
        assert!(draw.deviation < 350.0);
        assert!(win.provisional());
    }

    #[test]
    fn pools_keep_the_pentago_rule_sets_apart() {
        assert_eq!(pool("pentago", "tr"), "pentago-tr");
        assert_eq!(pool("pentago", "classic"), "pentago-classic");
        assert_eq!(pool("pente", "free"), "pente");
        assert_eq!(pool("pente", "tournament"), "pente");
        assert_eq!(pool("quoridor", "standard"), "quoridor");
    }
}
