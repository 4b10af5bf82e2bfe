//! CRC-32C (Castagnoli), the checksum TensorBoard's record framing uses, and its "masked" form.
//!
//! Table-driven, slicing by 8 bytes; small enough that a crate is not worth the dependency.

use super::crc32::reflected_table;

/// The reflected Castagnoli polynomial.
const POLY: u32 = 0x82F6_3B78;

/// Added after the rotation when masking, so a CRC stored inside CRC'd data does not cancel out
/// (the constant TensorFlow's `record_writer` uses).
const MASK_DELTA: u32 = 0xa282_ead8;

const TABLES: [[u32; 256]; 8] = make_tables();

const fn make_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    t[0] = reflected_table(POLY);
    let mut s = 1;
    while s < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[s - 1][i];
            t[s][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        s += 1;
    }
    t
}

/// CRC-32C of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let lo = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) ^ crc;
        let hi = u32::from_le_bytes([c[4], c[5], c[6], c[7]]);
        crc = TABLES[7][(lo & 0xff) as usize]
            ^ TABLES[6][((lo >> 8) & 0xff) as usize]
            ^ TABLES[5][((lo >> 16) & 0xff) as usize]
            ^ TABLES[4][(lo >> 24) as usize]
            ^ TABLES[3][(hi & 0xff) as usize]
            ^ TABLES[2][((hi >> 8) & 0xff) as usize]
            ^ TABLES[1][((hi >> 16) & 0xff) as usize]
            ^ TABLES[0][(hi >> 24) as usize];
    }
    for &b in chunks.remainder() {
        crc = TABLES[0][((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// The masked CRC-32C stored in TFRecord framing.
pub fn masked_crc32c(data: &[u8]) -> u32 {
    let crc = crc32c(data);
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_check_value() {
        // The standard check value of CRC-32C over the ASCII digits 1..9 (RFC 3720, appendix B.4).
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
    }

    #[test]
    fn rfc3720_vectors() {
        // RFC 3720 B.4: 32 bytes of zeros, of 0xff, and an ascending run.
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62A8_AB43);
        let up: Vec<u8> = (0u8..32).collect();
        assert_eq!(crc32c(&up), 0x46DD_794E);
    }

    #[test]
    fn slicing_matches_bytewise_on_every_length() {
        let data: Vec<u8> = (0..100u32).map(|i| (i * 37 + 11) as u8).collect();
        for n in 0..data.len() {
            let mut crc = !0u32;
            for &b in &data[..n] {
                crc = TABLES[0][((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
            }
            assert_eq!(crc32c(&data[..n]), !crc, "length {n}");
        }
    }
}
