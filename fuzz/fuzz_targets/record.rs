//! Game records: read or refused, never a panic; a record that reads is checked move by move
//! against the rules and writes back to a text that reads again.
#![no_main]

use hakem_games::record::Record;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(record) = Record::parse(text) {
        let _ = record.verify();
        Record::parse(&record.to_text()).expect("a written record reads back");
    }
});
