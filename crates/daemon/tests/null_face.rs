//! The null face (FaceId 255, `null://`) of a real namewayd, driven by python-ndn: found by
//! `faces/query` as nfdc finds it, routes to it from a management command and from the config
//! black-hole a prefix (a python-ndn consumer's Interest times out, no Nack, `/localhost` too),
//! its counters count what it swallowed, and `faces/destroy` of it is refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{App, Daemon};
use serde_json::Value;

/// The null face as `faces/query` with remote URI `null://` shows it (exactly one face).
fn null_face(py: &std::path::Path, d: &Daemon) -> Value {
    let r = App::run(py, &d.transport(), &["face-query", "--uri", "null://"]);
    let faces = r["faces"].as_array().unwrap_or_else(|| panic!("{r}"));
    assert_eq!(faces.len(), 1, "{r}");
    faces[0].clone()
}

#[test]
fn the_null_face_black_holes_a_prefix_and_is_permanent() {
    let Some(py) = common::python() else { return };
    let d = Daemon::start(
        "[[route]]\nprefix = \"/bh/config\"\nface = \"null://\"\n\
         [[route]]\nprefix = \"/localhost/bh\"\nface = \"null://\"\n",
    );
    // As NFD's makeNullFace: null:// both ends, local, permanent, point-to-point.
    let null = null_face(&py, &d);
    assert_eq!(null["face_id"], 255, "{null}");
    assert_eq!(null["uri"], "null://", "{null}");
    assert_eq!(null["local_uri"], "null://", "{null}");
    assert_eq!(null["face_scope"], 1, "local: {null}");
    assert_eq!(null["face_persistency"], 2, "permanent: {null}");
    assert_eq!(null["link_type"], 0, "point-to-point: {null}");
    assert_eq!(null["n_out_interests"], 0, "{null}");

    // A route by management command (python-ndn's own make_command), as `nfdc route add /bh/cmd
    // null://` sends after resolving null:// to 255.
    let r = App::run(
        &py,
        &d.transport(),
        &[
            "command",
            "--module",
            "rib",
            "--verb",
            "register",
            "--name",
            "/bh/cmd",
            "--face-id",
            "255",
        ],
    );
    assert_eq!(r["status_code"], 200, "{r}");

    // Interests under each black-holed prefix time out at the consumer: no Nack.
    for name in ["/bh/cmd/x", "/bh/config/y", "/localhost/bh/z"] {
        let r = App::run(
            &py,
            &d.transport(),
            &["consume", "--name", name, "--lifetime", "400"],
        );
        assert_eq!(r["timeout"], true, "{name}: {r}\n{}", d.log());
        assert!(r.get("nack").is_none(), "{name}: {r}");
    }
    // A prefix with no route at all still gets a Nack: the black hole is the route's doing.
    let r = App::run(
        &py,
        &d.transport(),
        &["consume", "--name", "/nowhere/x", "--lifetime", "400"],
    );
    assert!(r.get("nack").is_some(), "{r}");

    // The null face counted what it swallowed.
    let null = null_face(&py, &d);
    assert_eq!(null["n_out_interests"], 3, "{null}");
    assert!(null["n_out_bytes"].as_u64().unwrap() > 3 * 10, "{null}");
    assert_eq!(null["n_out_data"], 0, "{null}");
    assert_eq!(null["n_out_nacks"], 0, "{null}");

    // faces/destroy of 255 is refused, and the face stays.
    let r = App::run(
        &py,
        &d.transport(),
        &[
            "command",
            "--module",
            "faces",
            "--verb",
            "destroy",
            "--face-id",
            "255",
        ],
    );
    assert_eq!(r["status_code"], 403, "{r}");
    assert_eq!(null_face(&py, &d)["face_id"], 255);
}
