//! The little the load tool reads of a server frame, parsed without building a JSON tree: the
//! tool shares the machine with the server it measures, so its own work must stay small.

use std::borrow::Cow;

use serde::Deserialize;

/// A frame as the load tool sees it; fields it does not need are skipped unread.
#[derive(Debug, Deserialize)]
pub struct Frame<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    /// The tool's requests carry numeric ids.
    #[serde(default)]
    pub re: Option<u64>,
    #[serde(rename = "match", default, borrow)]
    pub match_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub event: Option<Event<'a>>,
    /// The events of one action, in one `events` frame (the `batch` extension).
    #[serde(default, borrow)]
    pub events: Option<Vec<Frame<'a>>>,
    #[serde(default, borrow)]
    pub seat_tokens: Option<Tokens<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct Event<'a> {
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    #[serde(default, borrow)]
    pub seat: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub reason: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
pub struct Tokens<'a> {
    #[serde(borrow)]
    pub p1: Cow<'a, str>,
    #[serde(borrow)]
    pub p2: Cow<'a, str>,
}

impl<'a> Frame<'a> {
    pub fn parse(text: &'a str) -> Option<Frame<'a>> {
        serde_json::from_str(text).ok()
    }

    /// The events in this frame, whether it is one `event` or an `events` batch.
    pub fn each_event(&self, mut visit: impl FnMut(&str, &Event<'a>)) {
        match (self.kind.as_ref(), &self.event, &self.events) {
            ("event", Some(event), _) => visit(self.match_id.as_deref().unwrap_or_default(), event),
            // Batches hold plain event frames; they do not nest.
            ("events", _, Some(frames)) => {
                for frame in frames {
                    if let (Some(event), Some(m)) = (&frame.event, &frame.match_id) {
                        visit(m, event);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_and_batched_events_are_read_alike() {
        let one = r#"{"type":"event","match":"m","seq":3,"event":{"kind":"moved","seat":"p1","move":"a1sw"},"clocks":null}"#;
        let batch = r#"{"type":"events","match":"m","events":[
            {"type":"event","match":"m","seq":3,"event":{"kind":"moved","seat":"p1","move":"a1sw"},"clocks":null},
            {"type":"event","match":"m","seq":4,"event":{"kind":"pressed","seat":"p1"},"clocks":null}]}"#;
        let kinds = |text: &str| {
            let mut kinds = Vec::new();
            Frame::parse(text)
                .unwrap()
                .each_event(|m, e| kinds.push(format!("{m}:{}", e.kind)));
            kinds
        };
        assert_eq!(kinds(one), ["m:moved"]);
        assert_eq!(kinds(batch), ["m:moved", "m:pressed"]);
        let created = Frame::parse(
            r#"{"type":"match_created","re":4,"match":"m","seat_tokens":{"p1":"a","p2":"b"},"arbiter_token":"c"}"#,
        )
        .unwrap();
        assert_eq!(created.re, Some(4));
        assert_eq!(created.seat_tokens.unwrap().p2, "b");
        assert!(Frame::parse("not json").is_none());
    }
}
