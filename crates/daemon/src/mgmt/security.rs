//! The security manager (ours: `security/set`, `unset`, `list`; `neighbours/trust`,
//! `untrust`, `list`): the per-prefix policy of hop-by-hop encryption and the trusted peers.

use std::collections::BTreeMap;

use nameway_face::FaceSystem;
use nameway_wire::mgmt::ControlParameters;
use serde::Serialize;

use super::{Dataset, Management, Outcome, Request};

impl Management {
    /// `security/set` (Name, SecurityLevel) and `security/unset` (Name).
    pub(super) fn security_command(
        &mut self,
        faces: &FaceSystem,
        req: &Request<'_>,
        verb: &str,
        p: ControlParameters,
    ) -> Outcome {
        let interest = req.interest;
        if !matches!(verb, "set" | "unset") {
            return Outcome::Nothing;
        }
        let Some(policy) = self.security.clone().filter(|_| faces.security().is_some()) else {
            return self.respond(
                interest,
                409,
                "security policies need [security] identity in the configuration",
                &p,
            );
        };
        let Some(name) = p.name.clone() else {
            return self.respond(interest, 400, "Name is required", &p);
        };
        if verb == "unset" {
            policy.unset(&name);
            tracing::info!(prefix = %name, "security policy unset");
            return self.respond(interest, 200, "OK", &p);
        }
        let Some(level) = p.security_level.as_deref() else {
            return self.respond(interest, 400, "SecurityLevel is required", &p);
        };
        let level = match level.parse::<nameway_wire::lp::SecurityLevel>() {
            Ok(l) => l,
            Err(e) => return self.respond(interest, 409, &e.to_string(), &p),
        };
        if let Err(e) = policy.set(&name, level) {
            return self.respond(interest, 414, &e.to_string(), &p);
        }
        tracing::info!(prefix = %name, %level, "security policy set");
        // The response text carries the level's warning, for the CLI to show.
        let text = level
            .warning()
            .map_or_else(|| "OK".to_owned(), |w| format!("OK; warning: {w}"));
        self.respond(interest, 200, &text, &p)
    }

    /// `neighbours/trust` and `neighbours/untrust` (PeerKey).
    pub(super) fn neighbours_command(
        &mut self,
        faces: &FaceSystem,
        req: &Request<'_>,
        verb: &str,
        p: ControlParameters,
    ) -> Outcome {
        let interest = req.interest;
        if !matches!(verb, "trust" | "untrust") {
            return Outcome::Nothing;
        }
        let Some(ctx) = faces.security() else {
            return self.respond(
                interest,
                409,
                "trusted peers need [security] identity in the configuration",
                &p,
            );
        };
        let key = match p
            .peer_key
            .as_deref()
            .map(str::parse::<nameway_face::secure::PublicKey>)
        {
            Some(Ok(k)) => k,
            Some(Err(e)) => return self.respond(interest, 400, &e.to_string(), &p),
            None => return self.respond(interest, 400, "PeerKey is required", &p),
        };
        if verb == "trust" {
            ctx.trust(key);
            tracing::info!(peer = %key, "peer trusted");
        } else {
            faces.untrust(&key);
            tracing::info!(peer = %key, "peer no longer trusted; its sessions end");
        }
        self.respond(interest, 200, "OK", &p)
    }

    /// `security/list` and `neighbours/list` (ours, JSON).
    pub(super) fn security_dataset(
        &self,
        faces: &FaceSystem,
        module: &str,
        verb: &str,
    ) -> Option<Dataset> {
        let json = match (module, verb) {
            // The identity, trust list and policy.
            ("security", "list") => {
                serde_json::to_vec(&security_view(faces, self.security.as_deref()))
            }
            // Every secure link.
            ("neighbours", "list") => serde_json::to_vec(&neighbour_views(faces)),
            _ => return None,
        };
        Some(Ok(json.unwrap_or_default()))
    }
}

/// `security/list`: this forwarder's identity, trust list and policy (never key material).
#[derive(Clone, Debug, Default, Serialize)]
pub struct SecurityView {
    /// Whether `[security]` is on (an identity is configured).
    pub enabled: bool,
    /// This forwarder's public key.
    pub identity: Option<String>,
    /// Trusted peers' public keys.
    pub trusted_peers: Vec<String>,
    /// The level of link-wide faces.
    pub link_level: Option<String>,
    /// Rekey after this many packets.
    pub rekey_packets: Option<u64>,
    /// ... or this many seconds.
    pub rekey_seconds: Option<u64>,
    /// Prefix → level.
    pub policy: Vec<PolicyView>,
}

/// One policy entry.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PolicyView {
    /// Name prefix.
    pub prefix: String,
    /// Level name.
    pub level: String,
    /// What the level does not protect against, if anything.
    pub warning: Option<&'static str>,
}

crate::stats! {
    /// `neighbours/list`: one secure link (label `face` in `/metrics`).
    pub struct NeighbourView {
        /// Its face.
        pub face_id: u64 = json,
        /// The face's remote URI.
        pub remote: String = json,
        /// The peer's public key, once known.
        pub peer: Option<String> = info("nameway_secure_link_info"; by "peer")
            help "A secure link's peer, state and mode",
        /// Whether the peer is in the trust list now.
        pub trusted: bool = gauge("nameway_secure_link_trusted"),
        /// idle, handshaking, established or refused.
        pub state: &'static str = info("nameway_secure_link_info"; by "state"),
        /// per-prefix or link-wide, once established.
        pub mode: Option<&'static str> = info("nameway_secure_link_info"; by "mode"),
        /// Whether this side starts the handshakes (created `--secure`).
        pub initiator: bool = gauge("nameway_secure_link_initiator"),
        /// Key id of what is sent (session tag << 16 | epoch).
        pub tx_key_id: Option<u32> = json,
        /// Key ids accepted.
        pub rx_key_ids: Vec<u32> = json,
        /// Packets encrypted.
        pub encrypted: u64 = counter("nameway_secure_packets", "result" = "encrypted")
            help "Packets encrypted (sent) and decrypted (received) on secure links",
        /// Packets decrypted.
        pub decrypted: u64 = counter("nameway_secure_packets", "result" = "decrypted"),
        /// Handshakes completed.
        pub handshakes: u64 = counter("nameway_secure_handshakes"),
        /// Key epochs advanced by this side.
        pub rekeys: u64 = counter("nameway_secure_rekeys"),
        /// Drops by reason (bad-tag, replay, unknown-key, untrusted-peer, no-session,
        /// clear-refused, malformed, invalid-handshake, unknown-group-key, group-required),
        /// zero ones included.
        pub drops: BTreeMap<&'static str, u64> = counter("nameway_secure_drops"; by "reason")
            help "Packets a secure link dropped, by reason (bad-tag, replay, unknown-key, \
                  untrusted-peer, no-session, clear-refused, malformed, invalid-handshake, \
                  unknown-group-key, group-required)",
    }
}

/// The identity, trust list and policy.
pub(super) fn security_view(
    faces: &FaceSystem,
    policy: Option<&crate::security::SharedPolicy>,
) -> SecurityView {
    let Some(ctx) = faces.security() else {
        return SecurityView::default();
    };
    let s = ctx.settings();
    SecurityView {
        enabled: true,
        identity: Some(ctx.identity().public_key().to_string()),
        trusted_peers: ctx.trusted().iter().map(ToString::to_string).collect(),
        link_level: Some(s.link_level.to_string()),
        rekey_packets: Some(s.rekey_packets),
        rekey_seconds: Some(s.rekey_interval.as_secs()),
        policy: policy
            .map(|p| p.entries())
            .unwrap_or_default()
            .into_iter()
            .map(|(prefix, level)| PolicyView {
                prefix: prefix.to_string(),
                level: level.to_string(),
                warning: level.warning(),
            })
            .collect(),
    }
}

/// Every secure link that is doing something.
pub(super) fn neighbour_views(faces: &FaceSystem) -> Vec<NeighbourView> {
    faces
        .neighbours()
        .into_iter()
        .map(|(id, remote, n)| {
            let c = n.counters;
            NeighbourView {
                face_id: id.0,
                remote: remote.to_string(),
                peer: n.peer.map(|k| k.to_string()),
                trusted: n
                    .peer
                    .zip(faces.security())
                    .is_some_and(|(k, ctx)| ctx.is_trusted(&k)),
                state: n.state.as_str(),
                mode: n.mode.map(|m| m.as_str()),
                initiator: n.initiator,
                tx_key_id: n.tx_key_id,
                rx_key_ids: n.rx_key_ids,
                encrypted: c.encrypted,
                decrypted: c.decrypted,
                handshakes: c.handshakes_completed,
                rekeys: c.rekeys,
                drops: [
                    ("bad-tag", c.bad_tag),
                    ("replay", c.replay),
                    ("unknown-key", c.unknown_key),
                    ("untrusted-peer", c.untrusted_peer),
                    ("unconfirmed", c.unconfirmed),
                    ("no-session", c.no_session),
                    ("clear-refused", c.clear_refused),
                    ("malformed", c.malformed),
                    ("invalid-handshake", c.handshakes_invalid),
                    ("unknown-group-key", c.unknown_group_key),
                    ("group-required", c.group_required),
                ]
                .into_iter()
                .collect(),
            }
        })
        .collect()
}
