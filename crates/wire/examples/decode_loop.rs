//! The decoders of the forwarding path in a loop, for instruction counts under callgrind:
//!
//! ```text
//! cargo build --release -p nameway-wire --example decode_loop
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/wire_cg.out \
//!     target/release/examples/decode_loop 4 100000
//! callgrind_annotate --inclusive=yes /tmp/wire_cg.out | grep decode_loop::
//! ```
//!
//! The packets are those of the forwarder's exchange benchmark: an Interest for
//! `/bench/a/b/seq=<4 octets>` (or 11 components) with a Nonce and an InterestLifetime, and a
//! Data with the same name, FreshnessPeriod 10000, 100 octets of Content and a DigestSha256
//! signature. Each decoder sits in its own `#[inline(never)]` function, so callgrind reports
//! its inclusive cost per call: `decode_interest`, `decode_data` and `hash_prefixes`.
//!
//! With `key-locator` as a third argument the Data is signed as most Data are, by a named
//! key: SignatureType SHA256withECDSA, a KeyLocator Name of 5 components and 71 octets of
//! SignatureValue.

use std::hint::black_box;
use std::process::ExitCode;

use bytes::Bytes;
use nameway_wire::signature::signature_type;
use nameway_wire::{
    Component, Data, DataView, DecodeError, Interest, InterestView, KeyLocator, MetaInfo, Name,
    NameHasher, PrefixHashes, SignatureInfo,
};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let components = args.next().and_then(|a| a.parse::<usize>().ok());
    let rounds = args.next().and_then(|a| a.parse::<usize>().ok());
    let key_locator = match args.next().as_deref() {
        None => false,
        Some("key-locator") => true,
        Some(_) => return usage(),
    };
    let (Some(components @ 2..=11), Some(rounds)) = (components, rounds) else {
        return usage();
    };
    let Some((interest, data)) = packets(components, key_locator) else {
        eprintln!("cannot build the packets");
        return ExitCode::FAILURE;
    };
    let hasher = NameHasher::with_seed(1);
    let mut sum = 0u64;
    for _ in 0..rounds {
        let Ok(i) = decode_interest(black_box(interest.clone())) else {
            return ExitCode::FAILURE;
        };
        sum = sum.wrapping_add(hash_prefixes(&hasher, i.name()).full());
        black_box(&i);
        let Ok(d) = decode_data(black_box(data.clone())) else {
            return ExitCode::FAILURE;
        };
        sum = sum.wrapping_add(hash_prefixes(&hasher, d.name()).full());
        black_box(&d);
    }
    println!("{components} components, {rounds} rounds: {sum:016x}");
    ExitCode::SUCCESS
}

fn usage() -> ExitCode {
    eprintln!("usage: decode_loop <components 2..=11> <rounds> [key-locator]");
    ExitCode::FAILURE
}

#[inline(never)]
fn decode_interest(wire: Bytes) -> Result<InterestView, DecodeError> {
    InterestView::new_checked(wire)
}

#[inline(never)]
fn decode_data(wire: Bytes) -> Result<DataView, DecodeError> {
    DataView::new_checked(wire)
}

#[inline(never)]
fn hash_prefixes(hasher: &NameHasher, name: &Name) -> PrefixHashes {
    hasher.prefix_hashes(name)
}

/// `/bench/a/b/…/seq=<4 octets>` of `components` components, as an Interest and a Data
/// (signed by a named key with `key_locator`, else DigestSha256).
fn packets(components: usize, key_locator: bool) -> Option<(Bytes, Bytes)> {
    let mut uri = String::from("/bench");
    for c in ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .take(components - 2)
    {
        uri.push('/');
        uri.push_str(c);
    }
    let name = uri
        .parse::<Name>()
        .ok()?
        .append(&Component::sequence_num(0xa1b2_c3d4))
        .ok()?;
    let mut i = Interest::new(name.clone());
    i.nonce = Some(0x5566_7788);
    i.lifetime_ms = Some(4000);
    let mut d = Data::new(name, Bytes::from(vec![0x5a; 100]));
    d.meta_info = Some(MetaInfo {
        freshness_period: Some(10_000),
        ..MetaInfo::default()
    });
    d.signature_value = Bytes::from(vec![0; 32]);
    if key_locator {
        let key = "/bench/KEY/%01%02%03%04/self/v=1".parse().ok()?;
        d.signature_info = SignatureInfo {
            signature_type: signature_type::SHA256_WITH_ECDSA,
            key_locator: Some(KeyLocator::Name(key)),
            ..SignatureInfo::default()
        };
        d.signature_value = Bytes::from(vec![0; 71]);
    }
    Some((i.encode(), d.encode()))
}
