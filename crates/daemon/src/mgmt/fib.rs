//! The FIB manager (`fib/add-nexthop`, `fib/remove-nexthop`, `fib/list`), as NFD's
//! `FibManager`.

use nameway_fw::{FaceId, Forwarder, MAX_PREFIX_DEPTH};
use nameway_wire::mgmt::{ControlParameters, FibEntry, NextHopRecord};

use super::{face_or, Management, Outcome, Request};

impl Management {
    /// `fib/<verb>`.
    pub(super) fn fib_command(
        &mut self,
        fw: &mut Forwarder,
        req: &Request<'_>,
        verb: &str,
        mut p: ControlParameters,
    ) -> Outcome {
        if !matches!(verb, "add-nexthop" | "remove-nexthop") {
            return Outcome::Nothing;
        }
        let Some(name) = p.name.clone() else {
            return self.respond(req.interest, 400, "Name is required", &p);
        };
        let face = face_or(p.face_id, req.incoming);
        match verb {
            "add-nexthop" => {
                if name.len() > MAX_PREFIX_DEPTH {
                    return self.respond(req.interest, 414, "Prefix too long", &p);
                }
                let cost = p.cost.unwrap_or(0);
                match fw.add_nexthop(&name, FaceId(face), cost) {
                    Ok(()) => {
                        p.face_id = Some(face);
                        p.cost = Some(cost);
                        self.respond(req.interest, 200, "OK", &p)
                    }
                    Err(_) => self.respond(req.interest, 410, "Face not found", &p),
                }
            }
            _ => {
                fw.remove_nexthop(&name, FaceId(face));
                p.face_id = Some(face);
                self.respond(req.interest, 200, "OK", &p)
            }
        }
    }
}

/// `fib/list`.
pub(super) fn list(fw: &Forwarder) -> Vec<u8> {
    fw.fib_entries()
        .flat_map(|(name, hops)| {
            FibEntry {
                name: name.clone(),
                next_hops: hops
                    .iter()
                    .map(|h| NextHopRecord {
                        face_id: h.face.0,
                        cost: h.cost,
                    })
                    .collect(),
            }
            .encode()
        })
        .collect()
}
