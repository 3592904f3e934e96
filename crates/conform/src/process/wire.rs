//! Frames, key lists and bitmaps: the byte layout of the protocol, shared by both sides.

use std::io::{self, Read};

use crate::candidate::KeyBatch;

use super::MAX_FRAME;

/// Why a frame could not be read.
#[derive(Debug)]
pub(crate) enum FrameError {
    /// End of input before a whole frame (or before any).
    Eof,
    /// A length outside `1..=MAX_FRAME`.
    Length(u32),
    /// The read failed.
    Io(io::Error),
}

/// Reads one frame into `buf` (cleared first). Never allocates more than the bytes that actually
/// arrive: a lying length prefix cannot make it reserve a gigabyte up front.
pub(crate) fn read_frame(input: &mut impl Read, buf: &mut Vec<u8>) -> Result<(), FrameError> {
    let mut head = [0u8; 4];
    read_exact_or_eof(input, &mut head)?;
    let len = u32::from_le_bytes(head);
    if len == 0 || len > MAX_FRAME {
        return Err(FrameError::Length(len));
    }
    buf.clear();
    let got = input
        .take(u64::from(len))
        .read_to_end(buf)
        .map_err(FrameError::Io)?;
    if got < len as usize {
        return Err(FrameError::Eof);
    }
    Ok(())
}

fn read_exact_or_eof(input: &mut impl Read, mut out: &mut [u8]) -> Result<(), FrameError> {
    while !out.is_empty() {
        match input.read(out) {
            Ok(0) => return Err(FrameError::Eof),
            Ok(k) => out = &mut out[k..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(FrameError::Io(e)),
        }
    }
    Ok(())
}

/// Starts a frame in `buf` (cleared): a length placeholder and the first byte (opcode or status).
/// [`finish_frame`] fills in the length.
pub(crate) fn start_frame(buf: &mut Vec<u8>, first: u8) {
    buf.clear();
    buf.extend_from_slice(&[0, 0, 0, 0, first]);
}

/// Writes the length of the frame `buf` holds; `None` if it exceeds [`MAX_FRAME`].
pub(crate) fn finish_frame(buf: &mut [u8]) -> Option<()> {
    let len = u32::try_from(buf.len() - 4)
        .ok()
        .filter(|&l| l <= MAX_FRAME)?;
    buf[..4].copy_from_slice(&len.to_le_bytes());
    Some(())
}

/// Appends `keys` as a key list. `None` if the count or a length does not fit a `u32`.
pub(crate) fn put_keys(buf: &mut Vec<u8>, keys: &KeyBatch) -> Option<()> {
    buf.reserve(4 + 4 * keys.len() + keys.byte_len());
    buf.extend_from_slice(&u32::try_from(keys.len()).ok()?.to_le_bytes());
    for key in keys.iter() {
        buf.extend_from_slice(&u32::try_from(key.len()).ok()?.to_le_bytes());
        buf.extend_from_slice(key);
    }
    Some(())
}

/// Parses a key list into `keys` (cleared first); the error says where it went wrong.
pub(crate) fn get_keys(payload: &[u8], keys: &mut KeyBatch) -> Result<(), String> {
    keys.clear();
    let mut rest = payload;
    let count = take_u32(&mut rest).ok_or("key list shorter than its 4-byte count")?;
    for i in 0..count {
        let len = take_u32(&mut rest)
            .ok_or_else(|| format!("key list ends before key {i} of {count}"))?;
        let key = rest
            .get(..len as usize)
            .ok_or_else(|| format!("key {i} of {count} claims {len} bytes, {} left", rest.len()))?;
        keys.push(key);
        rest = &rest[len as usize..];
    }
    if !rest.is_empty() {
        return Err(format!(
            "{} bytes after the last of {count} keys",
            rest.len()
        ));
    }
    Ok(())
}

fn take_u32(rest: &mut &[u8]) -> Option<u32> {
    let (head, tail) = rest.split_first_chunk::<4>()?;
    *rest = tail;
    Some(u32::from_le_bytes(*head))
}

/// Bytes of the bitmap answering `count` keys.
pub(crate) fn bitmap_len(count: usize) -> usize {
    count.div_ceil(8)
}

/// Appends the bitmap of `answers` (key `i` is bit `i % 8` of byte `i / 8`).
pub(crate) fn put_bitmap(buf: &mut Vec<u8>, answers: &[bool]) {
    for chunk in answers.chunks(8) {
        let byte = chunk
            .iter()
            .enumerate()
            .fold(0u8, |b, (i, &hit)| b | (u8::from(hit) << i));
        buf.push(byte);
    }
}

/// Appends `count` answers read from `bitmap` (whose length the caller checked) to `out`. Bits
/// past `count` in the last byte are ignored.
pub(crate) fn get_bitmap(bitmap: &[u8], count: usize, out: &mut Vec<bool>) {
    out.reserve(count);
    out.extend((0..count).map(|i| bitmap[i / 8] >> (i % 8) & 1 == 1));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_lists_and_bitmaps_round_trip() {
        let mut keys = KeyBatch::new();
        for k in [&b""[..], b"a", &[9u8; 70_000], b"", b"xyz"] {
            keys.push(k);
        }
        let mut buf = Vec::new();
        put_keys(&mut buf, &keys).unwrap();
        let mut back = KeyBatch::new();
        get_keys(&buf, &mut back).unwrap();
        assert_eq!(back, keys);
        assert!(get_keys(&buf[..buf.len() - 1], &mut back).is_err());
        let mut longer = buf.clone();
        longer.push(0);
        assert!(
            get_keys(&longer, &mut back)
                .unwrap_err()
                .contains("1 bytes after")
        );

        let answers: Vec<bool> = (0..13).map(|i| i % 3 == 0).collect();
        let mut bits = Vec::new();
        put_bitmap(&mut bits, &answers);
        assert_eq!(bits, vec![0b0100_1001, 0b0001_0010]);
        assert_eq!(bits.len(), bitmap_len(13));
        let mut out = vec![];
        get_bitmap(&bits, 13, &mut out);
        assert_eq!(out, answers);
    }

    #[test]
    fn frames_are_bounded_and_eof_is_told_apart() {
        let mut buf = Vec::new();
        start_frame(&mut buf, 7);
        buf.extend_from_slice(b"hi");
        finish_frame(&mut buf).unwrap();
        assert_eq!(buf, [3, 0, 0, 0, 7, b'h', b'i']);
        let mut got = Vec::new();
        read_frame(&mut &buf[..], &mut got).unwrap();
        assert_eq!(got, [7, b'h', b'i']);
        assert!(matches!(
            read_frame(&mut &buf[..5], &mut got),
            Err(FrameError::Eof)
        ));
        assert!(matches!(
            read_frame(&mut &[][..], &mut got),
            Err(FrameError::Eof)
        ));
        let huge = (MAX_FRAME + 1).to_le_bytes();
        assert!(
            matches!(read_frame(&mut &huge[..], &mut got), Err(FrameError::Length(l)) if l == MAX_FRAME + 1)
        );
        assert!(matches!(
            read_frame(&mut &[0u8; 4][..], &mut got),
            Err(FrameError::Length(0))
        ));
    }
}
