//! Talking to the forwarder as an application does: the connection lives in
//! [`nameway_transport::client`]; this adds what only the command line needs.

pub(crate) use nameway_transport::client::*;

use nameway_wire::Name;

/// Most content bytes a command puts in one Data (`bench --payload`, `ping-server --size`): the
/// rest of an 8800-byte packet is for the name and the signature.
pub(crate) const MAX_CONTENT: usize = 8000;

/// Refuses a content size given with `option` that does not fit one packet.
///
/// # Errors
/// `size` is above [`MAX_CONTENT`].
pub(crate) fn check_content_size(option: &str, size: usize) -> anyhow::Result<()> {
    if size > MAX_CONTENT {
        anyhow::bail!(
            "{option} {size} does not fit one 8800-byte packet: use at most {MAX_CONTENT}"
        );
    }
    Ok(())
}

/// Parses a name typed by the user, saying what is wrong: an NDN URI, or a self-certifying
/// name in the shorthand `sc:<64 hex digits>[/suffix]`.
///
/// # Errors
/// The name does not parse.
pub(crate) fn parse_name(s: &str) -> anyhow::Result<Name> {
    nameway_routing::sc::parse_name(s).map_err(|e| {
        anyhow::anyhow!(
            "{s:?} is not an NDN name ({e}); write it like /example/data or sc:<64 hex digits>"
        )
    })
}

/// A name as the CLI prints it: `sc:<hex>[/suffix]` for a self-certifying name, the URI
/// otherwise.
pub(crate) fn show_name(name: &Name) -> String {
    nameway_routing::sc::display_name(name)
}
