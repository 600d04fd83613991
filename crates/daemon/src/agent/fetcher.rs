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

#[cfg(test)]
mod tests {
    use super::*;
    use nameway_ctl::ca::Authority;
    use nameway_ctl::objects::{ConfigBody, ConfigKind, Offers};
    use nameway_ctl::{Fib, NextHop};

    fn authority(dir: &std::path::Path, tag: &str) -> Authority {
        Authority::create(
            &"/example".parse().unwrap(),
            &dir.join(format!("{tag}.key")),
            &dir.join(format!("{tag}.cert")),
        )
        .unwrap()
    }

    fn fib_object(version: u64, prefixes: usize) -> ConfigObject {
        let mut fib = Fib::new();
        for i in 0..prefixes {
            let p: Name = format!("/example/app-{i}").parse().unwrap();
            fib.insert(p, vec![NextHop { face: 300, cost: 1 }]);
        }
        ConfigObject {
            router: "/example/r1".parse().unwrap(),
            kind: ConfigKind::Fib,
            version,
            base: None,
            body: ConfigBody::FibSnapshot(fib),
        }
    }

    /// The session's side of the bridge, as `link.rs` drives it: Interests out to the
    /// controller (here `offers` answering at once), Data back in, objects out in order.
    async fn run(fetcher: &mut Fetcher, offers: &mut Offers, want: usize) -> Vec<Fetched> {
        let mut got = Vec::new();
        while got.len() < want {
            match fetcher.next().await {
                Fetched::Interest(wire) => {
                    if let Some(data) = offers.answer(wire) {
                        fetcher.deliver(&data).await.unwrap();
                    }
                }
                other => got.push(other),
            }
        }
        got
    }

    #[tokio::test]
    async fn offers_are_fetched_in_order_and_a_forged_one_is_refused_between_them() {
        let dir = tempfile::tempdir().unwrap();
        let ca = authority(dir.path(), "ca");
        let forger = authority(dir.path(), "forger");
        let anchor = Certificate::decode(ca.certificate().wire().clone()).unwrap();
        let mut fetcher = Fetcher::start(anchor).unwrap();
        let mut offers = Offers::new();
        let big = fib_object(1, 1500);
        let forged = fib_object(2, 3);
        let small = fib_object(3, 3);
        fetcher.offer(offers.offer(big.publish(&ca).unwrap()));
        fetcher.offer(offers.offer(forged.publish(&forger).unwrap()));
        fetcher.offer(offers.offer(small.publish(&ca).unwrap()));
        let got = run(&mut fetcher, &mut offers, 3).await;
        let outcome: Vec<Result<u64, String>> = got
            .into_iter()
            .map(|f| match f {
                Fetched::Object(_, r) => match *r {
                    Ok(o) => Ok(o.version),
                    Err(ObjectFetchError::Verification(_)) => Err("verification".into()),
                    Err(e) => Err(e.to_string()),
                },
                other => Err(format!("{other:?}")),
            })
            .collect();
        assert_eq!(outcome, vec![Ok(1), Err("verification".to_owned()), Ok(3)]);
    }
}
