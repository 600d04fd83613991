//! Talking to the forwarder as an application does: the connection lives in
//! [`nameway_transport::client`]; this adds what only the command line needs.

pub(crate) use nameway_transport::client::*;

use nameway_wire::Name;

/// Parses a name typed by the user, saying what is wrong.
///
/// # Errors
/// The name does not parse.
pub(crate) fn parse_name(s: &str) -> anyhow::Result<Name> {
    s.parse::<Name>()
        .map_err(|e| anyhow::anyhow!("{s:?} is not an NDN name ({e}); write it like /example/data"))
}
