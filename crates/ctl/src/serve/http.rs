//! `--http`: a plain HTTP/1.1 listener with the counters (`/metrics`, Prometheus text) and
//! the topology and routers (`/status`, JSON), and the operators' API ([`super::api`],
//! `/api/...`). Read-only but for `POST /api/cache` ([`super::cache_api`], with the API
//! token); one request per connection.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use super::api::{self, json_str, ApiError, Request};
use super::Shared;

pub(super) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((mut s, _)) = listener.accept().await else {
            continue;
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            let mut n = 0;
            while n < buf.len() {
                match s.read(&mut buf[n..]).await {
                    Ok(0) | Err(_) => return,
                    Ok(k) => n += k,
                }
                if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            let head = String::from_utf8_lossy(&buf[..n]);
            let method = head.split_whitespace().next().unwrap_or("GET");
            let path = head.split_whitespace().nth(1).unwrap_or("/");
            let (status, ctype, body) = match (path, Request::parse(path)) {
                _ if method == "POST" => match path.split_once('?').unwrap_or((path, "")) {
                    ("/api/cache", query) => super::cache_api::post(&shared, &head, query).await,
                    _ => (
                        "405 Method Not Allowed",
                        "text/plain",
                        "only /api/cache takes POST\n".into(),
                    ),
                },
                ("/metrics", _) => ("200 OK", "text/plain; version=0.0.4", metrics(&shared)),
                ("/status", _) => ("200 OK", "application/json", status(&shared)),
                ("/", _) => {
                    let s = shared
                        .status
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    (
                        "200 OK",
                        "text/html; charset=utf-8",
                        super::page::render(&s),
                    )
                }
                (_, Some(Ok(req))) => {
                    let (status, body) = api::answer(&shared, &req);
                    (status, "application/json", body)
                }
                (_, Some(Err(e @ ApiError::BadQuery(_)))) => {
                    ("400 Bad Request", "text/plain", format!("{e}\n"))
                }
                _ => ("404 Not Found", "text/plain", "not found\n".into()),
            };
            let reply = format!(
                "HTTP/1.1 {status}\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(reply.as_bytes()).await;
        });
    }
}

fn metrics(shared: &Shared) -> String {
    let mut out = String::new();
    for (reason, v) in shared.auth.counters.all() {
        let _ = writeln!(out, "namewayctl_agents_total{{result=\"{reason}\"}} {v}");
    }
    for (result, v) in shared.auth.counters.renewals() {
        let _ = writeln!(out, "namewayctl_renewals_total{{result=\"{result}\"}} {v}");
    }
    for (result, v) in shared.api_writes.all() {
        let _ = writeln!(
            out,
            "namewayctl_api_writes_total{{result=\"{result}\"}} {v}"
        );
    }
    let c = &shared.counters;
    for (name, v) in [
        ("namewayctl_connections_total", &c.connections),
        ("namewayctl_connected", &c.connected),
        ("namewayctl_objects_sent_total", &c.objects_sent),
        ("namewayctl_bad_messages_total", &c.bad_messages),
        ("namewayctl_ca_wakes_total", &c.ca_wakes),
        (
            "namewayctl_object_packets_sent_total",
            &shared.offers.answered,
        ),
        (
            "namewayctl_object_interests_unanswered_total",
            &shared.offers.unanswered,
        ),
    ] {
        let _ = writeln!(out, "{name} {}", v.load(Ordering::Relaxed));
    }
    let s = shared
        .status
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let _ = writeln!(out, "namewayctl_links {}", s.links.len());
    let _ = writeln!(out, "namewayctl_reports_total {}", s.state.reports);
    let _ = writeln!(
        out,
        "namewayctl_computations_total {}",
        s.state.computations
    );
    let _ = writeln!(
        out,
        "namewayctl_incremental_updates_total {}",
        s.state.incremental
    );
    let _ = writeln!(out, "namewayctl_acks_total {}", s.state.acks);
    out
}

fn status(shared: &Shared) -> String {
    let s = shared
        .status
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let links: Vec<String> = s
        .links
        .iter()
        .map(|(a, b, c)| {
            format!(
                "{{\"a\":{},\"b\":{},\"cost\":{c}}}",
                json_str(a),
                json_str(b)
            )
        })
        .collect();
    let routers: Vec<String> = s
        .routers
        .iter()
        .map(|(n, up, cur, ack)| format!("{{{}}}", api::router_members(n, *up, *cur, *ack)))
        .collect();
    let regs: Vec<String> = s
        .registrations
        .iter()
        .map(|(r, p, f)| {
            format!(
                "{{\"router\":{},\"prefix\":{},\"face\":{f}}}",
                json_str(r),
                json_str(p)
            )
        })
        .collect();
    format!(
        "{{\"links\":[{}],\"routers\":[{}],\"registrations\":[{}]}}\n",
        links.join(","),
        routers.join(","),
        regs.join(",")
    )
}
