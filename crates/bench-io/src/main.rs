//! `bench-io`: the same relay on epoll and on io_uring, CPU per exchange for each.
//!
//! ```text
//! bench-io [--exchanges N] [--rounds R] [--window W] [--batching] [--clients-epoll]
//!          [--engines epoll,uring,uring-single,uring-sqpoll]
//! bench-io consumer --connect PATH --exchanges N --window W [--batching] [--epoll]  (started by the above)
//! bench-io producer --connect PATH [--batching] [--epoll]                           (started by the above)
//! ```

use std::os::unix::net::UnixStream;
use std::process::ExitCode;

use bench_io::run::{run_round, Engine, Load, Round};
use bench_io::{client, Error};

const USAGE: &str = "usage: bench-io [--exchanges N] [--rounds R] [--window W] [--batching] \
                     [--clients-epoll] [--engines epoll,uring,uring-single,uring-sqpoll]";

struct Args {
    exchanges: u64,
    rounds: usize,
    window: u64,
    batching: bool,
    clients_epoll: bool,
    engines: Vec<Engine>,
    connect: Option<String>,
    bad_packet_at: Option<u64>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        exchanges: 200_000,
        rounds: 5,
        window: 16,
        batching: false,
        clients_epoll: false,
        engines: vec![Engine::Epoll, Engine::Uring, Engine::UringSingle],
        connect: None,
        bad_packet_at: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        let number = |v: String| {
            v.parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{flag}: '{v}' is not a positive number"))
        };
        match flag.as_str() {
            "--exchanges" => a.exchanges = number(value()?)?,
            "--rounds" => a.rounds = number(value()?)? as usize,
            "--window" => a.window = number(value()?)?,
            "--batching" => a.batching = true,
            "--clients-epoll" | "--epoll" => a.clients_epoll = true,
            "--connect" => a.connect = Some(value()?),
            "--bad-packet-at" => a.bad_packet_at = Some(number(value()?)?),
            "--engines" => {
                a.engines = value()?
                    .split(',')
                    .map(|n| Engine::parse(n).ok_or_else(|| format!("unknown engine '{n}'")))
                    .collect::<Result<_, _>>()?;
            }
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument '{other}'\n{USAGE}")),
        }
    }
    Ok(a)
}

fn connect(a: &Args) -> Result<UnixStream, Error> {
    let path = a
        .connect
        .as_deref()
        .ok_or_else(|| Error::Client("--connect PATH is required".into()))?;
    UnixStream::connect(path).map_err(|e| Error::Io("connect", e))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn bench(a: &Args) -> Result<(), Error> {
    let exe = std::env::current_exe().map_err(|e| Error::Io("current_exe", e))?;
    let load = Load {
        exchanges: a.exchanges,
        window: a.window,
        batching: a.batching,
        clients_epoll: a.clients_epoll,
        bad_packet_at: None,
    };
    println!(
        "bench-io: {} exchanges x {} rounds, window {}, {} clients waiting {}; load average {}",
        a.exchanges,
        a.rounds,
        a.window,
        if a.batching {
            "batching"
        } else {
            "one-packet-per-syscall (ndnget/ndnserve-like)"
        },
        if a.clients_epoll {
            "in epoll"
        } else {
            "in read"
        },
        load_average()
    );
    let mut rounds: Vec<Round> = Vec::new();
    for r in 0..a.rounds {
        // Alternate the order, so that no engine always runs first.
        let mut order = a.engines.clone();
        if r % 2 == 1 {
            order.reverse();
        }
        for engine in order {
            let round = run_round(&exe, engine, load)?;
            println!(
                "round {} {:<13} cpu {:6.2} us/x (thread {:6.2})  syscalls {:5.2}/x  \
                 switches {:5.3}/x  {:8.0} x/s  clients {:6.2} us/x{}{}",
                r + 1,
                engine.name(),
                round.cpu_per_exchange(),
                round.thread_cpu_per_exchange(),
                round.syscalls_per_exchange(),
                round.switches_per_exchange(),
                round.rate(),
                round.clients_cpu_per_exchange(),
                if engine != Engine::Epoll && !round.multishot {
                    "  (single recv)"
                } else {
                    ""
                },
                if round.io_threads.is_empty() {
                    String::new()
                } else {
                    format!("  io threads: {}", round.io_threads.join(","))
                },
            );
            rounds.push(round);
        }
    }
    println!("load average after: {}", load_average());
    let med = |e: Engine, f: fn(&Round) -> f64| {
        median(rounds.iter().filter(|r| r.engine == e).map(f).collect())
    };
    println!();
    println!(
        "| engine | CPU µs/exchange (process) | relay thread | syscalls/exchange | \
         switches/exchange | exchanges/s | clients' CPU µs/exchange | CPU vs epoll |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let base = med(Engine::Epoll, Round::cpu_per_exchange);
    for &e in &a.engines {
        let cpu = med(e, Round::cpu_per_exchange);
        println!(
            "| {} | {:.2} | {:.2} | {:.2} | {:.3} | {:.0} | {:.2} | {} |",
            e.name(),
            cpu,
            med(e, Round::thread_cpu_per_exchange),
            med(e, Round::syscalls_per_exchange),
            med(e, Round::switches_per_exchange),
            med(e, Round::rate),
            med(e, Round::clients_cpu_per_exchange),
            if base.is_nan() {
                "-".to_string()
            } else {
                format!("{:.3}", cpu / base)
            }
        );
    }
    // The same-run ratio, round by round (each round ran every engine once).
    if a.engines.contains(&Engine::Epoll) {
        for &e in a.engines.iter().filter(|e| **e != Engine::Epoll) {
            let ratios: Vec<f64> = (0..a.rounds)
                .filter_map(|r| {
                    let of = |x: Engine| {
                        rounds
                            .iter()
                            .filter(|q| q.engine == x)
                            .nth(r)
                            .map(Round::cpu_per_exchange)
                    };
                    Some(of(e)? / of(Engine::Epoll)?)
                })
                .collect();
            let shown: Vec<String> = ratios.iter().map(|x| format!("{x:.3}")).collect();
            println!(
                "{} / epoll, CPU per exchange, round by round: {} (median {:.3})",
                e.name(),
                shown.join(" "),
                median(ratios)
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let (role, rest) = match argv.first().map(String::as_str) {
        Some(r @ ("consumer" | "producer")) => (Some(r.to_string()), &argv[1..]),
        _ => (None, &argv[..]),
    };
    let args = match parse(rest) {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("bench-io: {msg}");
            return ExitCode::from(2);
        }
    };
    let result = match role.as_deref() {
        Some("consumer") => connect(&args).and_then(|s| {
            let wait = client::Wait::new(&s, args.clients_epoll)?;
            client::consumer(s, &wait, args.exchanges, args.window, args.batching)
        }),
        Some(_) => connect(&args).and_then(|s| {
            let wait = client::Wait::new(&s, args.clients_epoll)?;
            client::producer(s, &wait, args.batching, args.bad_packet_at).map(drop)
        }),
        None => bench(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let who = role.as_deref().unwrap_or("relay");
            eprintln!("bench-io {who}: {e}");
            ExitCode::FAILURE
        }
    }
}
