//! Typed decoding and encoding errors.
//!
//! Every decode failure says *what* failed ([`ErrorKind`]), *where* (the byte offset from the
//! start of the buffer handed to the decoder) and, where known, *in which element* (the TLV-TYPE
//! of the element being read).

use core::fmt;

/// What went wrong while decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended before the element did.
    Truncated,
    /// A TLV-LENGTH runs past the end of the enclosing element or buffer.
    LengthOverflow,
    /// A VAR-NUMBER was not encoded in its shortest form.
    NonMinimalVarNumber,
    /// A TLV-TYPE was 0 or did not fit in 32 bits.
    InvalidType,
    /// A NonNegativeInteger had a length other than 1, 2, 4 or 8.
    BadNonNegativeInteger,
    /// An unrecognized element with a critical TLV-TYPE.
    UnrecognizedCritical {
        /// The TLV-TYPE that was not understood.
        typ: u32,
    },
    /// An element of one type was expected, another was found.
    UnexpectedType {
        /// The TLV-TYPE that was expected.
        expected: u32,
        /// The TLV-TYPE that was found.
        found: u32,
    },
    /// A known element appeared twice or out of the order the spec fixes.
    OutOfOrder {
        /// The TLV-TYPE in the wrong place.
        typ: u32,
    },
    /// A required element is missing.
    Missing {
        /// The TLV-TYPE that was required.
        typ: u32,
    },
    /// Elements nest deeper than the decoder allows.
    TooDeep,
    /// The packet is larger than [`crate::MAX_PACKET_SIZE`].
    TooLarge,
    /// Bytes remain after the top-level element.
    TrailingBytes,
    /// An Interest with a Name of zero components.
    EmptyName,
    /// A field has a value the spec does not allow (wrong fixed length, bad range, ...).
    InvalidValue(&'static str),
    /// The ParametersSha256DigestComponent does not match the parameters.
    ParametersDigestMismatch,
}

/// A decoding error with its location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// What failed.
    pub kind: ErrorKind,
    /// Byte offset of the failing element (or of the failing byte) from the start of the input.
    pub offset: usize,
    /// TLV-TYPE of the element being decoded when the error occurred, when known.
    pub element: Option<u32>,
}

impl DecodeError {
    /// An error of `kind` at `offset`, in no particular element.
    pub const fn new(kind: ErrorKind, offset: usize) -> Self {
        Self {
            kind,
            offset,
            element: None,
        }
    }

    /// An error of `kind` at `offset` while decoding element `typ`.
    pub const fn in_element(kind: ErrorKind, offset: usize, typ: u32) -> Self {
        Self {
            kind,
            offset,
            element: Some(typ),
        }
    }

    /// Adds `base` to the offset: used when a nested decoder reports relative offsets.
    #[must_use]
    pub const fn shifted(mut self, base: usize) -> Self {
        self.offset += base;
        self
    }

    /// Sets the element when none was recorded.
    #[must_use]
    pub const fn within(mut self, typ: u32) -> Self {
        if self.element.is_none() {
            self.element = Some(typ);
        }
        self
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated => f.write_str("input truncated"),
            Self::LengthOverflow => f.write_str("TLV-LENGTH exceeds the enclosing element"),
            Self::NonMinimalVarNumber => f.write_str("VAR-NUMBER not in shortest form"),
            Self::InvalidType => f.write_str("invalid TLV-TYPE (zero or wider than 32 bits)"),
            Self::BadNonNegativeInteger => {
                f.write_str("NonNegativeInteger length is not 1, 2, 4 or 8")
            }
            Self::UnrecognizedCritical { typ } => {
                write!(
                    f,
                    "unrecognized critical element {} ({typ:#x})",
                    crate::tlv::type_name(*typ)
                )
            }
            Self::UnexpectedType { expected, found } => write!(
                f,
                "expected {} ({expected:#x}), found {} ({found:#x})",
                crate::tlv::type_name(*expected),
                crate::tlv::type_name(*found)
            ),
            Self::OutOfOrder { typ } => {
                write!(
                    f,
                    "{} ({typ:#x}) repeated or out of order",
                    crate::tlv::type_name(*typ)
                )
            }
            Self::Missing { typ } => {
                write!(
                    f,
                    "required {} ({typ:#x}) missing",
                    crate::tlv::type_name(*typ)
                )
            }
            Self::TooDeep => f.write_str("elements nested too deeply"),
            Self::TooLarge => write!(f, "packet larger than {} bytes", crate::MAX_PACKET_SIZE),
            Self::TrailingBytes => f.write_str("trailing bytes after the element"),
            Self::EmptyName => f.write_str("Interest Name has zero components"),
            Self::InvalidValue(what) => write!(f, "invalid value: {what}"),
            Self::ParametersDigestMismatch => {
                f.write_str("ParametersSha256DigestComponent does not match the parameters")
            }
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at offset {}", self.kind, self.offset)?;
        if let Some(typ) = self.element {
            write!(f, " in {} ({typ:#x})", crate::tlv::type_name(typ))?;
        }
        Ok(())
    }
}

impl std::error::Error for DecodeError {}

/// Errors from building or parsing values that are not wire bytes (URIs, builders).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The URI does not start with `/` or `ndn:/`.
    #[error("NDN URI must start with '/' or 'ndn:/'")]
    NotAbsolute,
    /// A percent escape is not two hex digits.
    #[error("bad percent-encoding at byte {0}")]
    BadPercent(usize),
    /// A component's `TYPE=value` prefix names no type or a type out of range.
    #[error("bad component type in {0:?}")]
    BadType(String),
    /// A typed component's value does not parse (number, hex digest...).
    #[error("bad value for component {0:?}")]
    BadValue(String),
    /// A component made only of periods with fewer than three of them.
    #[error("component {0:?} is not allowed (use '...' for an empty component)")]
    BadPeriods(String),
    /// The encoded name would exceed the packet size limit.
    #[error("name longer than {} bytes", crate::MAX_PACKET_SIZE)]
    TooLong,
}
