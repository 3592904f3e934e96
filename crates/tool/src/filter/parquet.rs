//! The split-block Bloom filters of a Parquet file, read-only: `bloomlab filter stat|check --file
//! X.parquet` (issue 29).
//!
//! A Parquet writer may store one Bloom filter per column chunk (one column in one row group):
//! Parquet's split-block filter (`BloomFilter.md` of the format), 256-bit blocks of eight 32-bit
//! words, a value setting one bit in each word of one block, the value hashed as XXH64 with seed 0
//! of its *plain encoding* (a BYTE_ARRAY's bytes without the length prefix, INT32/INT64/FLOAT/
//! DOUBLE as 4 or 8 little-endian bytes). That is bloomlab's [`SplitBlock<Xxh64>`] bit for bit
//! (`crates/filters/tests/sbbf_vectors.rs`; `tests/filter_parquet.rs` checks it again on the
//! filters read here).
//!
//! Reading uses the `parquet` crate's own API, not a second Thrift parser: the footer through
//! [`SerializedFileReader`], each filter through [`Sbbf::read_from_column_chunk`] (the call the
//! crate's row-group reader makes for `get_column_bloom_filter` when `ReaderProperties` turns
//! Bloom filter reading on; called directly so that one filter is held at a time and an error can
//! name its column chunk), membership through [`Sbbf::check`]. The crate keeps the bitset private;
//! its public serializer [`Sbbf::write`] (header, then bitset) gives the bits back, and the
//! header's length is what the bitset leaves of it.
//!
//! Every read goes through a file wrapper that refuses a range past the file's end before the
//! crate allocates for it, so a damaged length in a footer or a filter header costs at most the
//! file's size, never an arbitrary allocation.
//!
//! [`SplitBlock<Xxh64>`]: bloomlab_filters::SplitBlock

use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bloomlab_filters::Geometry;
use bloomlab_filters::fill::FillStat;
use bloomlab_harness::keys::quote_prefix;
use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::bloom_filter::Sbbf;
use parquet::errors::ParquetError;
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use parquet::file::reader::{ChunkReader, FileReader, Length, SerializedFileReader};
use parquet::schema::types::ColumnDescriptor;

use super::{Failure, KeySource, Outcome, Place, Target, bad, for_each_batch};

/// The 4-byte magic a Parquet file starts and (with a plaintext footer) ends with.
pub const MAGIC: &[u8; 4] = b"PAR1";
/// The end magic of a file whose footer is encrypted (not readable here).
const MAGIC_ENCRYPTED: &[u8; 4] = b"PARE";

/// Words per split block and bits per word: the Parquet spec's, fixed.
const WORDS: u32 = 8;
const WORD_BITS: u32 = 32;
const BLOCK_BYTES: usize = (WORDS * WORD_BITS / 8) as usize;

/// Why a Parquet file could not be inspected; every case is bad input (exit code 2), and every
/// message names the file.
#[derive(Debug)]
pub enum ParquetFileError {
    /// The file could not be opened or read.
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        error: std::io::Error,
    },
    /// The file does not start with `PAR1`, or is too short to be Parquet.
    NotParquet {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        detail: String,
    },
    /// The file starts like Parquet but its footer is missing or unreadable (a truncated or
    /// damaged file), or a Bloom filter it points to is.
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong, from the crate or from the checks here.
        detail: String,
    },
    /// No column chunk of the file has a Bloom filter.
    NoFilters {
        /// The file.
        path: PathBuf,
        /// Every column of the file, with its physical type.
        columns: Vec<String>,
    },
    /// The column asked for has no Bloom filter in any row group.
    ColumnWithoutFilter {
        /// The file.
        path: PathBuf,
        /// The column asked for.
        column: String,
        /// The columns that do have a filter somewhere.
        with_filters: Vec<String>,
    },
    /// No column of the file has the name asked for.
    UnknownColumn {
        /// The file.
        path: PathBuf,
        /// The name asked for.
        column: String,
        /// Every column of the file, with its physical type.
        columns: Vec<String>,
    },
    /// A value cannot be written in the column's physical type.
    BadValue {
        /// The column.
        column: String,
        /// The value as given, quoted (its first bytes if long).
        value: String,
        /// What the column takes.
        expected: String,
    },
}

impl fmt::Display for ParquetFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, error } => write!(f, "{}: cannot read: {error}", path.display()),
            Self::NotParquet { path, detail } => {
                write!(f, "{}: not a Parquet file: {detail}", path.display())
            }
            Self::Damaged { path, detail } => write!(
                f,
                "{}: a truncated or damaged Parquet file: {detail}",
                path.display()
            ),
            Self::NoFilters { path, columns } => write!(
                f,
                "{}: no column chunk of this Parquet file has a Bloom filter (its columns: {}); \
                 writers store one only when asked (DuckDB: for dictionary-encoded chunks)",
                path.display(),
                columns.join(", ")
            ),
            Self::ColumnWithoutFilter {
                path,
                column,
                with_filters,
            } => write!(
                f,
                "{}: column {column:?} has no Bloom filter in any row group; columns with one: {}",
                path.display(),
                with_filters.join(", ")
            ),
            Self::UnknownColumn {
                path,
                column,
                columns,
            } => write!(
                f,
                "{}: no column {column:?} (--column); its columns: {}",
                path.display(),
                columns.join(", ")
            ),
            Self::BadValue {
                column,
                value,
                expected,
            } => write!(
                f,
                "value {value} cannot be checked against column {column:?}: {expected}"
            ),
        }
    }
}

impl std::error::Error for ParquetFileError {}

/// Whether `path` starts with the Parquet magic `PAR1` (a file shorter than 4 bytes does not).
pub fn is_parquet(path: &Path) -> std::io::Result<bool> {
    let mut head = [0u8; 4];
    let mut file = bloomlab_redis::dump::open_filter_file(path)?;
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..])? {
            0 => return Ok(false),
            n => got += n,
        }
    }
    Ok(&head == MAGIC)
}

/// A file that refuses reads past its end before allocating for them: the crate sizes its
/// buffer from lengths stored in the file (`Vec::with_capacity(length)`), so a damaged length
/// would otherwise allocate up to 2 GiB before failing.
struct BoundedFile {
    file: File,
    len: u64,
}

impl Length for BoundedFile {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for BoundedFile {
    type T = <File as ChunkReader>::T;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        self.file.get_read(start)
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        match start.checked_add(length as u64) {
            Some(end) if end <= self.len => self.file.get_bytes(start, length),
            _ => Err(ParquetError::EOF(format!(
                "a read of {length} bytes at offset {start} runs past the end of the \
                 {}-byte file",
                self.len
            ))),
        }
    }
}

/// A Parquet file opened for its Bloom filters: the footer is read and kept; filters are read
/// one at a time, when asked for.
pub struct ParquetFilters {
    path: PathBuf,
    reader: SerializedFileReader<BoundedFile>,
    /// A second handle on the file for the filters (the footer reader keeps its own private);
    /// every read seeks first, so the shared file offset does not matter.
    filters: BoundedFile,
}

/// One column of the file's schema (a leaf: nested columns are named by their dotted path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnInfo {
    /// The dotted path (`a.b.c`), as `--column` takes it.
    pub name: String,
    /// The physical type (`INT32`, `BYTE_ARRAY`, ...).
    pub physical_type: PhysicalType,
}

impl fmt::Display for ColumnInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name, self.physical_type)
    }
}

/// A column chunk's split-block Bloom filter, as stored.
pub struct ChunkBloom {
    sbbf: Sbbf,
    bytes: Vec<u8>,
}

impl ChunkBloom {
    /// The filter's shape: `bitset_len / 32` blocks of eight 32-bit words.
    pub fn geometry(&self) -> Geometry {
        Geometry::SplitBlock {
            blocks: (self.bytes.len() / BLOCK_BYTES) as u64,
            words: WORDS,
            word_bits: WORD_BITS,
        }
    }

    /// The bitset's length in bytes (a positive multiple of 32).
    pub fn bitset_len(&self) -> usize {
        self.bytes.len()
    }

    /// The bits: blocks in order, each word little-endian, as in the file. That is the byte
    /// layout of [`bloomlab_filters::SplitBlock::to_le_bytes`] (its in-memory layout on a
    /// little-endian machine); [`Geometry::fpr_given_bytes`] counts ones per 32-bit word, which
    /// the order of bytes inside a word does not change.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The fill statistics of the bits, by the library's [`FillStat`]: set bits, fill, the
    /// estimate of distinct values (the layout's mean fill solved for n, with its interval; and
    /// Swamidass-Baldi with m = bits and k = 8), and the implied false-positive rate
    /// ([`Geometry::fpr_given_bytes`]).
    pub fn fill_stat(&self) -> bloomlab_filters::error::Result<FillStat> {
        FillStat::from_bytes(self.geometry(), &self.bytes)
    }

    /// The crate's filter, for [`Sbbf::check`].
    pub fn sbbf(&self) -> &Sbbf {
        &self.sbbf
    }

    /// The crate's answer for a value already in plain encoding ([`PlainValue`]): false means
    /// the value is certainly not in the chunk.
    pub fn check(&self, value: &PlainValue<'_>) -> bool {
        self.sbbf.check(value.as_bytes())
    }
}

/// One column chunk (a column in a row group) and its filter, if it has one.
pub struct ColumnChunkFilter {
    /// The row group's index in the file.
    pub row_group: usize,
    /// The column's index in the schema.
    pub column_index: usize,
    /// The column.
    pub column: ColumnInfo,
    /// Values in the chunk, nulls included (the footer's `num_values`).
    pub num_values: i64,
    /// The Bloom filter's length in the file (header and bitset), when the footer records it.
    pub stored_len: Option<i32>,
    /// The filter, or `None` when the chunk has none.
    pub filter: Option<ChunkBloom>,
}

impl ParquetFilters {
    /// Opens `path` and reads its footer. Errors: unreadable file ([`ParquetFileError::Io`]), no
    /// `PAR1` at the start ([`ParquetFileError::NotParquet`]), no `PAR1` at the end or an
    /// unreadable footer ([`ParquetFileError::Damaged`]). A file without any Bloom filter opens;
    /// [`Self::require_filters`] refuses it.
    pub fn open(path: &Path) -> Result<Self, ParquetFileError> {
        let io = |error| ParquetFileError::Io {
            path: path.to_owned(),
            error,
        };
        let mut file = bloomlab_redis::dump::open_filter_file(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let mut head = [0u8; 4];
        let mut tail = [0u8; 4];
        if len >= 4 {
            file.read_exact(&mut head).map_err(io)?;
        }
        if len < 4 || &head != MAGIC {
            return Err(ParquetFileError::NotParquet {
                path: path.to_owned(),
                detail: format!(
                    "it does not start with the magic \"PAR1\" (first bytes: {:?}, file size {len})",
                    String::from_utf8_lossy(&head[..len.min(4) as usize])
                ),
            });
        }
        let damaged = |detail: String| ParquetFileError::Damaged {
            path: path.to_owned(),
            detail,
        };
        // The smallest Parquet file is magic, footer length, magic: 12 bytes.
        if len < 12 {
            return Err(damaged(format!(
                "{len} bytes, too short for a footer (12 bytes at least)"
            )));
        }
        file.seek(SeekFrom::End(-4)).map_err(io)?;
        file.read_exact(&mut tail).map_err(io)?;
        if &tail == MAGIC_ENCRYPTED {
            return Err(damaged(
                "its footer is encrypted (\"PARE\"), which bloomlab does not read".into(),
            ));
        }
        if &tail != MAGIC {
            return Err(damaged(format!(
                "it does not end with the magic \"PAR1\" (last bytes {tail:02x?}): the end of \
                 the file, where the footer is, is missing"
            )));
        }
        let filters = BoundedFile {
            file: file.try_clone().map_err(io)?,
            len,
        };
        let reader = SerializedFileReader::new(BoundedFile { file, len })
            .map_err(|e| damaged(format!("its footer cannot be read: {e}")))?;
        Ok(Self {
            path: path.to_owned(),
            reader,
            filters,
        })
    }

    /// The file's path, as given to [`Self::open`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn metadata(&self) -> &ParquetMetaData {
        self.reader.metadata()
    }

    /// The writer the footer names (`created_by`), e.g. `DuckDB version v2.0.1 (...)`.
    pub fn created_by(&self) -> Option<&str> {
        self.metadata().file_metadata().created_by()
    }

    /// Row groups in the file.
    pub fn row_groups(&self) -> usize {
        self.metadata().num_row_groups()
    }

    /// Every (leaf) column of the schema, in schema order.
    pub fn columns(&self) -> Vec<ColumnInfo> {
        self.metadata()
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|c| column_info(c))
            .collect()
    }

    fn column_labels(&self) -> Vec<String> {
        self.columns().iter().map(ToString::to_string).collect()
    }

    /// Whether any column chunk has a Bloom filter (from the footer alone).
    pub fn has_filters(&self) -> bool {
        self.metadata()
            .row_groups()
            .iter()
            .flat_map(|rg| rg.columns())
            .any(|c| c.bloom_filter_offset().is_some())
    }

    /// The columns (with their physical types) that have a Bloom filter in at least one row
    /// group, in schema order; from the footer alone.
    pub fn columns_with_filters(&self) -> Vec<String> {
        let meta = self.metadata();
        let schema = meta.file_metadata().schema_descr();
        (0..schema.num_columns())
            .filter(|&c| {
                meta.row_groups()
                    .iter()
                    .any(|rg| rg.column(c).bloom_filter_offset().is_some())
            })
            .map(|c| column_info(schema.column(c).as_ref()).to_string())
            .collect()
    }

    /// `Ok` if some column chunk has a Bloom filter; otherwise
    /// [`ParquetFileError::NoFilters`], listing the file's columns.
    pub fn require_filters(&self) -> Result<(), ParquetFileError> {
        if self.has_filters() {
            Ok(())
        } else {
            Err(ParquetFileError::NoFilters {
                path: self.path.clone(),
                columns: self.column_labels(),
            })
        }
    }

    /// The index of the column named `name` (its dotted path), or
    /// [`ParquetFileError::UnknownColumn`] listing the columns there are.
    pub fn column_index(&self, name: &str) -> Result<usize, ParquetFileError> {
        self.columns()
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| ParquetFileError::UnknownColumn {
                path: self.path.clone(),
                column: name.to_owned(),
                columns: self.column_labels(),
            })
    }

    /// The chunk of column `column` in row group `row_group`, with its filter read from the
    /// file. Panics if either index is out of range (see [`Self::row_groups`],
    /// [`Self::columns`]); a damaged filter is [`ParquetFileError::Damaged`] naming the chunk.
    pub fn chunk(
        &self,
        row_group: usize,
        column: usize,
    ) -> Result<ColumnChunkFilter, ParquetFileError> {
        let meta = self.metadata().row_group(row_group).column(column);
        let filter = self
            .read_filter(meta)
            .map_err(|detail| ParquetFileError::Damaged {
                path: self.path.clone(),
                detail: format!(
                    "the Bloom filter of column {:?} in row group {row_group}: {detail}",
                    meta.column_path().string()
                ),
            })?;
        Ok(ColumnChunkFilter {
            row_group,
            column_index: column,
            column: column_info(meta.column_descr()),
            num_values: meta.num_values(),
            stored_len: meta.bloom_filter_length(),
            filter,
        })
    }

    fn read_filter(&self, meta: &ColumnChunkMetaData) -> Result<Option<ChunkBloom>, String> {
        let Some(sbbf) =
            Sbbf::read_from_column_chunk(meta, &self.filters).map_err(|e| e.to_string())?
        else {
            return Ok(None);
        };
        // An empty bitset would make every check index past the end of the crate's blocks.
        if sbbf.num_blocks() == 0 {
            return Err("its bitset is empty (the spec's minimum is 32 bytes)".into());
        }
        let mut serialized = Vec::new();
        sbbf.write(&mut serialized).map_err(|e| e.to_string())?;
        let bitset = sbbf.num_blocks() * BLOCK_BYTES;
        // The crate keeps whole 32-byte blocks and drops a trailing partial one without a word:
        // when the footer records the stored length, the crate's own header plus the whole
        // blocks must add up to it, or bits were dropped (or the header is not the spec's).
        if let Some(stored) = meta.bloom_filter_length()
            && i64::from(stored) != serialized.len() as i64
        {
            return Err(format!(
                "the footer says it is {stored} bytes, but header and {} whole 32-byte blocks \
                 make {} bytes: its bitset is not a whole number of blocks",
                sbbf.num_blocks(),
                serialized.len()
            ));
        }
        let bytes = serialized.split_off(serialized.len() - bitset);
        Ok(Some(ChunkBloom { sbbf, bytes }))
    }

    /// Every column chunk, row group by row group, each with its filter (read as the iterator
    /// reaches it, so one filter is held at a time).
    pub fn chunks(&self) -> impl Iterator<Item = Result<ColumnChunkFilter, ParquetFileError>> + '_ {
        let columns = self.metadata().file_metadata().schema_descr().num_columns();
        (0..self.row_groups()).flat_map(move |rg| (0..columns).map(move |c| self.chunk(rg, c)))
    }

    /// The filters of the column named `name` in every row group (`None` where a row group has
    /// none). Errors: an unknown column ([`ParquetFileError::UnknownColumn`]), a column without a
    /// filter anywhere ([`ParquetFileError::ColumnWithoutFilter`]; a file without any filter is
    /// [`ParquetFileError::NoFilters`]), a damaged filter.
    pub fn column_filters(&self, name: &str) -> Result<ColumnFilters, ParquetFileError> {
        self.require_filters()?;
        let index = self.column_index(name)?;
        let descr = self.metadata().file_metadata().schema_descr().column(index);
        let chunks = (0..self.row_groups())
            .map(|rg| self.chunk(rg, index).map(|c| c.filter))
            .collect::<Result<Vec<_>, _>>()?;
        if chunks.iter().all(Option::is_none) {
            return Err(ParquetFileError::ColumnWithoutFilter {
                path: self.path.clone(),
                column: name.to_owned(),
                with_filters: self.columns_with_filters(),
            });
        }
        Ok(ColumnFilters {
            column: column_info(&descr),
            kind: ValueKind::of(&descr),
            chunks,
        })
    }
}

fn column_info(descr: &ColumnDescriptor) -> ColumnInfo {
    ColumnInfo {
        name: descr.path().string(),
        physical_type: descr.physical_type(),
    }
}

/// How a column's values are written in plain encoding, the bytes Parquet hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueKind {
    Bytes,
    FixedBytes(usize),
    Int32 {
        unsigned: bool,
    },
    Int64 {
        unsigned: bool,
    },
    Float,
    Double,
    /// BOOLEAN and INT96: no writer stores Bloom filters for them.
    Unsupported(PhysicalType),
}

impl ValueKind {
    fn of(descr: &ColumnDescriptor) -> Self {
        let unsigned = matches!(
            descr.logical_type_ref(),
            Some(LogicalType::Integer(int)) if !int.is_signed
        ) || matches!(
            descr.converted_type(),
            ConvertedType::UINT_8
                | ConvertedType::UINT_16
                | ConvertedType::UINT_32
                | ConvertedType::UINT_64
        );
        match descr.physical_type() {
            PhysicalType::BYTE_ARRAY => Self::Bytes,
            PhysicalType::FIXED_LEN_BYTE_ARRAY => {
                Self::FixedBytes(usize::try_from(descr.type_length()).unwrap_or(0))
            }
            PhysicalType::INT32 => Self::Int32 { unsigned },
            PhysicalType::INT64 => Self::Int64 { unsigned },
            PhysicalType::FLOAT => Self::Float,
            PhysicalType::DOUBLE => Self::Double,
            other => Self::Unsupported(other),
        }
    }

    /// What a value of this kind must look like, for error messages.
    fn expected(self) -> String {
        match self {
            Self::Bytes => "any text (its UTF-8 bytes)".into(),
            Self::FixedBytes(n) => {
                format!("text of exactly {n} UTF-8 bytes (FIXED_LEN_BYTE_ARRAY)")
            }
            Self::Int32 { unsigned: false } => {
                format!("a whole number from {} to {} (INT32)", i32::MIN, i32::MAX)
            }
            Self::Int32 { unsigned: true } => {
                format!("a whole number from 0 to {} (unsigned INT32)", u32::MAX)
            }
            Self::Int64 { unsigned: false } => {
                format!("a whole number from {} to {} (INT64)", i64::MIN, i64::MAX)
            }
            Self::Int64 { unsigned: true } => {
                format!("a whole number from 0 to {} (unsigned INT64)", u64::MAX)
            }
            Self::Float => "a number (FLOAT, 32-bit)".into(),
            Self::Double => "a number (DOUBLE, 64-bit)".into(),
            Self::Unsupported(t) => format!(
                "its physical type {t} has no Bloom filter support here (supported: BYTE_ARRAY, \
                 FIXED_LEN_BYTE_ARRAY, INT32, INT64, FLOAT, DOUBLE)"
            ),
        }
    }
}

/// A value in a column's plain encoding, the bytes Parquet's Bloom filters hash. Borrowed text or
/// at most 8 bytes inline: building one never allocates.
#[derive(Debug, Clone, Copy)]
pub enum PlainValue<'a> {
    /// BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY: the bytes themselves (no length prefix).
    Bytes(&'a [u8]),
    /// A number's little-endian bytes: the first `len` (4 or 8) of `bytes`.
    Number {
        /// The bytes, little-endian.
        bytes: [u8; 8],
        /// 4 or 8.
        len: usize,
    },
}

impl PlainValue<'_> {
    /// The plain-encoded bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Bytes(b) => b,
            Self::Number { bytes, len } => &bytes[..*len],
        }
    }
}

fn number(le: &[u8]) -> PlainValue<'static> {
    let mut bytes = [0u8; 8];
    bytes[..le.len()].copy_from_slice(le);
    PlainValue::Number {
        bytes,
        len: le.len(),
    }
}

/// One column's filters across the row groups of a file.
pub struct ColumnFilters {
    column: ColumnInfo,
    kind: ValueKind,
    chunks: Vec<Option<ChunkBloom>>,
}

impl ColumnFilters {
    /// The column.
    pub fn column(&self) -> &ColumnInfo {
        &self.column
    }

    /// The filter of each row group, in order (`None` where the chunk has none).
    pub fn chunks(&self) -> &[Option<ChunkBloom>] {
        &self.chunks
    }

    /// Parses `key` (a key line's bytes) as a value of the column's physical type: byte arrays
    /// take the bytes as they are (no length prefix); numbers take decimal text (surrounding
    /// spaces ignored), integers in the signed range or, for an unsigned logical type, the
    /// unsigned one. Logical types are not interpreted: a DATE is its day number, a DECIMAL its
    /// unscaled integer. Errors name the value, the column and what it takes. Never allocates
    /// on success.
    pub fn parse<'k>(&self, key: &'k [u8]) -> Result<PlainValue<'k>, ParquetFileError> {
        let bad = || ParquetFileError::BadValue {
            column: self.column.name.clone(),
            value: quote_prefix(key),
            expected: self.kind.expected(),
        };
        let text = || std::str::from_utf8(key).map(str::trim).map_err(|_| bad());
        Ok(match self.kind {
            ValueKind::Bytes => PlainValue::Bytes(key),
            ValueKind::FixedBytes(n) if key.len() == n => PlainValue::Bytes(key),
            ValueKind::FixedBytes(_) | ValueKind::Unsupported(_) => return Err(bad()),
            ValueKind::Int32 { unsigned: false } => {
                number(&text()?.parse::<i32>().map_err(|_| bad())?.to_le_bytes())
            }
            ValueKind::Int32 { unsigned: true } => {
                number(&text()?.parse::<u32>().map_err(|_| bad())?.to_le_bytes())
            }
            ValueKind::Int64 { unsigned: false } => {
                number(&text()?.parse::<i64>().map_err(|_| bad())?.to_le_bytes())
            }
            ValueKind::Int64 { unsigned: true } => {
                number(&text()?.parse::<u64>().map_err(|_| bad())?.to_le_bytes())
            }
            ValueKind::Float => number(&text()?.parse::<f32>().map_err(|_| bad())?.to_le_bytes()),
            ValueKind::Double => number(&text()?.parse::<f64>().map_err(|_| bad())?.to_le_bytes()),
        })
    }

    /// Calls `answer(row_group, a)` for each row group's filter's answer on `key`
    /// ([`Self::parse`]d): `Some(false)` where the value is certainly absent, `Some(true)` where
    /// it may be present, `None` where the row group has no filter (it may hold anything).
    /// Allocates nothing.
    pub fn check_each(
        &self,
        key: &[u8],
        mut answer: impl FnMut(usize, Option<bool>),
    ) -> Result<(), ParquetFileError> {
        let value = self.parse(key)?;
        for (g, c) in self.chunks.iter().enumerate() {
            answer(g, c.as_ref().map(|f| f.check(&value)));
        }
        Ok(())
    }

    /// [`Self::check_each`]'s answers, collected (one per row group).
    pub fn check(&self, key: impl AsRef<[u8]>) -> Result<Vec<Option<bool>>, ParquetFileError> {
        let mut out = Vec::with_capacity(self.chunks.len());
        self.check_each(key.as_ref(), |_, a| out.push(a))?;
        Ok(out)
    }
}

// The command line: `filter stat --file X.parquet` and `filter check --file X.parquet --column C`.

impl From<ParquetFileError> for Failure {
    fn from(e: ParquetFileError) -> Self {
        Failure::BadInput(e.to_string())
    }
}

/// What `filter stat` or `filter check` asks of a Parquet file.
pub enum Request<'a> {
    /// `stat`: the fill of every column chunk's filter, each estimate with its interval at
    /// `confidence`.
    Stat {
        /// Confidence of the distinct-count interval, already checked to be in (0, 1).
        confidence: f64,
    },
    /// `check`: keys, one per line, against one column's filters in every row group.
    Check {
        /// `--column`: which column's filters answer (required for a Parquet file).
        column: Option<&'a str>,
        /// Where the keys come from.
        source: &'a KeySource,
        /// `--count`: print totals only.
        count: bool,
        /// `--members`: every key must be in some row group's filter (exit 1 otherwise).
        members: bool,
    },
}

/// The Parquet side of `filter stat` and `filter check`, detected by the `PAR1` magic at the
/// start of `--file`: `None` when the target is not a Parquet file (the caller goes on with its
/// own readers; `--column` with anything but a Parquet file is an error), otherwise the
/// command's outcome. Output:
/// - `stat`: the file, its writer, then one table row per row group and column: physical type,
///   values in the chunk, bitset bytes and blocks, set bits, fill, estimated distinct values
///   (the layout's mean fill solved for n, with its interval, and Swamidass-Baldi with m = bits
///   and k = 8) and the false-positive rate the bits imply.
/// - `check`: one line per key with one field per row group: `1` the value may be there, `0`
///   it is not, `-` that row group has no filter; with `--count`, totals per row group.
///
/// Errors (exit 2): not Parquet, damaged, no filter in the file, no such column, a column
/// without filters, a key that is not a value of the column's type (naming its line).
pub fn run(target: &Target, request: Request<'_>) -> Option<Outcome> {
    let column = match &request {
        Request::Check { column, .. } => *column,
        Request::Stat { .. } => None,
    };
    let not_parquet = |what: String| {
        column.map(|c| {
            Err(bad(format!(
                "--column {c:?} applies to a Parquet file (--file X.parquet) only; {what}"
            )))
        })
    };
    let path = match target.place() {
        Ok(Place::File(p)) => p,
        Ok(Place::Redis { name, .. }) => return not_parquet(format!("{name:?} is in Redis")),
        Err(_) => return None,
    };
    match is_parquet(&path) {
        Ok(true) => {}
        Ok(false) => {
            return not_parquet(format!("{} does not start with \"PAR1\"", path.display()));
        }
        Err(e) => return Some(Err(bad(format!("{}: cannot read: {e}", path.display())))),
    }
    Some(match request {
        Request::Stat { confidence } => stat(&path, confidence),
        Request::Check {
            column,
            source,
            count,
            members,
        } => check(&path, column, source, count, members),
    })
}

/// Text columns are left-aligned, numbers right-aligned; two spaces between columns.
fn table(rows: &[Vec<String>], left: &[bool]) -> String {
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut s = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .zip(left)
            .map(|((cell, &w), &l)| {
                if l {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        s.push_str(cells.join("  ").trim_end());
        s.push('\n');
    }
    s
}

/// The columns of `stat`'s table: name, and whether it is text (left-aligned).
const STAT_COLUMNS: [(&str, bool); 11] = [
    ("row group", false),
    ("column", true),
    ("type", true),
    ("values", false),
    ("bytes", false),
    ("blocks", false),
    ("set bits", false),
    ("fill", false),
    ("est. distinct (interval)", false),
    ("S-B", false),
    ("implied FPR", false),
];

fn stat_row(c: &ColumnChunkFilter, confidence: f64) -> Result<Vec<String>, Failure> {
    let mut row = vec![
        c.row_group.to_string(),
        c.column.name.clone(),
        c.column.physical_type.to_string(),
        c.num_values.to_string(),
    ];
    let Some(f) = &c.filter else {
        row.resize(STAT_COLUMNS.len() - 1, "-".into());
        row.push("no filter".into());
        return Ok(row);
    };
    let fill = f.fill_stat().map_err(|e| {
        bad(format!(
            "column {:?} in row group {}: {e}",
            c.column.name, c.row_group
        ))
    })?;
    let (lo, hi) = fill
        .count_interval(confidence)
        .map_err(|e| bad(e.to_string()))?;
    row.extend([
        f.bitset_len().to_string(),
        (f.bitset_len() / BLOCK_BYTES).to_string(),
        fill.set_bits.to_string(),
        format!("{:.4}", fill.fill()),
        format!("{:.0} ({lo:.0}..{hi:.0})", fill.estimated_count()),
        format!("{:.0}", fill.swamidass_baldi()),
        format!("{:.4e}", fill.implied_fpr),
    ]);
    Ok(row)
}

fn stat(path: &Path, confidence: f64) -> Outcome {
    let file = ParquetFilters::open(path)?;
    file.require_filters()?;
    let mut rows = vec![STAT_COLUMNS.map(|(name, _)| name.to_owned()).to_vec()];
    for c in file.chunks() {
        rows.push(stat_row(&c?, confidence)?);
    }
    println!("file        {}", path.display());
    println!(
        "written by  {}",
        file.created_by().unwrap_or("(not recorded)")
    );
    println!(
        "filters     Parquet split-block: 32-byte blocks of 8 x 32-bit words, k = 8, XXH64 seed 0 \
         of the plain-encoded value; {} row groups, {} columns",
        file.row_groups(),
        file.columns().len()
    );
    println!(
        "estimates   distinct values: the split-block layout's mean fill solved for n, with its \
         {}% interval; S-B: Swamidass-Baldi -(m/8) ln(1 - X/m)",
        confidence * 100.0
    );
    print!("{}", table(&rows, &STAT_COLUMNS.map(|(_, text)| text)));
    Ok(ExitCode::SUCCESS)
}

fn check(
    path: &Path,
    column: Option<&str>,
    source: &KeySource,
    count_only: bool,
    members: bool,
) -> Outcome {
    let file = ParquetFilters::open(path)?;
    file.require_filters()?;
    let Some(column) = column else {
        return Err(bad(format!(
            "{}: a Parquet file has one filter per column and row group: say which column \
             with --column (columns with filters: {})",
            path.display(),
            file.columns_with_filters().join(", ")
        )));
    };
    let filters = file.column_filters(column)?;
    let mut tally = Tally {
        maybe: vec![0; filters.chunks().len()],
        ..Tally::default()
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut line = String::new();
    let mut write_err = None;
    for_each_batch(source, |keys| {
        for key in keys {
            tally.keys += 1;
            line.clear();
            let mut anywhere = false;
            filters
                .check_each(key, |g, a| {
                    if g > 0 {
                        line.push(' ');
                    }
                    line.push(match a {
                        Some(true) => '1',
                        Some(false) => '0',
                        None => '-',
                    });
                    if a != Some(false) {
                        tally.maybe[g] += 1;
                        anywhere = true;
                    }
                })
                .map_err(|e| bad(format!("key on line {}: {e}", tally.keys)))?;
            tally.anywhere += u64::from(anywhere);
            if !anywhere && tally.first_absent.is_none() {
                tally.first_absent = Some((tally.keys, key.clone()));
            }
            if !count_only && let Err(e) = writeln!(out, "{line}") {
                write_err.get_or_insert(e);
            }
        }
        Ok(())
    })?;
    if let Some(e) = write_err.or_else(|| out.flush().err()) {
        return Err(bad(format!(
            "cannot write the answers to standard output: {e}"
        )));
    }
    drop(out);
    if count_only {
        print!("{}", tally.render(column, &filters));
    }
    tally.verdict(column, members)
}

/// What `check` counted.
#[derive(Default)]
struct Tally {
    keys: u64,
    /// Keys some row group may hold (its filter says maybe, or it has none).
    anywhere: u64,
    /// Per row group: keys its filter says may be there (all keys where it has no filter).
    maybe: Vec<u64>,
    /// The first key no row group may hold: its line and bytes.
    first_absent: Option<(u64, Vec<u8>)>,
}

impl Tally {
    fn render(&self, column: &str, filters: &ColumnFilters) -> String {
        let mut s = format!(
            "{} keys against column {column:?}: {} may be in some row group, {} in none\n",
            self.keys,
            self.anywhere,
            self.keys - self.anywhere
        );
        for (g, (m, c)) in self.maybe.iter().zip(filters.chunks()).enumerate() {
            let note = if c.is_none() { " (no filter)" } else { "" };
            s.push_str(&format!(
                "row group {g}: {m} maybe present, {} absent{note}\n",
                self.keys - m
            ));
        }
        s
    }

    fn verdict(&self, column: &str, members: bool) -> Outcome {
        match &self.first_absent {
            Some((line, key)) if members => Err(Failure::CheckFailed(format!(
                "{} of {} member keys are in no row group's filter of column {column:?} (the \
                 first on line {line}: {}); a Bloom filter never forgets a value, so these are \
                 not the column's values, or the file was rewritten",
                self.keys - self.anywhere,
                self.keys,
                quote_prefix(key)
            ))),
            _ => Ok(ExitCode::SUCCESS),
        }
    }
}
