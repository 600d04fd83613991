//! Writes the seeds of the routing fuzz targets into fuzz/seeds/routing_*/ (the `gen-*`
//! files), signed a second before `nameway_routing::fuzzing::FUZZ_NOW_MS` with fresh keys.
//!
//! cargo run -p nameway-routing --example fuzz_seeds
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use nameway_routing::fuzzing::FUZZ_NOW_MS;
use nameway_routing::rib::{self, Answer, RegistrationStatus};
use nameway_routing::{
    Announcement, AnnouncementParams, LocatorRecord, NameKey, RejectReason, Validity,
};
use nameway_wire::security::{DigestSha256, EcdsaP256Signer};

fn write(target: &str, file: &str, bytes: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(target);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(file), bytes).unwrap();
}

fn main() {
    let at = FUZZ_NOW_MS - 1000;
    let life = 600_000;
    let owner = NameKey::generate().unwrap();
    let ec_owner = NameKey::from_ecdsa_p256(EcdsaP256Signer::generate().unwrap()).unwrap();
    let router = NameKey::generate().unwrap();
    let mallory = NameKey::generate().unwrap();
    let pa = Announcement::delegation(&owner, &router.hash(), at, life).unwrap();
    let ec_pa = Announcement::delegation(&ec_owner, &router.hash(), at, life).unwrap();
    let plain = Announcement::build(
        &AnnouncementParams {
            prefix: "/example/app".parse().unwrap(),
            version: at,
            expiration_ms: life,
            validity: Some(Validity {
                not_before_ms: at,
                not_after_ms: at + life,
            }),
            delegate: None,
            public_key: None,
        },
        &DigestSha256,
    )
    .unwrap();
    let hijack = Announcement::build(
        &AnnouncementParams {
            prefix: owner.name(),
            version: at,
            expiration_ms: life,
            validity: None,
            delegate: Some(router.name()),
            public_key: Some(mallory.spki().clone()),
        },
        &mallory,
    )
    .unwrap();
    let loc = LocatorRecord::build(
        &router,
        &["udp4://192.0.2.1:6363", "tcp6://[2001:db8::1]:6363"],
        at,
        life,
    )
    .unwrap();
    let bare = LocatorRecord::build::<&str>(&mallory, &[], at, life).unwrap();
    let linked = LocatorRecord::build_with_link_key(
        &router,
        &["udp4://192.0.2.1:6363"],
        Some([0x5a; 32]),
        at,
        life,
    )
    .unwrap();

    write("routing_announcement", "gen-delegation-ed25519", pa.wire());
    write("routing_announcement", "gen-delegation-ecdsa", ec_pa.wire());
    write("routing_announcement", "gen-plain-digest", plain.wire());
    write("routing_locator", "gen-two-uris", loc.wire());
    write("routing_locator", "gen-no-uri", bare.wire());
    write("routing_locator", "gen-link-key", linked.wire());

    let rib_prefix = "/example/32=RIB".parse().unwrap();
    let name = rib::lookup_name(&rib_prefix, &owner.hash()).unwrap();
    let found = Answer::Found {
        announcement: pa.wire().clone(),
        locator: loc.wire().clone(),
    };
    let missing = Answer::NotFound { ttl_ms: 5000 };
    let reg = "/example/32=RIB/32=REG".parse().unwrap();
    write(
        "routing_answer",
        "gen-found",
        &rib::encode_answer(&name, &found, 1000, &DigestSha256).unwrap(),
    );
    write(
        "routing_answer",
        "gen-not-found",
        &rib::encode_answer(&name, &missing, 0, &DigestSha256).unwrap(),
    );
    for (file, status) in [
        ("gen-reply-stored", RegistrationStatus::Stored),
        (
            "gen-reply-not-newer",
            RegistrationStatus::NotNewer {
                current_version: at,
            },
        ),
        (
            "gen-reply-refused",
            RegistrationStatus::Refused(RejectReason::NameKeyMismatch),
        ),
    ] {
        write(
            "routing_answer",
            file,
            &rib::encode_registration_reply(&reg, status, &DigestSha256).unwrap(),
        );
    }

    let pair = |a: &Announcement| [&a.wire()[..], &loc.wire()[..]].concat();
    write("routing_chain", "gen-chain-ed25519", &pair(&pa));
    write("routing_chain", "gen-chain-ecdsa", &pair(&ec_pa));
    write("routing_chain", "gen-reject-hijack", &pair(&hijack));
    write(
        "routing_chain",
        "gen-chain-link-key",
        &[&pa.wire()[..], &linked.wire()[..]].concat(),
    );
    println!("wrote the routing fuzz seeds");
}
