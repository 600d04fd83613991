//! `nameway capture`: asks the forwarder (management `capture/start`, local faces only) to
//! mirror a face's packets, then prints one line per packet like ndndump, or writes a pcap file
//! that `nameway dissect --pcap`, tcpdump and tshark open.
//!
//! The pcap file has Ethernet, IPv4 and UDP headers made up around each NDN packet: the
//! forwarder is 127.0.0.1 port 6363 (so Wireshark's NDN dissector decodes the payload), the
//! face is 127.x.y.z with x.y.z its FaceId and port 10000 + FaceId % 50000, so faces can be
//! told apart and directions read from the addresses.

use std::io::{BufWriter, Write as _};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use nameway_wire::lp::Packet;
use nameway_wire::mgmt::ControlParameters;
use nameway_wire::{DataView, InterestView, LpPacket};
use serde::Serialize;

use crate::client::{self, Incoming};
use crate::output::JsonFlag;
use crate::stop::Stop;

/// Arguments of `nameway capture`.
#[derive(Debug, clap::Args)]
pub(crate) struct CaptureArgs {
    /// The face to capture (FaceId); every face but this connection's when absent.
    #[arg(long)]
    face: Option<u64>,
    /// Write a pcap file instead of printing (Ethernet/IPv4/UDP port 6363 around each packet).
    #[arg(short = 'w', long, value_name = "FILE")]
    write: Option<PathBuf>,
    /// Stop after this many packets.
    #[arg(short = 'c', long)]
    count: Option<u64>,
    /// Stop after this many seconds (`inf`: no limit).
    #[arg(long, value_parser = parse_seconds)]
    duration: Option<f64>,
    #[command(flatten)]
    out: JsonFlag,
}

/// `--duration`: seconds, 0 or more, or `inf`.
fn parse_seconds(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s >= 0.0)
        .ok_or_else(|| format!("{text:?} is not a number of seconds, 0 or more (or inf)"))
}

/// When a capture of `seconds` started at `now` ends: never, when that is too far to count.
fn deadline(now: tokio::time::Instant, seconds: Option<f64>) -> Option<tokio::time::Instant> {
    now.checked_add(Duration::try_from_secs_f64(seconds?.max(0.0)).ok()?)
}

/// One captured packet, decoded from the forwarder's record.
struct Record {
    wall_us: u64,
    face: u64,
    outgoing: bool,
    packet: Bytes,
}

fn parse_record(content: &Bytes) -> Option<Record> {
    let n = |at: usize| {
        content
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_be_bytes)
    };
    Some(Record {
        wall_us: n(0)?,
        face: n(8)?,
        outgoing: *content.get(16)? == 1,
        packet: content.slice(17..),
    })
}

/// `nameway capture --json`: one object per packet.
#[derive(Serialize)]
struct Line {
    time: f64,
    face: u64,
    direction: &'static str,
    kind: &'static str,
    name: String,
    detail: String,
    size: usize,
}

/// The kind, name and details of a packet as ndndump prints them.
fn describe(packet: &Bytes) -> (&'static str, String, String) {
    let (inner, lp): (Bytes, Option<LpPacket>) = match Packet::classify(packet.clone()) {
        Ok(Packet::Interest(w) | Packet::Data(w)) => (w, None),
        Ok(Packet::Lp(lp)) => match lp.fragment.clone() {
            Some(f) => (f, Some(lp)),
            None => return ("IDLE", String::new(), String::new()),
        },
        Err(e) => return ("MALFORMED", String::new(), e.to_string()),
    };
    let nack = lp.as_ref().and_then(|l| l.nack);
    if let Ok(i) = InterestView::new_checked(inner.clone()) {
        let mut detail = Vec::new();
        if let Some(n) = i.nonce() {
            detail.push(format!("nonce={n:08x}"));
        }
        if i.can_be_prefix() {
            detail.push("CanBePrefix".into());
        }
        if i.must_be_fresh() {
            detail.push("MustBeFresh".into());
        }
        return match nack {
            Some(reason) => ("NACK", i.name().to_string(), format!("{reason:?}")),
            None => ("INTEREST", i.name().to_string(), detail.join(" ")),
        };
    }
    if let Ok(d) = DataView::new_checked(inner.clone()) {
        return (
            "DATA",
            d.name().to_string(),
            format!("content={}B", d.content().len()),
        );
    }
    ("FRAGMENT", String::new(), format!("{} bytes", inner.len()))
}

/// Ethernet + IPv4 + UDP around `payload`, as the file says in its module documentation.
fn frame(face: u64, outgoing: bool, payload: &[u8]) -> Vec<u8> {
    let fw_ip = [127, 0, 0, 1];
    let face_ip = [127, (face >> 16) as u8, (face >> 8) as u8, face as u8];
    let (fw_port, face_port) = (6363u16, 10_000 + (face % 50_000) as u16);
    let (src_ip, dst_ip, src_port, dst_port) = if outgoing {
        (fw_ip, face_ip, fw_port, face_port)
    } else {
        (face_ip, fw_ip, face_port, fw_port)
    };
    let udp_len = 8 + payload.len();
    let ip_len = 20 + udp_len;
    let mut f = Vec::with_capacity(14 + ip_len);
    // Ethernet: made-up locally administered addresses, EtherType IPv4.
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, if outgoing { 2 } else { 1 }]);
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, if outgoing { 1 } else { 2 }]);
    f.extend_from_slice(&[0x08, 0x00]);
    let ip_start = f.len();
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&(ip_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0]); // id, DF, TTL 64, UDP, checksum
    f.extend_from_slice(&src_ip);
    f.extend_from_slice(&dst_ip);
    let sum = ipv4_checksum(&f[ip_start..ip_start + 20]);
    f[ip_start + 10..ip_start + 12].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&src_port.to_be_bytes());
    f.extend_from_slice(&dst_port.to_be_bytes());
    f.extend_from_slice(&(udp_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]); // no UDP checksum (allowed over IPv4)
    f.extend_from_slice(payload);
    f
}

/// The IPv4 header checksum (RFC 791): one's complement of the one's-complement sum.
fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The NDN packet inside a captured frame: Ethernet, then IPv4 or IPv6, then UDP (TCP is not
/// reassembled: a TCP segment's payload is returned as it is).
pub(crate) fn strip_headers(frame: &[u8]) -> Option<&[u8]> {
    let ethertype = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
    let ip = frame.get(14..)?;
    let (proto, l4) = match ethertype {
        0x0800 => {
            let ihl = usize::from(ip.first()? & 0x0f) * 4;
            (*ip.get(9)?, ip.get(ihl..)?)
        }
        0x86dd => (*ip.get(6)?, ip.get(40..)?),
        _ => return None,
    };
    match proto {
        17 => l4.get(8..),
        6 => {
            let off = usize::from(l4.get(12)? >> 4) * 4;
            l4.get(off..)
        }
        _ => None,
    }
}

/// Runs `nameway capture`.
///
/// # Errors
/// The forwarder cannot be reached or refuses, or the file cannot be written.
pub(crate) async fn run(transport: Option<&str>, args: &CaptureArgs) -> anyhow::Result<()> {
    let mut c = client::connect(transport).await?;
    let mut pcap = match &args.write {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            Some(
                crate::pcap::Writer::new(BufWriter::new(file))
                    .with_context(|| format!("cannot write {}", path.display()))?,
            )
        }
        None => None,
    };
    let params = ControlParameters {
        face_id: args.face,
        ..ControlParameters::default()
    };
    // Caught before the capture starts: a Ctrl-C right after the line below ends it with its
    // summary.
    let mut stop = Stop::catch()?;
    c.command_ok("capture", "start", &params).await?;
    match args.face {
        Some(face) => eprintln!("nameway capture: capturing face {face} (Ctrl-C to stop)"),
        None => eprintln!("nameway capture: capturing every face but this one (Ctrl-C to stop)"),
    }
    let deadline = deadline(tokio::time::Instant::now(), args.duration);
    let mut seen = 0u64;
    let mut stdout = std::io::stdout().lock();
    loop {
        if args.count.is_some_and(|n| seen >= n) {
            break;
        }
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        let incoming = tokio::select! {
            r = c.conn().recv() => r?,
            () = sleep => break,
            _ = stop.recv() => break,
        };
        let Incoming::Data(wire) = incoming else {
            continue;
        };
        let Ok(data) = DataView::new_checked(wire) else {
            continue;
        };
        if !data
            .name()
            .to_string()
            .starts_with("/localhost/nfd/capture/")
        {
            continue;
        }
        let Some(rec) = parse_record(&data.content()) else {
            continue;
        };
        seen += 1;
        if let Some(w) = &mut pcap {
            let frame = frame(rec.face, rec.outgoing, &rec.packet);
            let ts = Duration::from_micros(rec.wall_us);
            w.write(ts, &frame).context("writing the pcap file")?;
            continue;
        }
        let (kind, name, detail) = describe(&rec.packet);
        let time = rec.wall_us as f64 / 1e6;
        let direction = if rec.outgoing { "OUT" } else { "IN" };
        if args.out.json {
            let line = Line {
                time,
                face: rec.face,
                direction,
                kind,
                name,
                detail,
                size: rec.packet.len(),
            };
            writeln!(stdout, "{}", serde_json::to_string(&line)?)?;
        } else {
            writeln!(
                stdout,
                "{time:.6} face={} {direction:<3} {kind:<8} {name} {detail}",
                rec.face
            )?;
        }
    }
    drop(stdout);
    if let Some(w) = pcap {
        w.finish().context("writing the pcap file")?;
    }
    // The forwarder's own count: records it could not queue because we read too slowly.
    let done = c
        .command_ok("capture", "stop", &ControlParameters::default())
        .await?;
    eprintln!(
        "nameway capture: {seen} packets; the forwarder sent {} records and dropped {} (reader too slow)",
        done.capacity.unwrap_or(0),
        done.count.unwrap_or(0)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_too_long_to_count_means_no_limit_and_nan_is_refused() {
        let now = tokio::time::Instant::now();
        assert_eq!(deadline(now, Some(2.0)), Some(now + Duration::from_secs(2)));
        assert_eq!(deadline(now, Some(0.0)), Some(now));
        assert_eq!(deadline(now, None), None);
        // `--duration inf` or 1e30 seconds: Duration::from_secs_f64 panicked.
        assert_eq!(deadline(now, Some(f64::INFINITY)), None);
        assert_eq!(deadline(now, Some(1e30)), None);
        assert_eq!(deadline(now, Some(1.8e19)), None, "past Instant's range");
        assert_eq!(parse_seconds("1.5"), Ok(1.5));
        assert_eq!(parse_seconds("inf"), Ok(f64::INFINITY));
        for bad in ["nan", "-1", "soon"] {
            assert!(parse_seconds(bad).unwrap_err().contains("seconds"), "{bad}");
        }
    }

    #[test]
    fn frames_carry_the_packet_behind_valid_headers() {
        let payload = [0x05, 0x03, 0x07, 0x01, 0x08];
        let f = frame(300, false, &payload);
        assert_eq!(strip_headers(&f), Some(&payload[..]));
        // The IPv4 header checksums to zero with its checksum in place.
        assert_eq!(ipv4_checksum(&f[14..34]), 0);
        // Incoming: from the face's address and port to 127.0.0.1:6363.
        assert_eq!(&f[26..30], &[127, 0, 1, 44]);
        assert_eq!(&f[30..34], &[127, 0, 0, 1]);
        assert_eq!(u16::from_be_bytes([f[36], f[37]]), 6363);
        let out = frame(300, true, &payload);
        assert_eq!(u16::from_be_bytes([out[34], out[35]]), 6363);
    }

    #[test]
    fn records_decode() {
        let mut c = Vec::new();
        c.extend_from_slice(&7u64.to_be_bytes());
        c.extend_from_slice(&256u64.to_be_bytes());
        c.push(1);
        c.extend_from_slice(&[0x05, 0x00]);
        let r = parse_record(&Bytes::from(c)).unwrap();
        assert_eq!((r.wall_us, r.face, r.outgoing), (7, 256, true));
        assert_eq!(&r.packet[..], &[0x05, 0x00]);
        assert!(parse_record(&Bytes::from_static(&[1, 2, 3])).is_none());
    }
}
