//! `nameway dissect`: the TLV structure of one packet as an indented tree, like ndn-tools'
//! `ndn-dissect`, or as JSON for scripts.
//!
//! Two passes:
//! 1. a structural walk ([`dissect`]) that builds the tree, decoding the values of the types it
//!    knows (names in URI form, NonNegativeIntegers, flags, Nonce, Content, the Fragment of an
//!    LpPacket, ControlParameters and ControlResponse under `/localhost/nfd`). It stops at the
//!    first framing error (bad VAR-NUMBER, TLV-LENGTH past the end, nesting deeper than
//!    [`tlv::MAX_DEPTH`]) but keeps everything decoded before it. A value that does not have
//!    the form its type requires is shown in hex with a note, not treated as fatal;
//! 2. the library decoders judge the whole packet ([`validate`]), so a packet Nameway would
//!    drop (elements out of order, a wrong parameters digest, ...) is reported even when its
//!    framing is fine.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use bytes::Bytes;
use nameway_wire::data::content_type;
use nameway_wire::error::{DecodeError, ErrorKind};
use nameway_wire::mgmt::{face_persistency, route_origin, types as mgmt};
use nameway_wire::signature::signature_type;
use nameway_wire::tlv::{self, types};
use nameway_wire::{Data, Interest, LpPacket, NackReason, Name};
use serde_json::{json, Value};

/// Values longer than this many bytes are shown cut, with their size.
const SHOW_BYTES: usize = 64;

/// Arguments of `nameway dissect`.
#[derive(Debug, clap::Args)]
pub(crate) struct DissectArgs {
    /// File holding the packet; standard input when absent or "-".
    file: Option<PathBuf>,
    /// The input is a hex string (whitespace ignored) rather than raw bytes.
    #[arg(long)]
    hex: bool,
    /// Print the tree as JSON: an array of {type, name, length, offset, value?, children?}.
    #[arg(long)]
    json: bool,
    /// The file is a pcap capture (from `nameway capture -w`, or of NDN over UDP/Ethernet):
    /// every packet is dissected, each after a `# packet N` line.
    #[arg(long, conflicts_with = "hex")]
    pcap: bool,
}

/// Runs `nameway dissect`: prints the tree on stdout, then fails if the packet is malformed.
///
/// # Errors
/// Unreadable input, bad hex, an empty input, a malformed packet (after printing what could be
/// decoded), or a packet the library decoders reject.
pub(crate) fn run(args: &DissectArgs) -> anyhow::Result<()> {
    let raw = read_input(args.file.as_deref())?;
    if args.pcap {
        return run_pcap(&raw, args.json);
    }
    let packet = if args.hex { parse_hex(&raw)? } else { raw };
    if packet.is_empty() {
        bail!("empty input: there is no packet to dissect");
    }
    let dissection = dissect(&packet);
    let out = if args.json {
        to_json(&dissection.nodes)
    } else {
        to_text(&dissection.nodes)
    };
    std::io::stdout()
        .lock()
        .write_all(out.as_bytes())
        .context("writing the tree")?;
    if let Some(err) = dissection.error {
        bail!("malformed packet: {err}");
    }
    let packet = Bytes::from(packet);
    validate(&packet).map_err(|(what, err)| anyhow!("invalid {what}: {err}"))
}

/// Every NDN packet of a pcap capture: headers stripped (Ethernet, IPv4/IPv6, UDP; TCP payloads
/// as they are, not reassembled), then the tree. Frames that hold no NDN packet are skipped.
fn run_pcap(raw: &[u8], json: bool) -> anyhow::Result<()> {
    let records = crate::pcap::read(raw)?;
    let mut out = std::io::stdout().lock();
    let (mut n, mut bad) = (0u64, 0u64);
    for pkt in records {
        let Some(payload) = crate::capture::strip_headers(pkt.data) else {
            continue;
        };
        if payload.is_empty() {
            continue;
        }
        n += 1;
        let d = dissect(payload);
        let ts = pkt.ts.as_secs_f64();
        if json {
            writeln!(
                out,
                "{{\"packet\":{n},\"time\":{ts:.6},\"tree\":{}}}",
                to_json(&d.nodes).trim()
            )
            .context("writing")?;
        } else {
            writeln!(out, "# packet {n} at {ts:.6}, {} bytes", payload.len()).context("writing")?;
            out.write_all(to_text(&d.nodes).as_bytes())
                .context("writing")?;
        }
        if d.error.is_some() {
            bad += 1;
        }
    }
    if n == 0 {
        bail!("the capture holds no NDN packet");
    }
    if bad > 0 {
        bail!("{bad} of {n} packets are malformed");
    }
    Ok(())
}

fn read_input(file: Option<&Path>) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    match file {
        None => std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .context("reading standard input")?,
        Some(p) if p == Path::new("-") => std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .context("reading standard input")?,
        Some(p) => {
            buf = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
            buf.len()
        }
    };
    Ok(buf)
}

/// Decodes a hex string, ignoring ASCII whitespace.
fn parse_hex(text: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut high: Option<u8> = None;
    for (i, &c) in text.iter().enumerate() {
        if c.is_ascii_whitespace() {
            continue;
        }
        let Some(digit) = (c as char).to_digit(16) else {
            bail!(
                "--hex input: {:?} at byte {i} is not a hex digit",
                char::from(c)
            );
        };
        let digit = digit as u8;
        match high.take() {
            Some(h) => out.push(h << 4 | digit),
            None => high = Some(digit),
        }
    }
    if high.is_some() {
        bail!("--hex input has an odd number of hex digits");
    }
    Ok(out)
}

/// One TLV element of the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Node {
    /// TLV-TYPE.
    pub(crate) typ: u32,
    /// Name of the type in its context.
    pub(crate) name: &'static str,
    /// TLV-LENGTH as encoded.
    pub(crate) length: u64,
    /// Offset of the TLV-TYPE from the start of the input.
    pub(crate) offset: usize,
    /// Offset of the TLV-VALUE from the start of the input.
    value_offset: usize,
    /// How many value bytes the input holds, when fewer than `length`.
    pub(crate) truncated: Option<usize>,
    /// The decoded value, when the type has one.
    pub(crate) value: Option<String>,
    /// Nested elements.
    pub(crate) children: Vec<Node>,
}

/// The tree of a packet and the framing error that stopped the walk, if any.
#[derive(Debug)]
pub(crate) struct Dissection {
    /// The top-level elements decoded.
    pub(crate) nodes: Vec<Node>,
    /// The first framing error met.
    pub(crate) error: Option<DecodeError>,
}

/// Which TLV-TYPE numbering applies: the meaning of a number depends on where it appears.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ctx {
    /// Packets, their fields, NDNLPv2 headers.
    Packet,
    /// The inside of a Name: every element is a component.
    Name,
    /// NFD management: ControlParameters, ControlResponse.
    Mgmt,
}

/// How to show the value of an element.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// Nested elements, read in the given context.
    Container(Ctx),
    /// A Name: URI form, components as children.
    Name,
    /// A name component in its typed URI form (only inside a Name or FinalBlockId).
    Component,
    /// A NonNegativeInteger, with a function naming its known values.
    Number(fn(u64) -> Option<&'static str>),
    /// A single octet (HopLimit).
    Octet,
    /// An empty flag element.
    Flag,
    /// Opaque bytes shown in hex.
    Hex,
    /// A string.
    Text,
    /// Content: text, hex, or a ControlResponse.
    Content,
    /// The Fragment of an LpPacket: the inner packet.
    Fragment,
    /// An unrecognized type: hex.
    Unknown,
}

fn no_names(_: u64) -> Option<&'static str> {
    None
}

fn signature_type_name(n: u64) -> Option<&'static str> {
    Some(match n {
        signature_type::DIGEST_SHA256 => "DigestSha256",
        signature_type::SHA256_WITH_RSA => "SignatureSha256WithRsa",
        signature_type::SHA256_WITH_ECDSA => "SignatureSha256WithEcdsa",
        signature_type::HMAC_WITH_SHA256 => "SignatureHmacWithSha256",
        signature_type::ED25519 => "SignatureEd25519",
        _ => return None,
    })
}

fn content_type_name(n: u64) -> Option<&'static str> {
    Some(match n {
        content_type::BLOB => "BLOB",
        content_type::LINK => "LINK",
        content_type::KEY => "KEY",
        content_type::NACK => "NACK",
        content_type::PREFIX_ANN => "PREFIX_ANN",
        _ => return None,
    })
}

fn nack_reason_name(n: u64) -> Option<&'static str> {
    Some(match NackReason::from_code(n) {
        NackReason::None => "None",
        NackReason::Congestion => "Congestion",
        NackReason::Duplicate => "Duplicate",
        NackReason::NoRoute => "NoRoute",
        _ => return None,
    })
}

fn cache_policy_name(n: u64) -> Option<&'static str> {
    (n == 1).then_some("NoCache")
}

fn origin_name(n: u64) -> Option<&'static str> {
    Some(match n {
        route_origin::APP => "app",
        route_origin::AUTOREG => "autoreg",
        route_origin::CLIENT => "client",
        route_origin::AUTOCONF => "autoconf",
        route_origin::NLSR => "nlsr",
        route_origin::PREFIXANN => "prefixann",
        route_origin::CTL => "ctl",
        route_origin::STATIC => "static",
        _ => return None,
    })
}

fn persistency_name(n: u64) -> Option<&'static str> {
    Some(match n {
        face_persistency::PERSISTENT => "persistent",
        face_persistency::ON_DEMAND => "on-demand",
        face_persistency::PERMANENT => "permanent",
        _ => return None,
    })
}

fn packet_kind(typ: u32) -> Kind {
    use types::*;
    match typ {
        INTEREST
        | DATA
        | LP_PACKET
        | FORWARDING_HINT
        | META_INFO
        | SIGNATURE_INFO
        | INTEREST_SIGNATURE_INFO
        | KEY_LOCATOR
        | VALIDITY_PERIOD
        | NACK
        | CACHE_POLICY
        | PREFIX_ANNOUNCEMENT => Kind::Container(Ctx::Packet),
        mgmt::CONTROL_PARAMETERS | mgmt::CONTROL_RESPONSE => Kind::Container(Ctx::Mgmt),
        FINAL_BLOCK_ID => Kind::Container(Ctx::Name),
        NAME => Kind::Name,
        CAN_BE_PREFIX | MUST_BE_FRESH | NON_DISCOVERY => Kind::Flag,
        NONCE
        | PIT_TOKEN
        | SIGNATURE_NONCE
        | KEY_DIGEST
        | SIGNATURE_VALUE
        | INTEREST_SIGNATURE_VALUE
        | APPLICATION_PARAMETERS => Kind::Hex,
        INTEREST_LIFETIME | FRESHNESS_PERIOD | SIGNATURE_TIME | SIGNATURE_SEQ_NUM | SEQUENCE
        | FRAG_INDEX | FRAG_COUNT | HOP_COUNT | INCOMING_FACE_ID | NEXT_HOP_FACE_ID
        | CONGESTION_MARK | ACK | TX_SEQUENCE => Kind::Number(no_names),
        HOP_LIMIT => Kind::Octet,
        CONTENT_TYPE => Kind::Number(content_type_name),
        SIGNATURE_TYPE => Kind::Number(signature_type_name),
        NACK_REASON => Kind::Number(nack_reason_name),
        CACHE_POLICY_TYPE => Kind::Number(cache_policy_name),
        NOT_BEFORE | NOT_AFTER => Kind::Text,
        CONTENT => Kind::Content,
        FRAGMENT => Kind::Fragment,
        _ => Kind::Unknown,
    }
}

fn mgmt_kind(typ: u32) -> Kind {
    use mgmt::*;
    match typ {
        CONTROL_PARAMETERS | CONTROL_RESPONSE | STRATEGY => Kind::Container(Ctx::Mgmt),
        types::NAME => Kind::Name,
        FACE_ID
        | COST
        | FLAGS
        | EXPIRATION_PERIOD
        | MASK
        | CAPACITY
        | COUNT
        | BASE_CONGESTION_MARKING_INTERVAL
        | DEFAULT_CONGESTION_THRESHOLD
        | MTU
        | STATUS_CODE => Kind::Number(no_names),
        ORIGIN => Kind::Number(origin_name),
        FACE_PERSISTENCY => Kind::Number(persistency_name),
        URI | LOCAL_URI | STATUS_TEXT => Kind::Text,
        _ => Kind::Unknown,
    }
}

fn mgmt_type_name(typ: u32) -> &'static str {
    use mgmt::*;
    match typ {
        CONTROL_RESPONSE => "ControlResponse",
        STATUS_CODE => "StatusCode",
        STATUS_TEXT => "StatusText",
        CONTROL_PARAMETERS => "ControlParameters",
        FACE_ID => "FaceId",
        COST => "Cost",
        STRATEGY => "Strategy",
        FLAGS => "Flags",
        EXPIRATION_PERIOD => "ExpirationPeriod",
        ORIGIN => "Origin",
        MASK => "Mask",
        URI => "Uri",
        LOCAL_URI => "LocalUri",
        CAPACITY => "Capacity",
        COUNT => "Count",
        FACE_PERSISTENCY => "FacePersistency",
        BASE_CONGESTION_MARKING_INTERVAL => "BaseCongestionMarkingInterval",
        DEFAULT_CONGESTION_THRESHOLD => "DefaultCongestionThreshold",
        MTU => "Mtu",
        types::NAME => "Name",
        _ => "Unknown",
    }
}

fn kind(ctx: Ctx, typ: u32) -> Kind {
    match ctx {
        Ctx::Packet => packet_kind(typ),
        Ctx::Name => Kind::Component,
        Ctx::Mgmt => mgmt_kind(typ),
    }
}

fn type_name(ctx: Ctx, typ: u32) -> &'static str {
    let name = match ctx {
        Ctx::Mgmt => return mgmt_type_name(typ),
        Ctx::Packet if typ == mgmt::CONTROL_PARAMETERS || typ == mgmt::CONTROL_RESPONSE => {
            return mgmt_type_name(typ)
        }
        _ => tlv::type_name(typ),
    };
    match (ctx, name) {
        (Ctx::Name, "element") => "NameComponent",
        (_, "element") => "Unknown",
        (_, name) => name,
    }
}

/// Builds the tree of `input`, which should hold one packet.
pub(crate) fn dissect(input: &[u8]) -> Dissection {
    let mut d = Dissector::default();
    let mut nodes = Vec::new();
    if let Some((node, used)) = d.element(input, 0, Ctx::Packet, 0, 0) {
        nodes.push(node);
        if used < input.len() {
            d.fail(DecodeError::new(ErrorKind::TrailingBytes, used));
        }
    }
    Dissection {
        nodes,
        error: d.error,
    }
}

/// The state of one walk.
#[derive(Default)]
struct Dissector {
    /// The first framing error.
    error: Option<DecodeError>,
    /// Whether the Name of the Interest or Data being read is under `/localhost/nfd` or
    /// `/localhop/nfd`.
    mgmt: bool,
    /// Whether the LpPacket being read carries one fragment of several.
    fragmented: bool,
}

impl Dissector {
    fn fail(&mut self, err: DecodeError) {
        self.error.get_or_insert(err);
    }

    /// Reads back-to-back elements from `buf` (at absolute offset `base`) until its end or a
    /// framing error.
    fn elements(
        &mut self,
        buf: &[u8],
        base: usize,
        ctx: Ctx,
        depth: usize,
        parent: u32,
    ) -> Vec<Node> {
        let mut nodes = Vec::new();
        let mut pos = 0;
        while let Some(rest) = buf.get(pos..).filter(|r| !r.is_empty()) {
            let Some((node, used)) = self.element(rest, base + pos, ctx, depth, parent) else {
                break;
            };
            nodes.push(node);
            pos += used;
        }
        nodes
    }

    /// Reads the element at the front of `rest` (at absolute offset `start`); returns it and
    /// the bytes it spans, or `None` after recording a framing error. An element whose
    /// TLV-LENGTH runs past the input is recorded as an error but still returned, cut short.
    fn element(
        &mut self,
        rest: &[u8],
        start: usize,
        ctx: Ctx,
        depth: usize,
        parent: u32,
    ) -> Option<(Node, usize)> {
        let (typ, header, length) = read_header(rest, start).map_err(|e| self.fail(e)).ok()?;
        if depth >= tlv::MAX_DEPTH {
            self.fail(DecodeError::in_element(ErrorKind::TooDeep, start, typ));
            return None;
        }
        let available = rest.len() - header;
        let len = match usize::try_from(length) {
            Ok(len) if len <= available => len,
            _ => {
                self.fail(DecodeError::in_element(
                    ErrorKind::LengthOverflow,
                    start,
                    typ,
                ));
                available
            }
        };
        let wire = rest.get(..header + len).unwrap_or_default();
        let mut node = Node {
            typ,
            name: type_name(ctx, typ),
            length,
            offset: start,
            value_offset: start + header,
            truncated: ((len as u64) < length).then_some(len),
            value: None,
            children: Vec::new(),
        };
        self.fill(&mut node, wire, header, kind(ctx, typ), depth, parent);
        Some((node, wire.len()))
    }

    /// Decodes the value of `node` (whose whole TLV is `wire`, value from `header` on).
    fn fill(
        &mut self,
        node: &mut Node,
        wire: &[u8],
        header: usize,
        kind: Kind,
        depth: usize,
        parent: u32,
    ) {
        let value = wire.get(header..).unwrap_or_default();
        let base = node.value_offset;
        match kind {
            Kind::Container(ctx) => {
                if node.typ == types::LP_PACKET {
                    self.fragmented = false;
                }
                node.children = self.elements(value, base, ctx, depth + 1, node.typ);
            }
            Kind::Name => self.name(node, value, depth, parent),
            Kind::Component => node.value = Some(component_value(wire)),
            Kind::Number(names) => {
                node.value = Some(number_value(value, names));
                if node.typ == types::FRAG_COUNT && tlv::read_nni(value).is_ok_and(|n| n > 1) {
                    self.fragmented = true;
                }
            }
            Kind::Octet => node.value = Some(octet_value(value)),
            Kind::Flag if value.is_empty() => {}
            Kind::Flag => node.value = Some(invalid(&hex::encode(value), "a flag must be empty")),
            Kind::Hex | Kind::Unknown if value.is_empty() => {}
            Kind::Hex | Kind::Unknown => node.value = Some(blob_hex(value)),
            Kind::Text => node.value = Some(text_or_hex(value)),
            Kind::Content => self.content(node, value, depth, parent),
            Kind::Fragment if self.fragmented => node.value = Some(blob_hex(value)),
            Kind::Fragment => {
                self.mgmt = false;
                node.children = self.elements(value, base, Ctx::Packet, depth + 1, node.typ);
            }
        }
    }

    fn name(&mut self, node: &mut Node, value: &[u8], depth: usize, parent: u32) {
        let base = node.value_offset;
        node.children = self.elements(value, base, Ctx::Name, depth + 1, node.typ);
        let name = match Name::from_value(Bytes::copy_from_slice(value), base) {
            Ok(name) => name,
            Err(e) => {
                node.value = Some(format!("(invalid Name: {})", e.kind));
                return;
            }
        };
        node.value = Some(name.to_string());
        if parent != types::INTEREST && parent != types::DATA {
            return;
        }
        self.mgmt = is_mgmt_name(&name);
        if parent == types::INTEREST && self.mgmt {
            self.command_components(node, value, depth, name.len());
        }
    }

    /// Dissects the TLVs that command Interests carry in name components: ControlParameters in
    /// component 4, and for v0.2 command Interests (9 components) SignatureInfo and
    /// SignatureValue in components 7 and 8.
    fn command_components(&mut self, node: &mut Node, name_value: &[u8], depth: usize, n: usize) {
        let embedded: &[(usize, u32, Ctx)] = if n == 9 {
            &[
                (4, mgmt::CONTROL_PARAMETERS, Ctx::Mgmt),
                (7, types::SIGNATURE_INFO, Ctx::Packet),
                (8, types::SIGNATURE_VALUE, Ctx::Packet),
            ]
        } else {
            &[(4, mgmt::CONTROL_PARAMETERS, Ctx::Mgmt)]
        };
        let name_base = node.value_offset;
        for &(index, typ, ctx) in embedded {
            let Some(comp) = node.children.get_mut(index) else {
                continue;
            };
            let start = comp.value_offset - name_base;
            let Some(value) = usize::try_from(comp.length)
                .ok()
                .and_then(|len| name_value.get(start..start + len))
            else {
                continue;
            };
            let is_single_tlv = tlv::read_single(value).is_ok_and(|e| e.typ == typ);
            if comp.typ == types::GENERIC_NAME_COMPONENT && is_single_tlv {
                let dissected = self.embedded(value, comp.value_offset, ctx, depth + 2, comp.typ);
                comp.children = dissected.unwrap_or_default();
            }
        }
    }

    fn content(&mut self, node: &mut Node, value: &[u8], depth: usize, parent: u32) {
        let is_response = tlv::read_single(value).is_ok_and(|e| e.typ == mgmt::CONTROL_RESPONSE);
        let response = (parent == types::DATA && self.mgmt && is_response)
            .then(|| self.embedded(value, node.value_offset, Ctx::Mgmt, depth + 1, node.typ))
            .flatten();
        match response {
            Some(children) => node.children = children,
            None => node.value = Some(content_value(value)),
        }
    }

    /// Dissects a payload that the packet format leaves opaque (a name component, Content) but
    /// that holds TLVs by convention. A framing error there does not make the packet malformed:
    /// the payload is then shown as it would be otherwise.
    fn embedded(
        &mut self,
        value: &[u8],
        base: usize,
        ctx: Ctx,
        depth: usize,
        parent: u32,
    ) -> Option<Vec<Node>> {
        let mut inner = Dissector {
            mgmt: self.mgmt,
            ..Dissector::default()
        };
        let nodes = inner.elements(value, base, ctx, depth, parent);
        inner.error.is_none().then_some(nodes)
    }
}

/// Reads TLV-TYPE and TLV-LENGTH: the type, the header size and the length as encoded.
fn read_header(rest: &[u8], start: usize) -> Result<(u32, usize, u64), DecodeError> {
    let (typ, tn) = tlv::read_var_number(rest).map_err(|e| e.shifted(start))?;
    let typ = match u32::try_from(typ) {
        Ok(t) if t != 0 => t,
        _ => return Err(DecodeError::new(ErrorKind::InvalidType, start)),
    };
    let after = rest.get(tn..).unwrap_or_default();
    let (len, ln) = tlv::read_var_number(after).map_err(|e| e.shifted(start + tn).within(typ))?;
    Ok((typ, tn + ln, len))
}

fn is_mgmt_name(name: &Name) -> bool {
    let first_two: Vec<&[u8]> = name.iter().take(2).map(|c| c.value()).collect();
    matches!(first_two.as_slice(), [b"localhost" | b"localhop", b"nfd"])
        && name
            .iter()
            .take(2)
            .all(|c| c.typ() == types::GENERIC_NAME_COMPONENT)
}

/// A component TLV in its typed URI form (`seg=3`, `v=2`, `sha256digest=...`, `abc`).
fn component_value(wire: &[u8]) -> String {
    match Name::from_value(Bytes::copy_from_slice(wire), 0) {
        Ok(name) => name.get(0).map(|c| c.to_string()).unwrap_or_default(),
        Err(e) => {
            let value = tlv::read_single(wire).map(|e| e.value).unwrap_or_default();
            invalid(&blob_hex(value), &e.kind.to_string())
        }
    }
}

fn number_value(value: &[u8], names: fn(u64) -> Option<&'static str>) -> String {
    match tlv::read_nni(value) {
        Ok(n) => match names(n) {
            Some(name) => format!("{n} ({name})"),
            None => n.to_string(),
        },
        Err(kind) => invalid(&hex::encode(value), &kind.to_string()),
    }
}

fn octet_value(value: &[u8]) -> String {
    match value {
        [b] => b.to_string(),
        _ => invalid(&hex::encode(value), "not 1 octet"),
    }
}

fn invalid(shown: &str, why: &str) -> String {
    if shown.is_empty() {
        format!("(invalid: {why})")
    } else {
        format!("{shown} (invalid: {why})")
    }
}

/// Hex, cut after [`SHOW_BYTES`] / 2 bytes when longer than [`SHOW_BYTES`].
fn blob_hex(value: &[u8]) -> String {
    if value.len() <= SHOW_BYTES {
        return hex::encode(value);
    }
    let head = value.get(..SHOW_BYTES / 2).unwrap_or_default();
    format!("{}... ({} bytes)", hex::encode(head), value.len())
}

fn is_text(value: &[u8]) -> bool {
    !value.is_empty()
        && value
            .iter()
            .all(|&b| (0x20..0x7f).contains(&b) || matches!(b, b'\t' | b'\n' | b'\r'))
}

/// A quoted string when `value` is printable ASCII, hex otherwise.
fn text_or_hex(value: &[u8]) -> String {
    if !is_text(value) {
        return blob_hex(value);
    }
    let text: String = value.iter().map(|&b| char::from(b)).collect();
    if value.len() <= SHOW_BYTES {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(SHOW_BYTES).collect();
        format!("{head:?}... ({} bytes)", value.len())
    }
}

fn content_value(value: &[u8]) -> String {
    if value.is_empty() {
        String::from("(empty)")
    } else {
        text_or_hex(value)
    }
}

/// Checks the packet with the library decoders; returns what was being decoded and why it was
/// rejected. Framing errors are the walk's business, so a packet that does not frame passes.
pub(crate) fn validate(packet: &Bytes) -> Result<(), (&'static str, DecodeError)> {
    let Ok(top) = tlv::read_single(packet) else {
        return Ok(());
    };
    match top.typ {
        types::INTEREST => Interest::decode(packet)
            .map(drop)
            .map_err(|e| ("Interest", e)),
        types::DATA => Data::decode(packet).map(drop).map_err(|e| ("Data", e)),
        types::LP_PACKET => validate_lp(packet, &top),
        _ => Ok(()),
    }
}

/// Checks the LpPacket header, then the network-layer packet in its Fragment unless it is one
/// piece of a fragmented packet.
fn validate_lp(packet: &Bytes, top: &tlv::Element<'_>) -> Result<(), (&'static str, DecodeError)> {
    let lp = LpPacket::decode(packet).map_err(|e| ("LpPacket", e))?;
    let Some(fragment) = lp.fragment.as_ref().filter(|_| !lp.is_fragmented()) else {
        return Ok(());
    };
    // The Fragment is the last element, so its value ends where the LpPacket does.
    let base = top.end() - fragment.len();
    validate(fragment).map_err(|(what, e)| (what, e.shifted(base)))
}

/// The tree as indented text: `TYPE (Name) [length] value`, two spaces per level.
pub(crate) fn to_text(nodes: &[Node]) -> String {
    let mut out = String::new();
    for node in nodes {
        write_text(&mut out, node, 0);
    }
    out
}

fn write_text(out: &mut String, node: &Node, level: usize) {
    use std::fmt::Write as _;
    let indent = "  ".repeat(level);
    let _ = write!(out, "{indent}{} ({}) [{}", node.typ, node.name, node.length);
    if let Some(present) = node.truncated {
        let _ = write!(out, ", truncated: {present} bytes present");
    }
    out.push(']');
    if let Some(value) = &node.value {
        out.push(' ');
        out.push_str(value);
    }
    out.push('\n');
    for child in &node.children {
        write_text(out, child, level + 1);
    }
}

/// The tree as a JSON array of `{type, name, length, offset, value?, children?, truncated?}`.
pub(crate) fn to_json(nodes: &[Node]) -> String {
    let tree = Value::Array(nodes.iter().map(node_json).collect());
    let mut out = serde_json::to_string_pretty(&tree).unwrap_or_default();
    out.push('\n');
    out
}

fn node_json(node: &Node) -> Value {
    let mut v = json!({
        "type": node.typ,
        "name": node.name,
        "length": node.length,
        "offset": node.offset,
    });
    if let Some(value) = &node.value {
        v["value"] = json!(value);
    }
    if !node.children.is_empty() {
        v["children"] = Value::Array(node.children.iter().map(node_json).collect());
    }
    if let Some(present) = node.truncated {
        v["truncated"] = json!(present);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        parse_hex(s.as_bytes()).unwrap()
    }

    #[test]
    fn hex_input_ignores_whitespace_and_reports_bad_digits() {
        assert_eq!(unhex("05 1a\n07\t0c"), [0x05, 0x1a, 0x07, 0x0c]);
        let err = parse_hex(b"05 1z").unwrap_err().to_string();
        assert!(err.contains("'z' at byte 4"), "{err}");
        assert!(parse_hex(b"051")
            .unwrap_err()
            .to_string()
            .contains("odd number"));
    }

    #[test]
    fn truncated_element_keeps_what_was_read() {
        // Interest claiming 0x1a bytes, holding only the Name.
        let d = dissect(&unhex("051a070c08076578616d706c65080178"));
        let err = d.error.unwrap();
        assert_eq!(
            (err.kind, err.offset, err.element),
            (ErrorKind::LengthOverflow, 0, Some(5))
        );
        assert_eq!(d.nodes[0].truncated, Some(14));
        assert_eq!(d.nodes[0].children[0].value.as_deref(), Some("/example/x"));
    }

    #[test]
    fn depth_is_limited() {
        // 40 nested MetaInfo elements, each wrapping the next, around an empty one.
        let mut wire = vec![0x14, 0x00];
        for _ in 0..40 {
            let mut outer = vec![0x14, wire.len() as u8];
            outer.extend_from_slice(&wire);
            wire = outer;
        }
        let d = dissect(&wire);
        assert_eq!(d.error.unwrap().kind, ErrorKind::TooDeep);
    }

    #[test]
    fn values_of_the_wrong_form_are_shown_not_fatal() {
        // Interest: Name /a, MustBeFresh with a value, Nonce, Lifetime of 3 bytes.
        let d = dissect(&unhex("0513070308016112010a0a0401020304 0c03000fa0"));
        let text = to_text(&d.nodes);
        assert!(
            text.contains("18 (MustBeFresh) [1] 0a (invalid: a flag must be empty)"),
            "{text}"
        );
        assert!(
            text.contains("12 (InterestLifetime) [3] 000fa0 (invalid:"),
            "{text}"
        );
        assert!(d.error.is_none());
    }

    #[test]
    fn long_content_is_cut() {
        assert_eq!(
            content_value(&[0xab; 100]),
            format!("{}... (100 bytes)", "ab".repeat(32))
        );
        assert_eq!(content_value(b"hi\n"), "\"hi\\n\"");
        assert_eq!(content_value(b""), "(empty)");
    }
}
