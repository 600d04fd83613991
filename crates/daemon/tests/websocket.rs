//! WebSocket faces of a real namewayd, driven by a WebSocket client: Interest/Data exchange with
//! a python-ndn producer on the Unix socket, one packet per message; a text, oversized or
//! malformed message closes that face only (counted); wss:// with a certificate made here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::{free_port, App, Daemon};
use futures_util::{SinkExt, StreamExt};
use nameway_wire::{Data, Interest};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

fn interest(name: &str, nonce: u32) -> Bytes {
    let mut i = Interest::new(name.parse().unwrap());
    i.nonce = Some(nonce);
    i.lifetime_ms = Some(2000);
    i.encode()
}

/// The next binary message as a Data, within 5 s.
async fn next_data<S>(ws: &mut S) -> Data
where
    S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .expect("no answer in 5 s")
            .expect("connection ended")
            .unwrap();
        if let Message::Binary(b) = msg {
            return Data::decode(&b).unwrap();
        }
    }
}

/// Whether the server closed the connection within 5 s.
async fn closed_by_server<S>(ws: &mut S) -> bool
where
    S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        match tokio::time::timeout(Duration::from_secs(5), ws.next()).await {
            Err(_) => return false,
            Ok(None | Some(Err(_)) | Some(Ok(Message::Close(_)))) => return true,
            Ok(Some(Ok(_))) => {}
        }
    }
}

async fn connect(port: u16) -> tokio_tungstenite::WebSocketStream<TcpStream> {
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (ws, _) = tokio_tungstenite::client_async(format!("ws://127.0.0.1:{port}/"), tcp)
        .await
        .unwrap();
    ws
}

fn ws_daemon(extra: &str) -> (Daemon, u16) {
    let port = free_port();
    let d = Daemon::start(&format!("websocket = [\"127.0.0.1:{port}\"]\n{extra}"));
    (d, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_client_exchanges_and_bad_messages_close_only_their_face() {
    let Some(py) = common::python() else { return };
    let http = free_port();
    let (d, port) = ws_daemon(&format!("[http]\nlisten = \"127.0.0.1:{http}\"\n"));
    let base = format!("http://127.0.0.1:{http}");
    let closed_before = faces_closed(&base).await;
    let _p = App::producer(
        &py,
        &d.transport(),
        &["produce", "--prefix", "/ws/rust", "--size", "500"],
    );
    let mut good = connect(port).await;
    good.send(Message::Binary(interest("/ws/rust/a", 1)))
        .await
        .unwrap();
    let data = next_data(&mut good).await;
    assert_eq!(data.name.to_string(), "/ws/rust/a");
    assert_eq!(data.content.unwrap().len(), 500);

    // A text message: that face closes.
    let mut text = connect(port).await;
    text.send(Message::Text("hello".into())).await.unwrap();
    assert!(
        closed_by_server(&mut text).await,
        "text message did not close the face"
    );
    // An oversized binary message (over 8800 bytes): that face closes.
    let mut big = connect(port).await;
    let _ = big
        .send(Message::Binary(Bytes::from(vec![0x05; 9000])))
        .await;
    assert!(
        closed_by_server(&mut big).await,
        "oversized message did not close the face"
    );
    // Two packets in one message: not one TLV, that face closes.
    let mut two = connect(port).await;
    let mut both = interest("/ws/rust/b", 2).to_vec();
    both.extend_from_slice(&interest("/ws/rust/c", 3));
    two.send(Message::Binary(Bytes::from(both))).await.unwrap();
    assert!(
        closed_by_server(&mut two).await,
        "a two-packet message did not close the face"
    );

    // The first face still works, and answers a ping with a pong carrying its payload.
    good.send(Message::Binary(interest("/ws/rust/d", 4)))
        .await
        .unwrap();
    assert_eq!(next_data(&mut good).await.name.to_string(), "/ws/rust/d");
    good.send(Message::Ping(Bytes::from_static(b"nameway")))
        .await
        .unwrap();
    let pong = loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), good.next())
            .await
            .expect("no pong in 5 s")
            .expect("connection ended")
            .unwrap();
        if let Message::Pong(p) = msg {
            break p;
        }
    };
    assert_eq!(&pong[..], b"nameway");

    // Each bad face was counted by its close reason: two malformed (text, two packets), one
    // too large; nothing else was closed.
    // (The client sees the connection end just before the daemon counts it: wait for it.)
    let delta = |c: &serde_json::Value, k: &str| {
        c[k].as_u64().unwrap() - closed_before[k].as_u64().unwrap()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let closed = loop {
        let c = faces_closed(&base).await;
        if delta(&c, "malformed") + delta(&c, "too-large") >= 3
            || std::time::Instant::now() > deadline
        {
            break c;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let delta = |k: &str| delta(&closed, k);
    assert_eq!(delta("malformed"), 2, "{closed}");
    assert_eq!(delta("too-large"), 1, "{closed}");
    assert_eq!(
        delta("peer") + delta("io") + delta("destroyed"),
        0,
        "{closed}"
    );

    // The face dataset shows it as ws://, local scope (loopback to loopback).
    let faces = faces_list(&d).await;
    let ws_faces: Vec<_> = faces
        .iter()
        .filter(|f| f.uri.starts_with("ws://127.0.0.1:"))
        .collect();
    assert_eq!(ws_faces.len(), 1, "only the good face is left: {faces:?}");
    assert_eq!(ws_faces[0].local_uri, format!("ws://127.0.0.1:{port}"));
    assert_eq!(
        ws_faces[0].face_scope,
        nameway_wire::mgmt::face_scope::LOCAL
    );
    assert!(ws_faces[0].n_in_interests >= 2);
    assert!(
        d.log().contains("listening listener=ws://127.0.0.1:"),
        "{}",
        d.log()
    );
}

/// The face system's closed-face counters by reason, from `/api/status`.
async fn faces_closed(base: &str) -> serde_json::Value {
    let base = base.to_owned();
    tokio::task::spawn_blocking(move || {
        let (status, _, body) = common::http_get(&base, "/api/status");
        assert!(status.contains("200"), "{status}");
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        v["face_system"]["faces_closed"].clone()
    })
    .await
    .unwrap()
}

/// `faces/list` over a raw Unix connection.
async fn faces_list(d: &Daemon) -> Vec<nameway_wire::mgmt::FaceStatus> {
    let unix = d.unix.clone();
    tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut s = std::os::unix::net::UnixStream::connect(unix).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut i = Interest::new("/localhost/nfd/faces/list".parse().unwrap());
        i.can_be_prefix = true;
        i.must_be_fresh = true;
        i.nonce = Some(77);
        s.write_all(&i.encode()).unwrap();
        let mut buf = vec![0u8; 65536];
        let mut have = 0;
        loop {
            let n = s.read(&mut buf[have..]).unwrap();
            assert!(n > 0);
            have += n;
            if let Ok(data) = Data::decode(&Bytes::copy_from_slice(&buf[..have])) {
                let content = data.content.unwrap_or_default();
                return nameway_wire::mgmt::FaceStatus::decode_list(&content).unwrap();
            }
        }
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wss_with_a_configured_certificate() {
    let Some(py) = common::python() else { return };
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).unwrap();
    let (d, port) = ws_daemon(&format!(
        "websocket_cert = {cert_path:?}\nwebsocket_key = {key_path:?}\n"
    ));
    let _p = App::producer(
        &py,
        &d.transport(),
        &["produce", "--prefix", "/wss/rust", "--size", "700"],
    );
    // A client that trusts exactly this certificate.
    let mut roots = tokio_rustls::rustls::RootCertStore::empty();
    roots.add(cert.cert.der().clone()).unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = tokio_rustls::rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let server_name = tokio_rustls::rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let tls = connector.connect(server_name, tcp).await.unwrap();
    let (mut ws, _) = tokio_tungstenite::client_async(format!("wss://localhost:{port}/"), tls)
        .await
        .unwrap();
    ws.send(Message::Binary(interest("/wss/rust/x", 9)))
        .await
        .unwrap();
    let data = next_data(&mut ws).await;
    assert_eq!(data.name.to_string(), "/wss/rust/x");
    assert_eq!(data.content.unwrap().len(), 700);
    let faces = faces_list(&d).await;
    assert!(
        faces.iter().any(|f| f.uri.starts_with("wss://127.0.0.1:")),
        "{faces:?}"
    );

    // A plain WebSocket client on the TLS port gets nowhere, and the daemon goes on.
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let plain = tokio::time::timeout(
        Duration::from_secs(15),
        tokio_tungstenite::client_async(format!("ws://127.0.0.1:{port}/"), tcp),
    )
    .await;
    assert!(
        !matches!(plain, Ok(Ok(_))),
        "a plain handshake succeeded on a wss listener"
    );
    ws.send(Message::Binary(interest("/wss/rust/y", 10)))
        .await
        .unwrap();
    assert_eq!(next_data(&mut ws).await.name.to_string(), "/wss/rust/y");
}

#[test]
fn an_unusable_certificate_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.pem");
    std::fs::write(&cert, "not a certificate").unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        format!(
            "[faces]\nunix = {:?}\ntcp = []\nudp = []\nwebsocket = [\"127.0.0.1:{}\"]\nwebsocket_cert = {cert:?}\nwebsocket_key = {cert:?}\n",
            dir.path().join("s.sock"),
            free_port()
        ),
    )
    .unwrap();
    let err = common::refused_start(&config);
    assert!(err.contains("TLS for the WebSocket listener"), "{err}");
    assert!(err.contains("cert.pem"), "{err}");
}
