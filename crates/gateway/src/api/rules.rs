//! The limits the API enforces on request fields, each defined once: a
//! handler checks a value with its rule, and the OpenAPI document takes the
//! same rule's `minLength`/`maxLength`/`pattern`/`minimum`/`maximum` (see
//! [`super::schema`]), so what the document calls valid and what a handler
//! accepts cannot drift apart.
//!
//! Lengths count characters (Unicode scalar values), as JSON Schema does.
//! Each rule's character class keeps its longest value within what the
//! store takes in bytes (an id is printable ASCII, a name at most 16
//! characters of up to 4 bytes each).

use serde_json::{Value, json};

use super::error::ApiError;

/// Which characters a text field may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chars {
    /// Anything but control characters (`char::is_control`: C0, DEL, C1).
    NoControl,
    /// Printable ASCII, space included.
    Printable,
    /// `A-Z a-z 0-9 . _ -`.
    Id,
    /// An id or a socket address: `A-Z a-z 0-9 . _ - : [ ]`.
    HostId,
    /// A party code's letters: `A-Z 2-9` without `I` and `O`.
    PartyCode,
}

impl Chars {
    /// Whether `c` is one of them.
    pub(crate) fn allows(self, c: char) -> bool {
        match self {
            Self::NoControl => !c.is_control(),
            Self::Printable => matches!(c, ' '..='~'),
            Self::Id => c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'),
            Self::HostId => Self::Id.allows(c) || matches!(c, ':' | '[' | ']'),
            Self::PartyCode => matches!(c, 'A'..='H' | 'J'..='N' | 'P'..='Z' | '2'..='9'),
        }
    }

    /// The JSON Schema `pattern` (ECMA-262) of a string of them.
    pub(crate) fn pattern(self) -> &'static str {
        match self {
            Self::NoControl => "^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
            Self::Printable => "^[ -~]*$",
            Self::Id => "^[A-Za-z0-9_.-]*$",
            Self::HostId => "^[A-Za-z0-9_.:\\[\\]-]*$",
            Self::PartyCode => "^[A-HJ-NP-Z2-9]*$",
        }
    }

    fn says(self) -> &'static str {
        match self {
            Self::NoControl => "no control characters",
            Self::Printable => "printable ASCII",
            Self::Id => "A-Z a-z 0-9 . _ -",
            Self::HostId => "A-Z a-z 0-9 . _ - : [ ]",
            Self::PartyCode => "A-Z 2-9 (no I, O, 0, 1)",
        }
    }
}

/// A text field: `min..=max` characters of a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Text {
    /// Its name in the request.
    pub field: &'static str,
    /// Fewest characters (0: may be empty).
    pub min: usize,
    /// Most characters.
    pub max: usize,
    /// Which characters.
    pub chars: Chars,
}

impl Text {
    /// Refuses `value` (400, naming the field) unless the rule holds.
    pub(crate) fn check(&self, value: &str) -> Result<(), ApiError> {
        let count = value.chars().count();
        if count < self.min || count > self.max || !value.chars().all(|c| self.chars.allows(c)) {
            return Err(ApiError::invalid(
                self.field,
                format!(
                    "{}: must be {}..={} characters, {}",
                    self.field,
                    self.min,
                    self.max,
                    self.chars.says()
                ),
            ));
        }
        Ok(())
    }

    /// Its JSON Schema keywords (the type comes from the field's own).
    pub(crate) fn schema(&self) -> Value {
        json!({
            "minLength": self.min,
            "maxLength": self.max,
            "pattern": self.chars.pattern(),
        })
    }
}

/// An integer field in `min..=max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Int {
    /// Its name in the request.
    pub field: &'static str,
    /// Smallest value.
    pub min: i64,
    /// Largest value.
    pub max: i64,
}

impl Int {
    /// Refuses `value` (400, naming the field) unless it is in range.
    pub(crate) fn check(&self, value: i64) -> Result<(), ApiError> {
        if !(self.min..=self.max).contains(&value) {
            return Err(ApiError::invalid(
                self.field,
                format!("{}: must be {}..={}", self.field, self.min, self.max),
            ));
        }
        Ok(())
    }

    /// Its JSON Schema keywords (the type comes from the field's own).
    pub(crate) fn schema(&self) -> Value {
        json!({ "minimum": self.min, "maximum": self.max })
    }

    /// Its range, for a value that cannot be negative.
    pub(crate) fn unsigned(&self) -> std::ops::RangeInclusive<u64> {
        self.min.max(0).unsigned_abs()..=self.max.max(0).unsigned_abs()
    }
}

/// A guest's device id.
pub(crate) const DEVICE_ID: Text = Text {
    field: "device_id",
    min: 1,
    max: hightick_store::MAX_ID_LEN,
    chars: Chars::Printable,
};

/// A purchase's idempotency key.
pub(crate) const IDEMPOTENCY_KEY: Text = Text {
    field: "idempotency_key",
    min: 1,
    max: hightick_store::MAX_ID_LEN,
    chars: Chars::Printable,
};

/// A shop item's id (as the config's catalog has them).
pub(crate) const ITEM_ID: Text = Text {
    field: "item_id",
    min: 1,
    max: 64,
    chars: Chars::Id,
};

/// Most characters of a name: four bytes each fit the store's limit.
const NAME_CHARS: usize = hightick_store::MAX_NAME_LEN / 4;

/// An account's login name.
pub(crate) const NAME: Text = Text {
    field: "name",
    min: 1,
    max: NAME_CHARS,
    chars: Chars::NoControl,
};

/// A player's display name.
pub(crate) const DISPLAY_NAME: Text = Text {
    field: "display_name",
    min: 1,
    max: NAME_CHARS,
    chars: Chars::NoControl,
};

/// A password: four bytes a character fit the hasher's limit.
pub(crate) const PASSWORD: Text = Text {
    field: "password",
    min: 1,
    max: hightick_store::password::MAX_PASSWORD_BYTES / 4,
    chars: Chars::NoControl,
};

/// How many of an item to buy.
pub(crate) const QUANTITY: Int = Int {
    field: "quantity",
    min: 1,
    max: hightick_store::MAX_QUANTITY,
};

/// Match history lines asked for (`?limit=`).
pub(crate) const LIMIT: Int = Int {
    field: "limit",
    min: 1,
    max: 100,
};

/// A host's match capacity.
pub(crate) const CAPACITY: Int = Int {
    field: "capacity",
    min: 1,
    max: 100_000,
};

/// A host's stable id (its admin address when it names none).
pub(crate) const HOST_ID: Text = Text {
    field: "host_id",
    min: 1,
    max: 64,
    chars: Chars::HostId,
};

/// A host's region tag (empty: none).
pub(crate) const REGION: Text = Text {
    field: "region",
    min: 0,
    max: 32,
    chars: Chars::Id,
};

/// The game a host serves (empty: unnamed).
pub(crate) const GAME: Text = Text {
    field: "game",
    min: 0,
    max: 64,
    chars: Chars::Id,
};

/// A party's code (what friends join it by).
pub(crate) const PARTY_CODE: Text = Text {
    field: "code",
    min: 6,
    max: 6,
    chars: Chars::PartyCode,
};

/// A result's match id (the gateway's allocation id).
pub(crate) const MATCH_ID: Text = Text {
    field: "match_id",
    min: 1,
    max: hightick_store::MAX_ID_LEN,
    chars: Chars::Printable,
};

/// A result's mode.
pub(crate) const RESULT_MODE: Text = Text {
    field: "mode",
    min: 1,
    max: hightick_store::MAX_ID_LEN,
    chars: Chars::Printable,
};

/// A result's players.
pub(crate) const PLAYERS: Items = Items {
    field: "players",
    min: 1,
    max: 128,
};

/// A player's reward in a result.
pub(crate) const REWARD: Int = Int {
    field: "reward",
    min: 0,
    max: hightick_store::MAX_AMOUNT,
};

/// A player's score in a result.
pub(crate) const SCORE: Int = Int {
    field: "score",
    min: -hightick_store::MAX_SCORE,
    max: hightick_store::MAX_SCORE,
};

/// An array field of `min..=max` items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Items {
    /// Its name in the request.
    pub field: &'static str,
    /// Fewest items.
    pub min: usize,
    /// Most items.
    pub max: usize,
}

impl Items {
    /// Refuses `count` items (400, naming the field) unless in range.
    pub(crate) fn check(&self, count: usize) -> Result<(), ApiError> {
        if !(self.min..=self.max).contains(&count) {
            return Err(ApiError::invalid(
                self.field,
                format!(
                    "{}: must hold {}..={} items",
                    self.field, self.min, self.max
                ),
            ));
        }
        Ok(())
    }

    /// Its JSON Schema keywords.
    pub(crate) fn schema(&self) -> Value {
        json!({ "minItems": self.min, "maxItems": self.max })
    }
}

// The longest value of each rule fits what the store takes, in bytes.
const _: () = {
    let widest = 4; // '\u{10FFFF}'.len_utf8()
    assert!(NAME.max * widest <= hightick_store::MAX_NAME_LEN);
    assert!(DISPLAY_NAME.max * widest <= hightick_store::MAX_NAME_LEN);
    assert!(PASSWORD.max * widest <= hightick_store::password::MAX_PASSWORD_BYTES);
    assert!(DEVICE_ID.max <= hightick_store::MAX_ID_LEN);
    assert!(IDEMPOTENCY_KEY.max <= hightick_store::MAX_ID_LEN);
    assert!(MATCH_ID.max <= hightick_store::MAX_ID_LEN);
    assert!(RESULT_MODE.max <= hightick_store::MAX_ID_LEN);
};

/// Every body rule, by the schema (request body type) it belongs to.
pub(crate) const BODY_RULES: &[(&str, Rule)] = &[
    ("GuestLogin", Rule::Text(DEVICE_ID)),
    ("Credentials", Rule::Text(NAME)),
    ("Credentials", Rule::Text(PASSWORD)),
    ("Rename", Rule::Text(DISPLAY_NAME)),
    ("Purchase", Rule::Text(ITEM_ID)),
    ("Purchase", Rule::Int(QUANTITY)),
    ("Purchase", Rule::Text(IDEMPOTENCY_KEY)),
    ("Heartbeat", Rule::Text(HOST_ID)),
    ("Heartbeat", Rule::Int(CAPACITY)),
    ("Heartbeat", Rule::Text(REGION)),
    ("Heartbeat", Rule::Text(GAME)),
    ("Join", Rule::Text(REGION)),
    ("JoinParty", Rule::Text(PARTY_CODE)),
    ("MatchResult", Rule::Text(MATCH_ID)),
    ("MatchResult", Rule::Text(RESULT_MODE)),
    ("MatchResult", Rule::Items(PLAYERS)),
    ("PlayerResult", Rule::Int(REWARD)),
    ("PlayerResult", Rule::Int(SCORE)),
];

/// One field's rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// A text field.
    Text(Text),
    /// An integer field.
    Int(Int),
    /// An array field.
    Items(Items),
}

impl Rule {
    /// The field it governs.
    pub(crate) fn field(&self) -> &'static str {
        match self {
            Self::Text(t) => t.field,
            Self::Int(i) => i.field,
            Self::Items(i) => i.field,
        }
    }

    /// Its JSON Schema keywords.
    pub(crate) fn schema(&self) -> Value {
        match self {
            Self::Text(t) => t.schema(),
            Self::Int(i) => i.schema(),
            Self::Items(i) => i.schema(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_count_characters_and_classes_hold() {
        assert!(NAME.check("é").is_ok());
        assert!(NAME.check(&"ü".repeat(16)).is_ok());
        assert!(NAME.check(&"ü".repeat(17)).is_err());
        assert!(NAME.check("").is_err());
        assert!(NAME.check("a\u{7}b").is_err());
        assert!(NAME.check("a\u{85}b").is_err());
        assert!(ITEM_ID.check("skin.red").is_ok());
        assert!(ITEM_ID.check("skin red").is_err());
        assert!(DEVICE_ID.check("dev ice-1").is_ok());
        assert!(DEVICE_ID.check("dévice").is_err());
        assert!(REGION.check("").is_ok());
        assert!(QUANTITY.check(0).is_err());
        let e = QUANTITY.check(MAX_QUANTITY_PLUS_ONE).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("quantity"));
    }

    const MAX_QUANTITY_PLUS_ONE: i64 = hightick_store::MAX_QUANTITY + 1;
}
