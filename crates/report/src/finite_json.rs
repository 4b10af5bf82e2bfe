//! Every JSON document with one rule for numbers that are not finite.
//!
//! serde_json writes NaN and ±∞ as `null`, which a reader cannot tell from a missing value and
//! which fails to read back as a number. [`Finite`] wraps any `Serialize` value so that every
//! `f32`/`f64` inside it, at any depth and in any field, is written as [`non_finite`] writes it:
//! a number when finite, else the string `"NaN"`, `"inf"` or `"-inf"`. The envelope
//! ([`crate::envelope`]) wraps every document in it, so no field can forget the rule.
//!
//! It is a pass-through [`Serializer`]: each call goes to the real serializer unchanged except a
//! non-finite float, and each nested value is wrapped again on its way down.
//!
//! [`non_finite`]: crate::non_finite

use crate::non_finite::Number;
use serde::ser::{self, Serialize, Serializer};

/// `value`, serialized with every non-finite float as a string.
pub struct Finite<'a, T: ?Sized>(pub &'a T);

impl<T: Serialize + ?Sized> Serialize for Finite<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(Pass(s))
    }
}

/// The serializer that forwards to `S` and rewrites non-finite floats.
struct Pass<S>(S);

/// A compound (sequence, map, struct, …) of `S`, wrapping each element.
struct Each<C>(C);

/// Forwards scalar methods unchanged.
macro_rules! forward {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(fn $method(self, v: $ty) -> Result<S::Ok, S::Error> {
            self.0.$method(v)
        })*
    };
}

impl<S: Serializer> Serializer for Pass<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Each<S::SerializeSeq>;
    type SerializeTuple = Each<S::SerializeTuple>;
    type SerializeTupleStruct = Each<S::SerializeTupleStruct>;
    type SerializeTupleVariant = Each<S::SerializeTupleVariant>;
    type SerializeMap = Each<S::SerializeMap>;
    type SerializeStruct = Each<S::SerializeStruct>;
    type SerializeStructVariant = Each<S::SerializeStructVariant>;

    forward!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str),
    );

    fn serialize_f32(self, v: f32) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            self.0.serialize_f32(v)
        } else {
            Number(f64::from(v)).serialize(self.0)
        }
    }

    fn serialize_f64(self, v: f64) -> Result<S::Ok, S::Error> {
        Number(v).serialize(self.0)
    }

    fn serialize_none(self) -> Result<S::Ok, S::Error> {
        self.0.serialize_none()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(&Finite(v))
    }

    fn serialize_unit(self) -> Result<S::Ok, S::Error> {
        self.0.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_unit_variant(name, index, variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        v: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_struct(name, &Finite(v))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_newtype_variant(name, index, variant, &Finite(v))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        self.0.serialize_seq(len).map(Each)
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        self.0.serialize_tuple(len).map(Each)
    }

    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        self.0.serialize_tuple_struct(name, len).map(Each)
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        self.0
            .serialize_tuple_variant(name, index, variant, len)
            .map(Each)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        self.0.serialize_map(len).map(Each)
    }

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        self.0.serialize_struct(name, len).map(Each)
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        self.0
            .serialize_struct_variant(name, index, variant, len)
            .map(Each)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// The element-wise compounds: each element wrapped, then `end` forwarded.
macro_rules! each {
    ($trait:ident, $method:ident) => {
        impl<C: ser::$trait> ser::$trait for Each<C> {
            type Ok = C::Ok;
            type Error = C::Error;
            fn $method<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), C::Error> {
                self.0.$method(&Finite(v))
            }
            fn end(self) -> Result<C::Ok, C::Error> {
                self.0.end()
            }
        }
    };
}

each!(SerializeSeq, serialize_element);
each!(SerializeTuple, serialize_element);
each!(SerializeTupleStruct, serialize_field);
each!(SerializeTupleVariant, serialize_field);

impl<C: ser::SerializeMap> ser::SerializeMap for Each<C> {
    type Ok = C::Ok;
    type Error = C::Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), C::Error> {
        self.0.serialize_key(&Finite(k))
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), C::Error> {
        self.0.serialize_value(&Finite(v))
    }
    fn end(self) -> Result<C::Ok, C::Error> {
        self.0.end()
    }
}

/// Named fields: each value wrapped; a skipped field stays skipped.
macro_rules! fields {
    ($trait:ident) => {
        impl<C: ser::$trait> ser::$trait for Each<C> {
            type Ok = C::Ok;
            type Error = C::Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                v: &T,
            ) -> Result<(), C::Error> {
                self.0.serialize_field(key, &Finite(v))
            }
            fn skip_field(&mut self, key: &'static str) -> Result<(), C::Error> {
                self.0.skip_field(key)
            }
            fn end(self) -> Result<C::Ok, C::Error> {
                self.0.end()
            }
        }
    };
}

fields!(SerializeStruct);
fields!(SerializeStructVariant);

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    struct Inner {
        x: f64,
        pair: (f64, f32),
    }

    #[derive(Serialize)]
    enum Shape {
        Point(f64),
        Line { from: f64, to: f64 },
    }

    #[derive(Serialize)]
    struct Doc {
        plain: f64,
        missing: Option<f64>,
        present: Option<f64>,
        list: Vec<f64>,
        nested: Inner,
        by_name: BTreeMap<String, f64>,
        shapes: Vec<Shape>,
        #[serde(flatten)]
        extra: Inner,
        count: u64,
        name: &'static str,
    }

    #[test]
    fn every_non_finite_float_at_any_depth_is_a_string_and_the_rest_is_unchanged() {
        let doc = Doc {
            plain: f64::NAN,
            missing: None,
            present: Some(f64::NEG_INFINITY),
            list: vec![1.5, f64::INFINITY, f64::NAN],
            nested: Inner {
                x: 0.25,
                pair: (f64::NAN, f32::INFINITY),
            },
            by_name: BTreeMap::from([("a".into(), f64::NAN), ("b".into(), 2.0)]),
            shapes: vec![
                Shape::Point(f64::INFINITY),
                Shape::Line {
                    from: f64::NAN,
                    to: 1.0,
                },
            ],
            extra: Inner {
                x: f64::NAN,
                pair: (1.0, 2.0),
            },
            count: 7,
            name: "n",
        };
        let text = serde_json::to_string(&Finite(&doc)).unwrap();
        assert_eq!(
            text,
            r#"{"plain":"NaN","missing":null,"present":"-inf","list":[1.5,"inf","NaN"],"nested":{"x":0.25,"pair":["NaN","inf"]},"by_name":{"a":"NaN","b":2.0},"shapes":[{"Point":"inf"},{"Line":{"from":"NaN","to":1.0}}],"x":"NaN","pair":[1.0,2.0],"count":7,"name":"n"}"#
        );
        // Finite documents are written exactly as serde_json writes them.
        let finite = Inner {
            x: 0.1,
            pair: (3.0, 0.5),
        };
        assert_eq!(
            serde_json::to_string(&Finite(&finite)).unwrap(),
            serde_json::to_string(&finite).unwrap()
        );
    }
}
