//! `nameway lab ...`: the arguments and what each command does. The `nameway` binary only
//! dispatches here.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};

use crate::error::LabError;
use crate::lab::{describe, Lab, Options, Stopped};
use crate::request::Action;
use crate::signals::Signals;
use crate::state::{self, State};
use crate::topology::Topology;

/// `nameway lab`: emulated networks of forwarders on this machine.
#[derive(Debug, Args)]
pub struct LabArgs {
    #[command(subcommand)]
    command: LabCommand,
    /// Folder of the labs' state, sockets and logs [default: $NAMEWAY_LAB_DIR, then
    /// /run/nameway-lab].
    #[arg(long, global = true, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Folder holding namewayd and nameway [default: $NAMEWAY_BIN_DIR, then this program's].
    #[arg(long, global = true, value_name = "DIR")]
    bin_dir: Option<PathBuf>,
    /// NFD as scripts/build-nfd.sh installed it [default: $NAMEWAY_NFD, then ~/nameway-nfd].
    #[arg(long, global = true, value_name = "DIR")]
    nfd: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum LabCommand {
    /// Bring a topology up and keep it up until Ctrl-C, SIGTERM, `lab down` or a failure.
    Up {
        /// The topology file (docs/lab.md).
        file: PathBuf,
        /// Return once the lab is up, leaving a runner in the background (its output goes
        /// to <dir>/<lab>/runner.log).
        #[arg(long)]
        detach: bool,
    },
    /// Tear a lab down (all labs without a name), including what a killed runner left.
    Down {
        /// The lab's name.
        name: Option<String>,
    },
    /// Faces, PIT, CS hit ratio, Interests and drops of every forwarder of a lab.
    Status {
        /// The lab's name (default: every lab that is up).
        name: Option<String>,
        /// Refresh every second, showing Interests per second.
        #[arg(long)]
        watch: bool,
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Crash a forwarder of a running lab (SIGKILL); the lab stays up without it.
    Kill {
        /// The lab's name.
        name: String,
        /// The node.
        node: String,
    },
    /// Start a killed forwarder again, with its configuration, identity and state.
    Restart {
        /// The lab's name.
        name: String,
        /// The node.
        node: String,
    },
    /// Bring a topology up, run its [[step]]s in order, tear it down.
    Run {
        /// The scenario: a topology file with [[step]]s.
        file: PathBuf,
    },
    /// Check a topology file without starting anything.
    Check {
        /// The topology file.
        file: PathBuf,
    },
    /// Reproduce the published results Nameway builds on, with ours and NFD's beside them.
    Reproduce(crate::reproduce::ReproduceArgs),
}

impl LabArgs {
    fn options(&self, verbose: bool) -> Options {
        let root = self
            .dir
            .clone()
            .or_else(|| std::env::var_os("NAMEWAY_LAB_DIR").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("/run/nameway-lab"));
        let bin_dir = self
            .bin_dir
            .clone()
            .or_else(|| std::env::var_os("NAMEWAY_BIN_DIR").map(PathBuf::from))
            .or_else(|| {
                std::env::current_exe()
                    .ok()
                    .and_then(|p| p.parent().map(Path::to_path_buf))
            })
            .unwrap_or_else(|| PathBuf::from("."));
        Options {
            root,
            bin_dir,
            nfd_dir: self.nfd.clone(),
            verbose,
        }
    }
}

/// Runs `nameway lab ...`.
///
/// # Errors
/// Whatever the command met; the message is one line.
pub fn main(args: &LabArgs) -> Result<ExitCode, LabError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| LabError::io("tokio runtime", e))?;
    rt.block_on(dispatch(args))
}

async fn dispatch(args: &LabArgs) -> Result<ExitCode, LabError> {
    let opts = args.options(true);
    match &args.command {
        LabCommand::Check { file } => check(file),
        LabCommand::Up {
            file,
            detach: false,
        } => up(file, opts).await,
        LabCommand::Up { file, detach: true } => detach(file, args, &opts).await,
        LabCommand::Down { name } => down(&opts, name.as_deref()).await,
        LabCommand::Status { name, watch, json } => {
            status(&opts, name.as_deref(), *watch, *json).await
        }
        LabCommand::Kill { name, node } => request(&opts, name, node, Action::Kill),
        LabCommand::Restart { name, node } => request(&opts, name, node, Action::Restart),
        LabCommand::Run { file } => run(file, opts).await,
        LabCommand::Reproduce(r) => crate::reproduce::main(r, opts).await,
    }
}

/// Reads and checks a topology file.
///
/// # Errors
/// The file cannot be read, or the topology is wrong.
pub fn load(file: &Path) -> Result<Topology, LabError> {
    let text = std::fs::read_to_string(file).map_err(|e| LabError::io(file, e))?;
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("lab");
    Ok(Topology::parse(&text, stem)?)
}

fn check(file: &Path) -> Result<ExitCode, LabError> {
    let t = load(file)?;
    let routes = t.resolve_routes()?;
    println!(
        "{}: lab {}, {} nodes, {} links, {} routes, {} steps: ok",
        file.display(),
        t.lab_name(),
        t.nodes.len(),
        t.links.len(),
        routes.len(),
        t.steps.len()
    );
    Ok(ExitCode::SUCCESS)
}

async fn up(file: &Path, opts: Options) -> Result<ExitCode, LabError> {
    let t = load(file)?;
    let mut signals = Signals::catch()?;
    let name = t.lab_name().to_owned();
    println!(
        "lab {name}: {} nodes, {} links; logs in {}",
        t.nodes.len(),
        t.links.len(),
        opts.root.join(&name).join("logs").display()
    );
    let mut lab = Lab::up(t, opts, &mut signals).await?;
    println!(
        "lab {name}: up in {:.2} s; `nameway lab status {name}`; Ctrl-C or `nameway lab down {name}` stops it",
        lab.state().up_seconds
    );
    let outcome = lab.supervise(&mut signals).await;
    let why = match &outcome {
        Ok(Stopped::Signal(s)) => (*s).to_owned(),
        Err(e) => format!("a failure: {e}"),
    };
    println!("lab {name}: stopping ({why})");
    let done = lab.down().await?;
    println!("lab {name}: down ({})", describe(&done));
    match outcome {
        Ok(_) => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e),
    }
}

/// `up --detach`: the runner is this program again, in a session of its own.
async fn detach(file: &Path, args: &LabArgs, opts: &Options) -> Result<ExitCode, LabError> {
    let t = load(file)?;
    let name = t.lab_name().to_owned();
    let dir = opts.root.join(&name);
    std::fs::create_dir_all(&dir).map_err(|e| LabError::io(&dir, e))?;
    let log_path = dir.join("runner.log");
    let log = std::fs::File::create(&log_path).map_err(|e| LabError::io(&log_path, e))?;
    let err = log.try_clone().map_err(|e| LabError::io(&log_path, e))?;
    let exe = std::env::current_exe().map_err(|e| LabError::io("current executable", e))?;
    let mut cmd = tokio::process::Command::new("setsid");
    cmd.arg(exe)
        .arg("lab")
        .arg("--dir")
        .arg(&opts.root)
        .arg("--bin-dir")
        .arg(&opts.bin_dir);
    if let Some(nfd) = &args.nfd {
        cmd.arg("--nfd").arg(nfd);
    }
    cmd.arg("up").arg(file);
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(err)
        .spawn()
        .map_err(|e| crate::net::missing("setsid", &e))?;
    let state_path = State::path(&opts.root, &name);
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Ok(Some(s)) = State::load(&state_path) {
            if s.up && s.runner_alive() {
                println!(
                    "lab {name}: up in {:.2} s (runner pid {}, output in {})",
                    s.up_seconds,
                    s.runner.map_or(0, |r| r.pid),
                    log_path.display()
                );
                return Ok(ExitCode::SUCCESS);
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(LabError::Node {
                node: "runner".into(),
                detail: format!(
                    "{}: {}",
                    crate::lab::describe_status(status),
                    crate::process::log_tail(&log_path, 2)
                ),
            });
        }
        if Instant::now() > deadline {
            return Err(LabError::NotReady {
                node: "runner".into(),
                seconds: 300,
                detail: format!("see {}", log_path.display()),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `kill` and `restart`: a request to the lab's runner ([`crate::request`]), and its answer.
fn request(opts: &Options, lab: &str, node: &str, action: Action) -> Result<ExitCode, LabError> {
    let state = State::load(&State::path(&opts.root, lab))?
        .filter(|s| s.up && s.runner_alive())
        .ok_or_else(|| LabError::NotUp(lab.to_owned()))?;
    let done = crate::request::submit(&state.dir, node, action)?;
    let answer = crate::request::wait_answer(&done, node, Duration::from_secs(120), || {
        state.runner_alive()
    })?;
    println!("lab {lab}: {answer}");
    Ok(ExitCode::SUCCESS)
}

async fn down(opts: &Options, name: Option<&str>) -> Result<ExitCode, LabError> {
    if !rustix::process::geteuid().is_root() {
        return Err(LabError::NotRoot);
    }
    let names = match name {
        Some(n) => vec![n.to_owned()],
        None => {
            let mut all = state::labs(&opts.root);
            // Namespaces of labs whose state file is gone.
            for ns in crate::net::namespaces()? {
                if let Some(rest) = ns.strip_prefix("nwl-") {
                    if let Some((lab, _)) = rest.split_once('-') {
                        all.push(lab.to_owned());
                    }
                }
            }
            all.sort();
            all.dedup();
            all
        }
    };
    if names.is_empty() {
        println!("no lab is up");
    }
    for n in names {
        let c = state::cleanup(&opts.root, &n).await?;
        if c.found_anything() {
            println!("lab {n}: down ({})", describe(&c));
        } else {
            println!("lab {n}: nothing was up");
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn status(
    opts: &Options,
    name: Option<&str>,
    watch: bool,
    json: bool,
) -> Result<ExitCode, LabError> {
    let names = match name {
        Some(n) => vec![n.to_owned()],
        None => state::labs(&opts.root),
    };
    if names.is_empty() {
        println!("no lab is up");
        return Ok(ExitCode::SUCCESS);
    }
    let mut signals = Signals::catch()?;
    let mut previous: Vec<Vec<crate::status::NodeStatus>> = Vec::new();
    loop {
        let mut text = String::new();
        let mut all = Vec::new();
        for (k, n) in names.iter().enumerate() {
            let s = State::load(&State::path(&opts.root, n))?
                .ok_or_else(|| LabError::NotUp(n.clone()))?;
            let nodes = crate::status::collect(&s).await;
            text.push_str(&crate::status::render(
                n,
                &nodes,
                previous.get(k).map(Vec::as_slice),
            ));
            all.push(serde_json::json!({ "lab": n, "up": s.up, "nodes": nodes }));
            if watch {
                if previous.len() <= k {
                    previous.push(Vec::new());
                }
                previous[k] = nodes;
            }
        }
        if json {
            println!("{}", serde_json::Value::Array(all));
        } else if watch {
            // Clear the screen, then the table.
            print!("\x1b[H\x1b[2J{text}");
        } else {
            print!("{text}");
        }
        if !watch {
            return Ok(ExitCode::SUCCESS);
        }
        tokio::select! {
            _ = signals.recv() => return Ok(ExitCode::SUCCESS),
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
}

async fn run(file: &Path, opts: Options) -> Result<ExitCode, LabError> {
    let t = load(file)?;
    if t.steps.is_empty() {
        return Err(crate::error::TopologyError::invalid(
            file.display().to_string(),
            "a scenario needs [[step]]s",
        )
        .into());
    }
    let name = t.lab_name().to_owned();
    let mut signals = Signals::catch()?;
    let mut lab = Lab::up(t, opts, &mut signals).await?;
    println!("lab {name}: up in {:.2} s", lab.state().up_seconds);
    let result = crate::scenario::run(&mut lab, &mut signals, true).await;
    let done = lab.down().await?;
    println!("lab {name}: down ({})", describe(&done));
    let steps = result?;
    println!("lab {name}: {} steps passed", steps.len());
    Ok(ExitCode::SUCCESS)
}
