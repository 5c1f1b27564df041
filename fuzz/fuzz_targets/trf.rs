//! TRF(x) tournament files: read or refused with a line number, never a panic; what reads
//! writes back and reads the same.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(tournament) = hakem_pairing::parse_trf(text) {
        let written = hakem_pairing::write_trf(&tournament);
        hakem_pairing::parse_trf(&written).expect("a written TRF reads back");
    }
});
