//! `Uuid` for programs (Low's `uuid.*` rows; docs/language.md, "Ids"): each rule once, for the
//! Rust path, the LLVM path (`cabi::ids`) and the interpreter's host, over the `uuid` crate.
//!
//! A `Uuid` is 128 bits; in emitted memory 16 bytes in the UUID's own (big-endian) byte order,
//! 8-aligned. Its text, in JSON and in SQLite, is the canonical lowercase hyphenated form
//! (`0192f0c2-5c3e-7b9a-8f00-5d1c2e3f4a5b`); any form the `uuid` crate reads is accepted
//! (upper case, braces, a `urn:uuid:` prefix, no hyphens). `uuid_v7()` is time-ordered (its
//! first 48 bits are the Unix time in milliseconds, then random bits), so that ids made later
//! sort later, which keeps a primary key's index append-mostly; `uuid_v4()` is 122 random bits.

/// A `Uuid` on the Rust path. Ordered by its bytes (so v7 ids by time), written in JSON as its
/// canonical text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Uuid(pub [u8; 16]);

/// A new time-ordered (version 7) UUID.
pub fn v7_bytes() -> [u8; 16] {
    *uuid::Uuid::now_v7().as_bytes()
}

/// A new random (version 4) UUID.
pub fn v4_bytes() -> [u8; 16] {
    *uuid::Uuid::new_v4().as_bytes()
}

/// The canonical text of `bytes`: lowercase, hyphenated.
pub fn format(bytes: [u8; 16]) -> String {
    uuid::Uuid::from_bytes(bytes).hyphenated().to_string()
}

/// The UUID `text` names, in any form the `uuid` crate reads; `None` for anything else.
pub fn parse(text: &str) -> Option<[u8; 16]> {
    uuid::Uuid::try_parse(text).ok().map(|u| *u.as_bytes())
}

/// `uuid_v7()` on the Rust path.
pub fn v7() -> Uuid {
    Uuid(v7_bytes())
}

/// `uuid_v4()` on the Rust path.
pub fn v4() -> Uuid {
    Uuid(v4_bytes())
}

/// `parse_uuid(text)` on the Rust path.
pub fn parse_uuid(text: &str) -> Option<Uuid> {
    parse(text).map(Uuid)
}

impl std::fmt::Display for Uuid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format(self.0))
    }
}

impl serde::Serialize for Uuid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format(self.0))
    }
}

impl<'de> serde::Deserialize<'de> for Uuid {
    /// From its text; anything else is serde's `invalid value` (a 422 in a request body), the
    /// same words the shaped decoder (`shaped_json`) gives, since it calls this.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Uuid, D::Error> {
        d.deserialize_str(crate::json::TextVisitor { expecting: "a UUID", parse }).map(Uuid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v7_ids_are_time_ordered_and_v4_ids_random() {
        let (a, b) = (v7(), v7());
        assert!(a < b, "{a} then {b}");
        assert_eq!(a.0[6] >> 4, 7, "version 7: {a}");
        assert_eq!(v4().0[6] >> 4, 4);
        assert_ne!(v4(), v4());
    }

    #[test]
    fn text_is_canonical_and_read_back_in_any_form() {
        let bytes = [0x01, 0x92, 0xf0, 0xc2, 0x5c, 0x3e, 0x7b, 0x9a, 0x8f, 0x00, 0x5d, 0x1c, 0x2e, 0x3f, 0x4a, 0x5b];
        assert_eq!(format(bytes), "0192f0c2-5c3e-7b9a-8f00-5d1c2e3f4a5b");
        for text in [
            "0192f0c2-5c3e-7b9a-8f00-5d1c2e3f4a5b",
            "0192F0C2-5C3E-7B9A-8F00-5D1C2E3F4A5B",
            "0192f0c25c3e7b9a8f005d1c2e3f4a5b",
            "urn:uuid:0192f0c2-5c3e-7b9a-8f00-5d1c2e3f4a5b",
        ] {
            assert_eq!(parse(text), Some(bytes), "{text}");
        }
        for bad in ["", "0192f0c2", "not-a-uuid", "0192f0c2-5c3e-7b9a-8f00-5d1c2e3f4a5g"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
