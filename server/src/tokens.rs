//! Seat, arbiter and organizer tokens: 128 random bits, compared in constant time.

/// A secret token, as handed to its holder.
pub type Token = String;

/// A fresh token: 128 bits from the operating system's generator, as 32 hex digits.
pub fn new_token() -> Token {
    random_hex(16)
}

/// A short public identifier (a match id): 60 random bits in 12 characters of base 32.
pub fn new_id() -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let mut bytes = [0u8; 12];
    fill(&mut bytes);
    bytes
        .iter()
        .map(|b| ALPHABET[usize::from(b % 32)] as char)
        .collect()
}

fn random_hex(len: usize) -> String {
    let mut bytes = vec![0u8; len];
    fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn fill(bytes: &mut [u8]) {
    // Without the operating system's randomness no token would be safe; refusing to run is
    // the only honest answer.
    getrandom::fill(bytes).expect("the operating system's random generator is unavailable");
}

/// A fair coin from the operating system's generator.
pub fn coin() -> bool {
    let mut byte = [0u8];
    fill(&mut byte);
    byte[0] % 2 == 0
}

/// Compares a presented token with the real one without leaking, through timing, how much of
/// it matched.
pub fn same_token(real: &str, presented: &str) -> bool {
    let (a, b) = (real.as_bytes(), presented.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let difference = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}

/// The SHA-256 digest of a token, in hex: what is kept of a session token, so that neither
/// the database nor the server's memory holds one a thief could present.
pub fn digest(token: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_128_bit_hex_and_differ() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn same_token_compares_whole_tokens() {
        let token = new_token();
        assert!(same_token(&token, &token.clone()));
        assert!(!same_token(&token, &token[..31]));
        assert!(!same_token(&token, ""));
        let mut other = token.clone().into_bytes();
        other[31] = if other[31] == b'0' { b'1' } else { b'0' };
        assert!(!same_token(&token, &String::from_utf8(other).unwrap()));
    }
}
