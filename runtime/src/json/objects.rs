//! The rule that a class is a JSON object at every depth of a JSON text (a request body,
//! `json.decode`), for the Rust path.
//!
//! serde's derived `Deserialize` for a struct also accepts the sequence form (`[1, "a", 30]`,
//! fields by position) because serde_json's `deserialize_struct` hands a `[` to the visitor's
//! `visit_seq`. docs/http.md allows objects only: a filter in front of the service that reads
//! field names would be bypassed by the sequence form, and reordering a class's fields would
//! silently change what such bodies mean. [`Objects`] wraps the deserializer and everything it
//! hands out (visitors, sequence and map accesses, seeds), so that each struct, however deep, is
//! read with `deserialize_map`: a `[` where a class belongs is then serde_json's own "invalid
//! type: sequence, expected struct X". The LLVM path's decoder reads classes with
//! `deserialize_map` itself (`shaped_json::Seed`), so both paths answer alike.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

/// A deserializer, visitor, access or seed whose structs are read as maps only.
pub(crate) struct Objects<T>(pub(crate) T);

/// Forwards `deserialize_*` methods that take only a visitor, wrapping it.
macro_rules! forward_deserialize {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method(Objects(visitor))
        }
    )*};
}

/// Forwards the integer `deserialize_*` methods, whose visitor takes a whole number written
/// with a fraction or an exponent as the integer it is ([`Whole`]).
macro_rules! forward_integers {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method(Whole(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Objects<D> {
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any deserialize_bool
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string
        deserialize_bytes deserialize_byte_buf deserialize_option deserialize_unit deserialize_seq
        deserialize_map deserialize_identifier deserialize_ignored_any
    }

    forward_integers! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, Objects(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, Objects(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Objects(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, Objects(visitor))
    }

    /// The rule itself: a struct is read as a map, so a sequence is a type error.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(Objects(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, Objects(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// Forwards `visit_*` methods of one plain value.
macro_rules! forward_visit {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E: de::Error>(self, value: $ty) -> Result<V::Value, E> {
            self.0.$method(value)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Objects<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward_visit! {
        visit_bool(bool) visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64) visit_i128(i128)
        visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64) visit_u128(u128) visit_f32(f32)
        visit_f64(f64) visit_char(char) visit_str(&str) visit_borrowed_str(&'de str) visit_string(String)
        visit_bytes(&[u8]) visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(Objects(deserializer))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(Objects(deserializer))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(Objects(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Objects(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.0.visit_enum(Objects(data))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Objects<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Objects(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Objects<A> {
    type Error = A::Error;

    /// A key is never a class, and an integer key is read as written (`"1.0"` is no `i64`
    /// key, as on the LLVM path): the seed goes unwrapped, without [`Whole`].
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(seed)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Objects(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Objects<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Objects(deserializer))
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Objects<A> {
    type Error = A::Error;
    type Variant = Objects<A::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self::Variant), A::Error> {
        let (value, variant) = self.0.variant_seed(Objects(seed))?;
        Ok((value, Objects(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Objects<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        self.0.newtype_variant_seed(Objects(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Objects(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(fields, Objects(visitor))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::Objects;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Address {
        city: String,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Person {
        name: String,
        home: Option<Address>,
        past: Vec<Address>,
    }

    fn decode(text: &str) -> Result<Person, String> {
        let mut json = serde_json::Deserializer::from_str(text);
        Person::deserialize(Objects(&mut json)).map_err(|e| e.to_string())
    }

    #[test]
    fn objects_decode_as_the_derive_decodes_them() {
        let person = decode(r#"{"name":"Ada","home":{"city":"London"},"past":[{"city":"Paris"}]}"#);
        let expected = Person {
            name: "Ada".into(),
            home: Some(Address { city: "London".into() }),
            past: vec![Address { city: "Paris".into() }],
        };
        assert_eq!(person, Ok(expected));
    }

    #[test]
    fn a_sequence_is_refused_for_a_struct_at_any_depth() {
        for text in [
            r#"["Ada",null,[]]"#,
            r#"{"name":"Ada","home":["London"],"past":[]}"#,
            r#"{"name":"Ada","home":null,"past":[["Paris"]]}"#,
        ] {
            let error = decode(text).expect_err(text);
            assert!(error.starts_with("invalid type: sequence, expected struct "), "{text}: {error}");
        }
        // Without the wrapper, the derive takes the sequence form.
        let derived: Person = serde_json::from_str(r#"{"name":"Ada","home":["London"],"past":[]}"#).expect("seq form");
        assert_eq!(derived.home, Some(Address { city: "London".into() }));
    }
}

/// The magnitude below which every whole `f64` is exactly the integer its text wrote: past
/// 2^53, `9007199254740993.0` reads as `9007199254740992.0`, so a whole float that large is not
/// taken for an integer.
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// The integer a float is, when it is a whole number of magnitude below 2^53 (exact: such a
/// float converts without rounding); `None` for any other.
pub(crate) fn whole(v: f64) -> Option<i64> {
    (v.fract() == 0.0 && v.abs() < EXACT_INTEGERS).then_some(v as i64)
}

/// The visitor of an integer read: a JSON number written with a fraction or an exponent whose
/// value, read as a double, is a whole number below 2^53 in magnitude (`30.0`, `3e1`, `-0.0`)
/// is the integer it equals, as JSON Schema validators count it (docs/http.md, rule 10); any
/// other float is refused by the wrapped visitor as before. Every other visit is the wrapped
/// visitor's, with its messages. The value is the double's, as any JSON reader's that reads
/// numbers as doubles: `1.0000000000000001`, which no double tells from 1, is 1.
pub(crate) struct Whole<V>(pub(crate) V);

impl<'de, V: Visitor<'de>> Visitor<'de> for Whole<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        self.0.visit_i64(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        self.0.visit_u64(v)
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<V::Value, E> {
        self.0.visit_i128(v)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<V::Value, E> {
        self.0.visit_u128(v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        match whole(v) {
            Some(integer) => self.0.visit_i64(integer),
            None => self.0.visit_f64(v),
        }
    }
}
