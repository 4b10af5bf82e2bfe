//! CRC-32 (IEEE, zlib's `crc32`), which W&B's `.wandb` record framing uses.

/// The reflected IEEE 802.3 polynomial.
const POLY: u32 = 0xEDB8_8320;

const TABLE: [u32; 256] = reflected_table(POLY);

/// The byte-at-a-time lookup table of a reflected CRC-32 with polynomial `poly`
/// (shared with CRC-32C, which differs only in the polynomial).
pub(super) const fn reflected_table(poly: u32) -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ poly } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

/// Continues a CRC-32 over `data`; start from 0 (as zlib's `crc32(data, value)` does).
pub fn crc32_update(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c = TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::crc32_update;

    #[test]
    fn known_check_value_and_chaining() {
        // zlib.crc32(b"123456789") == 0xcbf43926, the standard check value.
        assert_eq!(crc32_update(0, b"123456789"), 0xCBF4_3926);
        assert_eq!(
            crc32_update(crc32_update(0, b"1234"), b"56789"),
            0xCBF4_3926
        );
    }
}
