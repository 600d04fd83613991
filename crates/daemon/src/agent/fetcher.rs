//! Objects in: the controller offers each object's versioned name (`Offer`) and the agent
//! fetches it with the transport library (`nameway_ctl::objects::fetch_object`, the pinned
//! anchor as trust anchor) over an in-memory stream whose other end is bridged to the
//! channel: the fetch's Interests go out as `Ndn` messages, the controller's Data come back
//! into the stream. Offers are fetched one at a time, in the order they came.

use bytes::Bytes;
use nameway_ctl::objects::{fetch_object, ConfigObject, ObjectFetchError};
use nameway_transport::client::{Client, ClientError, Conn, Incoming};
use nameway_transport::Certificate;
use nameway_wire::Name;
use tokio::sync::mpsc;

/// Room in each direction of the in-memory stream.
const BRIDGE_BUFFER: usize = 1 << 20;

/// What the fetcher has for the session.
#[derive(Debug)]
pub(crate) enum Fetched {
    /// An Interest of a fetch, for the controller.
    Interest(Bytes),
    /// An offered object: fetched, verified and decoded, or why not.
    Object(Name, Box<Result<ConfigObject, ObjectFetchError>>),
    /// The fetching thread ended (it cannot while the session holds the fetcher: a bug).
    Ended,
}

/// The session's fetcher: a thread running the fetches and the channel's end of the stream.
pub(crate) struct Fetcher {
    offers: mpsc::UnboundedSender<Name>,
    results: mpsc::UnboundedReceiver<(Name, Result<ConfigObject, ObjectFetchError>)>,
    bridge: Conn,
}

impl Fetcher {
    /// Starts the fetching thread; objects are verified against `anchor`.
    ///
    /// # Errors
    /// The thread cannot be started.
    pub(crate) fn start(anchor: Certificate) -> std::io::Result<Self> {
        let (agent_end, channel_end) = tokio::io::duplex(BRIDGE_BUFFER);
        let (offers, mut names) = mpsc::unbounded_channel::<Name>();
        let (done, results) = mpsc::unbounded_channel();
        // The transport's fetch is not `Send` (its sink and progress callback are `dyn`):
        // it runs on a thread of its own, on a single-threaded runtime. The thread ends when
        // the session drops the fetcher (no more offers; the stream closed under a fetch).
        let task = std::thread::Builder::new()
            .name("ctl-fetch".into())
            .spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .build()
                else {
                    return;
                };
                rt.block_on(async move {
                    let mut client =
                        Client::over(Conn::over_memory(agent_end, "controller channel"));
                    while let Some(name) = names.recv().await {
                        let got = fetch_object(&mut client, &name, &anchor).await;
                        if done.send((name, got)).is_err() {
                            return;
                        }
                    }
                });
            });
        task?;
        Ok(Self {
            offers,
            results,
            bridge: Conn::over_memory(channel_end, "controller channel"),
        })
    }

    /// The controller offered `name`: fetched after the offers before it.
    pub(crate) fn offer(&self, name: Name) {
        let _ = self.offers.send(name);
    }

    /// A packet from the controller (`Ndn`), into the fetch.
    ///
    /// # Errors
    /// The stream to the fetching task is closed.
    pub(crate) async fn deliver(&mut self, wire: &[u8]) -> Result<(), ClientError> {
        self.bridge.send(wire).await
    }

    /// The next Interest to send or object fetched. Cancel-safe.
    pub(crate) async fn next(&mut self) -> Fetched {
        loop {
            tokio::select! {
                p = self.bridge.recv() => match p {
                    Ok(Incoming::Interest(wire)) => return Fetched::Interest(wire),
                    // Nothing else comes from the fetch's side.
                    Ok(_) => continue,
                    Err(_) => return Fetched::Ended,
                },
                r = self.results.recv() => return match r {
                    Some((name, got)) => Fetched::Object(name, Box::new(got)),
                    None => Fetched::Ended,
                },
            }
        }
    }
}
