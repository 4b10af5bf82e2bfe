//! A minimal protobuf wire-format reader: enough to walk the few messages the TensorBoard and
//! W&B readers need (varint, fixed32, fixed64, length-delimited), skipping every other field.
//!
//! It does not know any schema; callers match on field numbers.

use std::fmt;

/// One field's value, as the wire gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// What went wrong, and at which byte of the message.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    pub offset: usize,
    pub message: &'static str,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {} of the message", self.message, self.offset)
    }
}

/// Iterates the fields of one message: `(field number, value)`.
pub struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Fields { buf, pos: 0 }
    }

    fn err(&self, message: &'static str) -> DecodeError {
        DecodeError {
            offset: self.pos,
            message,
        }
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(self.err("varint runs past the end"));
            };
            self.pos += 1;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.err("varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| self.err("field runs past the end"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// The next field, or `None` at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<(u32, Wire<'a>)>, DecodeError> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let number = u32::try_from(key >> 3).map_err(|_| self.err("field number too large"))?;
        let value = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => Wire::Fixed64(u64::from_le_bytes(
                self.take(8)?.try_into().expect("8 bytes"),
            )),
            2 => {
                let n = self.varint()?;
                let n = usize::try_from(n).map_err(|_| self.err("length too large"))?;
                Wire::Bytes(self.take(n)?)
            }
            5 => Wire::Fixed32(u32::from_le_bytes(
                self.take(4)?.try_into().expect("4 bytes"),
            )),
            _ => return Err(self.err("unsupported wire type")),
        };
        Ok(Some((number, value)))
    }
}

/// Calls `f` for each element of a repeated 32-bit field, packed or not.
pub fn each_fixed32(v: Wire<'_>, mut f: impl FnMut(u32)) {
    match v {
        Wire::Fixed32(x) => f(x),
        Wire::Bytes(b) => b
            .chunks_exact(4)
            .for_each(|c| f(u32::from_le_bytes(c.try_into().expect("4 bytes")))),
        _ => {}
    }
}

/// Calls `f` for each element of a repeated 64-bit fixed field, packed or not.
pub fn each_fixed64(v: Wire<'_>, mut f: impl FnMut(u64)) {
    match v {
        Wire::Fixed64(x) => f(x),
        Wire::Bytes(b) => b
            .chunks_exact(8)
            .for_each(|c| f(u64::from_le_bytes(c.try_into().expect("8 bytes")))),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_wire_type_and_stops_at_the_end() {
        // field 1 varint 300; field 2 fixed64 1.5; field 3 bytes "hi"; field 4 fixed32 2.0f
        let mut msg = vec![0x08, 0xac, 0x02, 0x11];
        msg.extend_from_slice(&1.5f64.to_le_bytes());
        msg.extend_from_slice(&[0x1a, 0x02, b'h', b'i', 0x25]);
        msg.extend_from_slice(&2.0f32.to_le_bytes());
        let mut r = Fields::new(&msg);
        assert_eq!(r.next_field().unwrap(), Some((1, Wire::Varint(300))));
        assert_eq!(
            r.next_field().unwrap(),
            Some((2, Wire::Fixed64(1.5f64.to_bits())))
        );
        assert_eq!(r.next_field().unwrap(), Some((3, Wire::Bytes(b"hi"))));
        assert_eq!(
            r.next_field().unwrap(),
            Some((4, Wire::Fixed32(2.0f32.to_bits())))
        );
        assert_eq!(r.next_field().unwrap(), None);
    }

    #[test]
    fn truncated_fields_are_errors_not_panics() {
        for msg in [
            &[0x08, 0x80][..],
            &[0x1a, 0x05, 1, 2],
            &[0x11, 0, 0],
            &[0x0b],
        ] {
            assert!(Fields::new(msg).next_field().is_err(), "{msg:?}");
        }
    }

    #[test]
    fn packed_and_unpacked_repeated_fields() {
        let mut got = Vec::new();
        let packed: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        each_fixed32(Wire::Bytes(&packed), |x| got.push(f32::from_bits(x)));
        each_fixed32(Wire::Fixed32(3.0f32.to_bits()), |x| {
            got.push(f32::from_bits(x))
        });
        assert_eq!(got, [1.0, 2.0, 3.0]);
    }
}
