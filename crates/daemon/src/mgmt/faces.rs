//! The face manager (`faces/create`, `destroy`, `update`; datasets `faces/list`, `channels`,
//! `query`, and ours, `faces/drops`), as NFD's `FaceManager`.

use std::collections::BTreeMap;

use bytes::Bytes;
use nameway_face::{FaceInfo, FaceSystem, Persistency};
use nameway_fw::{FaceId, Forwarder};
use nameway_wire::mgmt::{self, ChannelStatus, ControlParameters, FaceStatus};

use super::{face_or, rate_limit, Dataset, Management, Outcome, Request};

impl Management {
    /// `faces/<verb>`.
    pub(super) fn faces_command(
        &mut self,
        fw: &mut Forwarder,
        faces: &FaceSystem,
        req: &Request<'_>,
        verb: &str,
        p: ControlParameters,
    ) -> Outcome {
        match verb {
            "create" => self.faces_create(req, p),
            "destroy" => {
                let Some(id) = p.face_id else {
                    return self.respond(req.interest, 400, "FaceId is required", &p);
                };
                if id == nameway_face::FaceId::NULL.0 {
                    return self.respond(req.interest, 403, "The null face is permanent", &p);
                }
                if faces.destroy(nameway_face::FaceId(id)) {
                    fw.remove_face(FaceId(id));
                    self.face_down(fw, id);
                }
                self.respond(req.interest, 200, "OK", &p)
            }
            "update" => self.faces_update(fw, faces, req, p),
            _ => Outcome::Nothing,
        }
    }

    fn faces_create(&mut self, req: &Request<'_>, p: ControlParameters) -> Outcome {
        let interest = req.interest;
        let Some(uri) = p.uri.clone() else {
            return self.respond(interest, 400, "Uri is required", &p);
        };
        if let Some(rate) = p.interest_rate_limit {
            if rate_limit(rate, p.interest_burst).is_none() {
                return self.respond(interest, 409, "Invalid properties", &p);
            }
        }
        if let Some(mode) = &p.secure_mode {
            if crate::security::parse_mode(mode).is_none() {
                return self.respond(interest, 400, "SecureMode is per-prefix or link-wide", &p);
            }
        }
        let persistency = match p.face_persistency.map(Persistency::from_code) {
            None => Persistency::Persistent,
            Some(Some(per)) if per != Persistency::OnDemand => per,
            Some(_) => return self.respond(interest, 406, "Unsupported persistency", &p),
        };
        Outcome::CreateFace {
            interest: Box::new(interest.clone()),
            uri,
            persistency,
            params: Box::new(p),
        }
    }

    fn faces_update(
        &mut self,
        fw: &mut Forwarder,
        faces: &FaceSystem,
        req: &Request<'_>,
        mut p: ControlParameters,
    ) -> Outcome {
        let interest = req.interest;
        let id = face_or(p.face_id, req.incoming);
        let Some(info) = faces.info(nameway_face::FaceId(id)) else {
            return self.respond(interest, 404, "Face not found", &p);
        };
        if let Some(code) = p.face_persistency {
            match Persistency::from_code(code) {
                Some(per) => {
                    faces.set_persistency(nameway_face::FaceId(id), per);
                }
                None => return self.respond(interest, 409, "Invalid properties", &p),
            }
        }
        if let Some(rate) = p.interest_rate_limit {
            let Some(limit) = rate_limit(rate, p.interest_burst) else {
                return self.respond(interest, 409, "Invalid properties", &p);
            };
            let t = nameway_fw::Time::from_nanos(
                req.now
                    .saturating_duration_since(self.clock_start)
                    .as_nanos() as u64,
            );
            fw.set_interest_rate_limit(FaceId(id), t, limit);
            tracing::info!(face = id, limit = ?limit, "interest rate limit set");
        }
        let current = fw.face(FaceId(id)).and_then(|f| f.interest_rate_limit());
        p.interest_rate_limit = Some(current.map_or(0, |l| u64::from(l.per_second)));
        p.interest_burst = current.map(|l| u64::from(l.burst));
        p.face_id = Some(id);
        p.face_persistency = p.face_persistency.or(Some(info.persistency.code()));
        p.flags = Some(p.flags.unwrap_or(0) & p.mask.unwrap_or(0));
        p.mask = None;
        self.respond(interest, 200, "OK", &p)
    }

    /// Completes a `faces/create` once the face system has answered.
    pub fn face_created(
        &mut self,
        interest: &nameway_wire::Interest,
        params: &ControlParameters,
        result: Result<FaceInfo, nameway_face::FaceError>,
        existing: Option<&FaceInfo>,
    ) -> Outcome {
        use nameway_face::FaceError;
        match result {
            Ok(info) => {
                let mut body = face_params(&info);
                body.interest_rate_limit = params.interest_rate_limit;
                body.interest_burst = params
                    .interest_rate_limit
                    .filter(|&r| r > 0)
                    .map(|r| params.interest_burst.unwrap_or(r));
                self.respond(interest, 200, "OK", &body)
            }
            Err(FaceError::Exists(_)) => {
                // NFD answers with the existing face, which nfdc prints as face-exists id=N.
                let body = existing.map_or_else(|| params.clone(), face_params);
                self.respond(interest, 409, "Face exists", &body)
            }
            Err(
                FaceError::UnsupportedScheme
                | FaceError::Uri(nameway_face::uri::UriError::UnknownScheme(_)),
            ) => self.respond(interest, 406, "Unsupported protocol", params),
            // Malformed, of the wrong address family, or a host name that does not resolve:
            // say which, instead of "Unsupported protocol".
            Err(FaceError::Uri(e)) => {
                self.respond(interest, 400, &format!("Bad FaceUri: {e}"), params)
            }
            Err(e @ (FaceError::SecurityNotConfigured | FaceError::SecureNeedsUdp)) => {
                self.respond(interest, 409, &e.to_string(), params)
            }
            Err(e) => self.respond(interest, 504, &format!("Face creation failed: {e}"), params),
        }
    }

    /// `faces/<verb>` datasets.
    pub(super) fn faces_dataset(
        &self,
        fw: &Forwarder,
        faces: &FaceSystem,
        req: &Request<'_>,
        verb: &str,
    ) -> Option<Dataset> {
        Some(match verb {
            "list" => Ok(face_statuses(fw, &faces.list())),
            "channels" => Ok(faces
                .listeners()
                .iter()
                .flat_map(|uri| {
                    ChannelStatus {
                        local_uri: uri.to_string(),
                    }
                    .encode()
                })
                .collect()),
            "query" => {
                // As NFD's FaceManager::queryFaces: a missing or undecodable FaceQueryFilter is
                // rejected with 400, never taken as "no filter" (which would list every face).
                let filter = req.interest.name.get(4).and_then(|c| {
                    mgmt::FaceQueryFilter::decode(&Bytes::copy_from_slice(c.value())).ok()
                });
                match filter {
                    Some(filter) => {
                        let list: Vec<FaceInfo> = faces
                            .list()
                            .into_iter()
                            .filter(|f| matches_filter(f, &filter))
                            .collect();
                        Ok(face_statuses(fw, &list))
                    }
                    None => Err(self.respond(
                        req.interest,
                        400,
                        "Malformed filter",
                        &ControlParameters::default(),
                    )),
                }
            }
            // Ours (not NFD's): every face's counters, drops and limits, as JSON.
            "drops" => Ok(serde_json::to_vec(&face_stats(fw, faces)).unwrap_or_default()),
            _ => return None,
        })
    }
}

/// The ControlParameters describing a face, as NFD's `faces/create` answers them.
fn face_params(info: &FaceInfo) -> ControlParameters {
    ControlParameters {
        face_id: Some(info.id.0),
        uri: Some(info.remote.to_string()),
        local_uri: Some(info.local.to_string()),
        face_persistency: Some(info.persistency.code()),
        mtu: info.mtu.map(|m| m as u64),
        flags: Some(0),
        ..ControlParameters::default()
    }
}

crate::stats! {
    /// One face: the forwarder's counters (network packets) and the link's (what crossed the
    /// socket); `faces/drops`, `/api/status` and `/metrics` (label `face`) show them.
    pub struct FaceStats {
        /// FaceId (the `face` label of its metrics).
        pub id: u64 = json,
        /// Remote FaceUri.
        pub remote: String = info("nameway_face_info"; by "remote")
            help "A face's URIs, scope and persistency",
        /// Local FaceUri.
        pub local: String = info("nameway_face_info"; by "local"),
        /// `local` or `non-local`.
        pub scope: &'static str = info("nameway_face_info"; by "scope"),
        /// `on-demand`, `persistent` or `permanent`.
        pub persistency: String = info("nameway_face_info"; by "persistency"),
        /// Interests received.
        pub n_in_interests: u64 = counter("nameway_face_rx_packets", "type" = "interest")
            help "Network packets received on a face, by type",
        /// Data received.
        pub n_in_data: u64 = counter("nameway_face_rx_packets", "type" = "data"),
        /// Nacks received.
        pub n_in_nacks: u64 = counter("nameway_face_rx_packets", "type" = "nack"),
        /// Interests sent.
        pub n_out_interests: u64 = counter("nameway_face_tx_packets", "type" = "interest")
            help "Network packets sent on a face, by type",
        /// Data sent.
        pub n_out_data: u64 = counter("nameway_face_tx_packets", "type" = "data"),
        /// Nacks sent.
        pub n_out_nacks: u64 = counter("nameway_face_tx_packets", "type" = "nack"),
        /// Link packets (datagrams or stream TLVs) received on a face.
        pub in_packets: u64 = counter("nameway_face_rx_link_packets"),
        /// Link packets sent on a face.
        pub out_packets: u64 = counter("nameway_face_tx_link_packets"),
        /// Bytes received on a face.
        pub in_bytes: u64 = counter("nameway_face_rx_bytes"),
        /// Bytes sent on a face.
        pub out_bytes: u64 = counter("nameway_face_tx_bytes"),
        /// PIT entries a face created and is charged for under fair admission.
        pub pit_entries: usize = gauge("nameway_face_pit_entries"),
        /// The face's Interest rate limit (Interests per second), when it has one.
        pub interest_rate_limit: Option<u32> = gauge("nameway_face_interest_rate_limit"),
        /// Its burst (Interests).
        pub interest_burst: Option<u32> = gauge("nameway_face_interest_burst"),
        /// Drops by the forwarder, by reason (non-zero only).
        pub drops: BTreeMap<&'static str, u64> = counter("nameway_face_drops", "layer" = "forwarder"; by "reason")
            help "Packets of a face dropped, by layer and reason (only reasons that occurred)",
        /// Drops by the link service and socket, by reason (non-zero only).
        pub link_drops: BTreeMap<&'static str, u64> = counter("nameway_face_drops", "layer" = "link"; by "reason"),
    }
}

/// Every open face's statistics, by id.
pub(super) fn face_stats(fw: &Forwarder, faces: &FaceSystem) -> Vec<FaceStats> {
    let mut list = faces.list();
    list.sort_by_key(|f| f.id.0);
    list.iter()
        .map(|info| {
            let fw_face = fw.face(FaceId(info.id.0));
            let fc = fw.face_counters(FaceId(info.id.0)).unwrap_or_default();
            let limit = fw_face.and_then(|f| f.interest_rate_limit());
            let l = &info.counters;
            FaceStats {
                id: info.id.0,
                remote: info.remote.to_string(),
                local: info.local.to_string(),
                scope: match info.scope {
                    nameway_face::FaceScope::Local => "local",
                    _ => "non-local",
                },
                persistency: info.persistency.to_string(),
                n_in_interests: fc.n_in_interests,
                n_in_data: fc.n_in_data,
                n_in_nacks: fc.n_in_nacks,
                n_out_interests: fc.n_out_interests,
                n_out_data: fc.n_out_data,
                n_out_nacks: fc.n_out_nacks,
                in_packets: l.in_packets,
                out_packets: l.out_packets,
                in_bytes: l.in_bytes,
                out_bytes: l.out_bytes,
                pit_entries: fw.face_pit_entries(FaceId(info.id.0)),
                interest_rate_limit: limit.map(|l| l.per_second),
                interest_burst: limit.map(|l| l.burst),
                drops: fc.drops.occurred().collect(),
                link_drops: link_drops(&info.counters, false),
            }
        })
        .collect()
}

/// A face's link-layer drops by reason (what the face system refused or lost before or after
/// the forwarder: queue full, malformed, injected faults...): non-zero only, or every reason.
pub(crate) fn link_drops(
    l: &nameway_face::FaceCounters,
    zeros: bool,
) -> BTreeMap<&'static str, u64> {
    [
        ("malformed", l.drop_malformed),
        ("too-large", l.drop_too_large),
        ("queue-full", l.drop_queue_full),
        ("rx-backlog", l.drop_rx_backlog),
        ("reassembly", l.drop_reassembly),
        ("mtu", l.drop_mtu),
        ("send-error", l.drop_send_error),
        ("link-down", l.drop_link_down),
        ("fault", l.drop_fault),
        ("fault-queue", l.drop_fault_queue),
    ]
    .into_iter()
    .filter(|(_, n)| zeros || *n > 0)
    .collect()
}

/// The NFD face scope code of a face.
fn scope_code(info: &FaceInfo) -> u64 {
    match info.scope {
        nameway_face::FaceScope::Local => mgmt::face_scope::LOCAL,
        _ => mgmt::face_scope::NON_LOCAL,
    }
}

/// The NFD link type code of a face.
fn link_type_code(info: &FaceInfo) -> u64 {
    match info.link_type {
        nameway_face::LinkType::PointToPoint => mgmt::link_type::POINT_TO_POINT,
        _ => mgmt::link_type::MULTI_ACCESS,
    }
}

/// FaceStatus records for `faces/list` and `faces/query`.
fn face_statuses(fw: &Forwarder, list: &[FaceInfo]) -> Vec<u8> {
    list.iter()
        .flat_map(|info| {
            let c = fw.face_counters(FaceId(info.id.0)).unwrap_or_default();
            FaceStatus {
                face_id: info.id.0,
                uri: info.remote.to_string(),
                local_uri: info.local.to_string(),
                expiration_period: None,
                face_scope: scope_code(info),
                face_persistency: info.persistency.code(),
                link_type: link_type_code(info),
                base_congestion_marking_interval: None,
                default_congestion_threshold: None,
                mtu: info.mtu.map(|m| m as u64),
                n_in_interests: c.n_in_interests,
                n_in_data: c.n_in_data,
                n_in_nacks: c.n_in_nacks,
                n_out_interests: c.n_out_interests,
                n_out_data: c.n_out_data,
                n_out_nacks: c.n_out_nacks,
                n_in_bytes: info.counters.in_bytes,
                n_out_bytes: info.counters.out_bytes,
                flags: 0,
            }
            .encode()
        })
        .collect()
}

/// NFD's `FaceManager::matchFilter`: UriScheme matches the remote or the local FaceUri (so
/// `unix` selects the Unix-socket faces, whose remote URI is `fd://N`), and FaceScope,
/// FacePersistency and LinkType are compared too.
fn matches_filter(info: &FaceInfo, f: &mgmt::FaceQueryFilter) -> bool {
    f.face_id.is_none_or(|id| id == info.id.0)
        && f.uri_scheme
            .as_deref()
            .is_none_or(|s| info.remote.scheme() == s || info.local.scheme() == s)
        && f.uri
            .as_deref()
            .is_none_or(|u| info.remote.to_string() == u)
        && f.local_uri
            .as_deref()
            .is_none_or(|u| info.local.to_string() == u)
        && f.face_scope.is_none_or(|s| s == scope_code(info))
        && f.face_persistency
            .is_none_or(|p| p == info.persistency.code())
        && f.link_type.is_none_or(|l| l == link_type_code(info))
}
