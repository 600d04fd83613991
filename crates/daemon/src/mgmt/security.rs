//! The security manager (ours: `security/set`, `unset`, `list`; `neighbours/trust`,
//! `untrust`, `list`): the per-prefix policy of hop-by-hop encryption and the trusted peers.

use nameway_face::FaceSystem;
use nameway_wire::mgmt::ControlParameters;

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
            ("security", "list") => serde_json::to_vec(&crate::status::security_view(
                faces,
                self.security.as_deref(),
            )),
            // Every secure link.
            ("neighbours", "list") => serde_json::to_vec(&crate::status::neighbour_views(faces)),
            _ => return None,
        };
        Some(Ok(json.unwrap_or_default()))
    }
}
