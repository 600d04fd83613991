//! A producer's end of a real Unix socket for the consumer tests: one connection, each
//! Interest answered by a closure.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use bytes::Bytes;
use nameway_wire::StreamFramer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixListener;

/// Accepts one connection on `listener` and sends, for each Interest received (its wire), what
/// `answer` returns (nothing: no answer), until the consumer closes the connection.
pub async fn serve_one(listener: UnixListener, mut answer: impl FnMut(Bytes) -> Vec<u8>) {
    serve_one_pausing(listener, move |packet| (answer(packet), None)).await;
}

/// [`serve_one`] whose `answer` may also ask for a pause: then what is answered so far is sent
/// at once, on its own, and the producer waits that long before it goes on.
pub async fn serve_one_pausing(
    listener: UnixListener,
    mut answer: impl FnMut(Bytes) -> (Vec<u8>, Option<Duration>),
) {
    let (mut sock, _) = listener.accept().await.unwrap();
    let mut framer = StreamFramer::default();
    loop {
        if sock.read_buf(framer.read_buffer()).await.unwrap_or(0) == 0 {
            return;
        }
        let mut out = Vec::new();
        while let Some(packet) = framer.next_packet().unwrap() {
            let (bytes, pause) = answer(packet);
            out.extend_from_slice(&bytes);
            if let Some(pause) = pause {
                sock.write_all(&out).await.unwrap();
                out.clear();
                tokio::time::sleep(pause).await;
            }
        }
        if sock.write_all(&out).await.is_err() {
            return;
        }
    }
}
