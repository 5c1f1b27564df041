//! A request's `id`, echoed as `re` exactly as the client wrote it: a number of any size or
//! precision comes back digit for digit (a JSON number read as `f64` would not).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

/// A JSON string or number, kept as its text.
#[derive(Clone)]
pub struct RequestId(Box<RawValue>);

impl RequestId {
    /// The id as written, if it is a string or a number; anything else is not an id.
    pub fn from_raw(raw: &RawValue) -> Option<RequestId> {
        let text = raw.get().trim();
        let first = text.bytes().next()?;
        (first == b'"' || first == b'-' || first.is_ascii_digit())
            .then(|| RawValue::from_string(text.to_string()).ok().map(RequestId))
            .flatten()
    }

    /// The JSON text of the id.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The id as a whole number, if it is one that fits.
    pub fn as_u64(&self) -> Option<u64> {
        self.get().parse().ok()
    }

    fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(_) | Value::Number(_) => {
                RawValue::from_string(value.to_string()).ok().map(RequestId)
            }
            _ => None,
        }
    }
}

impl From<u64> for RequestId {
    fn from(n: u64) -> RequestId {
        RequestId::from_value(&Value::from(n)).expect("a number is an id")
    }
}

impl From<&str> for RequestId {
    fn from(text: &str) -> RequestId {
        RequestId::from_value(&Value::from(text)).expect("a string is an id")
    }
}

impl PartialEq for RequestId {
    fn eq(&self, other: &RequestId) -> bool {
        self.get() == other.get()
    }
}

impl std::fmt::Debug for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.get())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// Read as a JSON value: inside a tagged message the text is gone by the time a field is read
/// (serde buffers it), so this path is exact only for ids an `f64` holds.
/// [`crate::parse_client_frame`] reads the id from the frame's own text instead.
impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RequestId, D::Error> {
        let value = Value::deserialize(deserializer)?;
        RequestId::from_value(&value)
            .ok_or_else(|| serde::de::Error::custom("`id` must be a string or a number"))
    }
}

/// The `id` of a frame as its text, without reading the rest of the frame into values.
pub(crate) fn id_of(text: &str) -> Result<Option<RequestId>, ()> {
    #[derive(Deserialize)]
    struct IdOnly<'a> {
        #[serde(borrow, default)]
        id: Option<&'a RawValue>,
    }
    match serde_json::from_str::<IdOnly>(text) {
        Ok(IdOnly { id: None }) => Ok(None),
        Ok(IdOnly { id: Some(raw) }) if raw.get() == "null" => Ok(None),
        Ok(IdOnly { id: Some(raw) }) => RequestId::from_raw(raw).map(Some).ok_or(()),
        Err(_) => Err(()),
    }
}
