//! The capture manager (ours: `capture/start`, `capture/stop`); the sessions themselves are in
//! [`crate::capture`].

use nameway_face::FaceSystem;
use nameway_wire::mgmt::ControlParameters;

use super::{Management, Outcome, Request};

impl Management {
    /// `capture/<verb>`: mirror a face's packets to the requesting face (`nameway capture`).
    pub(super) fn capture_command(
        &mut self,
        faces: &FaceSystem,
        req: &Request<'_>,
        verb: &str,
        p: ControlParameters,
    ) -> Outcome {
        let (interest, incoming) = (req.interest, req.incoming);
        match verb {
            "start" => {
                let face = p.face_id.filter(|&f| f != 0);
                if face.is_some_and(|f| faces.info(nameway_face::FaceId(f)).is_none()) {
                    return self.respond(interest, 404, "Face not found", &p);
                }
                match self.captures.start(incoming, face) {
                    Ok(()) => {
                        tracing::info!(sink = incoming, face = ?face, "capture started");
                        self.respond(interest, 200, "OK", &p)
                    }
                    Err(_) => self.respond(interest, 503, "Too many capture sessions", &p),
                }
            }
            "stop" => {
                let totals = self.captures.stop(incoming).unwrap_or_default();
                // Capacity: records sent to the sink; Count: records dropped (slow reader).
                let body = ControlParameters {
                    face_id: Some(incoming),
                    capacity: Some(totals.captured),
                    count: Some(totals.dropped),
                    ..ControlParameters::default()
                };
                self.respond(interest, 200, "OK", &body)
            }
            _ => Outcome::Nothing,
        }
    }
}
