//! Initial ranking: surname, then given name, in Turkish alphabetical order.
//!
//! ICU4X's collator with the Turkish locale does the work (Ç after C, Ğ after G, I before İ,
//! Ö after O, Ş after S, Ü after U, and Turkish case mapping), rather than hand-written tables.

use std::cmp::Ordering;
use std::sync::OnceLock;

use icu_collator::options::{CollatorOptions, Strength};
use icu_collator::{Collator, CollatorBorrowed};
use icu_locale_core::locale;

fn collator() -> Option<&'static CollatorBorrowed<'static>> {
    static C: OnceLock<Option<CollatorBorrowed<'static>>> = OnceLock::new();
    C.get_or_init(|| {
        let mut options = CollatorOptions::default();
        // Tertiary: letters first, then accents, then case, so the order is total in practice.
        options.strength = Some(Strength::Tertiary);
        Collator::try_new(locale!("tr").into(), options).ok()
    })
    .as_ref()
}

/// Compares two strings in Turkish alphabetical order.
pub fn turkish_cmp(a: &str, b: &str) -> Ordering {
    match collator() {
        Some(c) => c.compare(a, b).then_with(|| a.cmp(b)),
        // The compiled data is built in, so this is unreachable in practice; code-point order
        // keeps the function total anyway.
        None => a.cmp(b),
    }
}

/// The initial ranking of players given as (surname, given name): the returned indices in
/// ranking order (pairing number i+1 for position i). Exact ties keep their input order.
pub fn initial_order(names: &[(String, String)]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..names.len()).collect();
    idx.sort_by(|&x, &y| {
        let (sx, gx) = &names[x];
        let (sy, gy) = &names[y];
        turkish_cmp(sx, sy)
            .then_with(|| turkish_cmp(gx, gy))
            .then(x.cmp(&y))
    });
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn before(a: &str, b: &str) {
        assert_eq!(turkish_cmp(a, b), Ordering::Less, "{a} before {b}");
        assert_eq!(turkish_cmp(b, a), Ordering::Greater, "{b} after {a}");
    }

    #[test]
    fn turkish_letters() {
        before("Cengiz", "Çelik");
        before("Işık", "İnce");
        before("Oral", "Öztürk");
        before("Gül", "Ğ");
        before("Sarı", "Şahin");
        before("Uysal", "Ünal");
        before("ılık", "ince");
    }

    #[test]
    fn surname_then_given_name() {
        let names = vec![
            ("Öztürk".to_string(), "Ali".to_string()),
            ("Çelik".to_string(), "Can".to_string()),
            ("Cengiz".to_string(), "Zehra".to_string()),
            ("Çelik".to_string(), "Bora".to_string()),
            ("İnce".to_string(), "Ece".to_string()),
            ("Işık".to_string(), "Deniz".to_string()),
            ("Oral".to_string(), "Efe".to_string()),
        ];
        let order = initial_order(&names);
        let got: Vec<&str> = order.iter().map(|&i| names[i].0.as_str()).collect();
        assert_eq!(
            got,
            ["Cengiz", "Çelik", "Çelik", "Işık", "İnce", "Oral", "Öztürk"]
        );
        assert_eq!(names[order[1]].1, "Bora");
    }
}
