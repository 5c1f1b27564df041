//! Any text a client sends: read as a frame or refused with a message, and a frame that reads
//! comes back the same through JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match hakem_protocol::parse_client_frame(text) {
        Ok(frame) => {
            let again = serde_json::to_string(&frame).expect("a frame writes as JSON");
            let reread = hakem_protocol::parse_client_frame(&again).expect("and reads back");
            assert_eq!(reread.message, frame.message);
        }
        Err((_, message)) => assert!(!message.is_empty()),
    }
});
