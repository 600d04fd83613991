//! A running lab: brought up from a checked topology, supervised, torn down.
//!
//! Bring-up order: check the programs and every forwarder's configuration
//! (`namewayd --check-config`) so a bad file starts nothing; remove what an earlier run of
//! the same lab left; write the state file; create namespaces and links; start every
//! forwarder and wait until each answers on its management socket; give NFD nodes their
//! faces and routes (nfdc); start the apps in file order, each waiting for its `ready` text.
//! With a `[controller]` ([`crate::controller`]): the domain and a token per router are made
//! first and the configurations checked with a placeholder pin; once the namespaces exist,
//! `namewayctl serve` starts on the management network and its pin is written into every
//! configuration before the forwarders start.
//! Any failure tears down what was made. Teardown stops the processes (SIGTERM, then SIGKILL
//! after 3 s), deletes the namespaces (and so the links) and the node directories (sockets,
//! keys) and the state file; logs stay. Dropping a [`Lab`] that was not torn down kills its
//! processes and deletes its namespaces at once.

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use nameway_transport::client::{Client, Transport};

use crate::config::{self, Identities};
use crate::controller;
use crate::error::LabError;
use crate::net;
use crate::nfd::NfdBuild;
use crate::plan::Plan;
use crate::process::{self, log_tail, ProcId, Running, Spawn};
use crate::request;
use crate::signals::Signals;
use crate::state::{self, Cleanup, NodeState, State};
use crate::topology::{NodeKind, Topology};

/// Where things are.
#[derive(Clone, Debug)]
pub struct Options {
    /// Root of the labs' directories (`/run/nameway-lab` by default).
    pub root: PathBuf,
    /// The folder holding `namewayd` and `nameway`.
    pub bin_dir: PathBuf,
    /// The NFD install folder given on the command line, if any (else `$NAMEWAY_NFD`, then
    /// `~/nameway-nfd`).
    pub nfd_dir: Option<PathBuf>,
    /// Print progress lines.
    pub verbose: bool,
}

impl Options {
    /// The NFD build, if there is one.
    pub fn nfd(&self) -> Option<NfdBuild> {
        NfdBuild::find(self.nfd_dir.as_deref())
    }
}

/// Why [`Lab::supervise`] returned.
#[derive(Debug)]
pub enum Stopped {
    /// A signal.
    Signal(&'static str),
}

/// A lab that is up.
#[derive(Debug)]
pub struct Lab {
    /// Its topology.
    pub topology: Topology,
    /// What was created.
    pub plan: Plan,
    opts: Options,
    state: State,
    /// Forwarders and apps by node index (`None`: not started, or an app that has ended).
    procs: Vec<Option<Running>>,
    /// Other processes started by [`Lab::spawn`].
    extra: Vec<Running>,
    nfd: Option<NfdBuild>,
    /// `namewayctl serve`, when the topology has a `[controller]`.
    ctl: Option<Running>,
    /// Enrolment tokens of the nameway nodes, by node index (with a `[controller]`).
    tokens: std::collections::HashMap<usize, String>,
    torn_down: bool,
}

/// How long a node may take to answer on its socket, plus a little per node (they start
/// together and share two cores).
const READY_BASE: Duration = Duration::from_secs(30);
const READY_PER_NODE: Duration = Duration::from_millis(500);

impl Lab {
    /// Brings a lab up (see the module documentation). `signals` are checked between steps:
    /// a signal during bring-up tears down what was made and returns
    /// [`LabError::Interrupted`].
    ///
    /// # Errors
    /// Not root, a program missing, a configuration refused, a command failed, a node did
    /// not start; nothing is left behind.
    pub async fn up(t: Topology, opts: Options, signals: &mut Signals) -> Result<Self, LabError> {
        let start = Instant::now();
        if !rustix::process::geteuid().is_root() {
            return Err(LabError::NotRoot);
        }
        let plan = Plan::new(&t, &opts.root);
        let nfd = opts.nfd();
        check_programs(&t, &opts, nfd.as_ref())?;
        if let Some(old) = State::load(&plan.state_file())? {
            if old.runner_alive() {
                return Err(LabError::AlreadyUp {
                    name: plan.lab.clone(),
                    pid: old.runner.map_or(0, |r| r.pid),
                });
            }
        }
        let left = state::cleanup(&opts.root, &plan.lab).await?;
        if left.found_anything() && opts.verbose {
            println!(
                "lab {}: removed what an earlier run left: {}",
                plan.lab,
                describe(&left)
            );
        }
        let mut lab = Self {
            state: State {
                lab: plan.lab.clone(),
                dir: plan.dir.clone(),
                runner: ProcId::current(),
                namespaces: plan.namespaces(),
                nodes: plan
                    .nodes
                    .iter()
                    .map(|n| NodeState {
                        name: n.name.clone(),
                        kind: n.kind,
                        netns: n.netns.clone(),
                        socket: n.socket.clone(),
                        log: n.log.clone(),
                        proc: None,
                    })
                    .collect(),
                extra: Vec::new(),
                up: false,
                up_seconds: 0.0,
            },
            procs: (0..plan.nodes.len()).map(|_| None).collect(),
            extra: Vec::new(),
            topology: t,
            plan,
            opts,
            nfd,
            ctl: None,
            tokens: std::collections::HashMap::new(),
            torn_down: false,
        };
        match lab.bring_up(signals).await {
            Ok(()) => {
                lab.state.up = true;
                lab.state.up_seconds = start.elapsed().as_secs_f64();
                lab.state.save()?;
                Ok(lab)
            }
            Err(e) => {
                lab.teardown_now();
                Err(e)
            }
        }
    }

    async fn bring_up(&mut self, signals: &mut Signals) -> Result<(), LabError> {
        self.prepare_dirs()?;
        let ids = self.make_identities()?;
        self.enrol().await?;
        self.write_configs(&ids, controller::PLACEHOLDER_PIN, true)
            .await?;
        signals.check()?;
        self.state.save()?;
        net::create(&self.topology, &self.plan)?;
        signals.check()?;
        if let Some(pin) = self.start_controller().await? {
            // The real pin, now that the controller has printed it.
            self.write_configs(&ids, &pin, false).await?;
        }
        // Forwarders without secure links start together; those with one start one at a
        // time in file order, each once the earlier ones answer (see config::is_initiator).
        let deadline = Instant::now() + READY_BASE + READY_PER_NODE * self.forwarders() as u32;
        let (secure, plain): (Vec<usize>, Vec<usize>) = (0..self.plan.nodes.len())
            .filter(|&i| self.plan.nodes[i].kind.is_forwarder())
            .partition(|&i| self.has_secure_link(i));
        for &i in &plain {
            self.start_forwarder(i).await?;
        }
        self.state.save()?;
        for &i in &plain {
            self.wait_forwarder(i, deadline, signals).await?;
        }
        for i in secure {
            self.start_forwarder(i).await?;
            self.state.save()?;
            self.wait_forwarder(i, deadline, signals).await?;
        }
        self.configure_nfd_nodes().await?;
        for i in 0..self.plan.nodes.len() {
            if self.plan.nodes[i].kind == NodeKind::App {
                signals.check()?;
                self.start_app(i, signals).await?;
            }
        }
        Ok(())
    }

    fn has_secure_link(&self, i: usize) -> bool {
        let name = &self.plan.nodes[i].name;
        self.topology
            .links
            .iter()
            .any(|l| l.secure.is_some() && (&l.a == name || &l.b == name))
    }

    fn forwarders(&self) -> usize {
        self.plan
            .nodes
            .iter()
            .filter(|n| n.kind.is_forwarder())
            .count()
    }

    fn prepare_dirs(&self) -> Result<(), LabError> {
        let logs = self.plan.dir.join("logs");
        if logs.exists() {
            std::fs::remove_dir_all(&logs).map_err(|e| LabError::io(&logs, e))?;
        }
        std::fs::create_dir_all(&logs).map_err(|e| LabError::io(&logs, e))?;
        for n in &self.plan.nodes {
            if n.kind.is_forwarder() {
                std::fs::create_dir_all(&n.dir).map_err(|e| LabError::io(&n.dir, e))?;
            }
        }
        Ok(())
    }

    /// Identity keys for the nodes with secure links, and their public keys.
    fn make_identities(&self) -> Result<Identities, LabError> {
        let mut ids = Identities::new();
        for l in self.topology.links.iter().filter(|l| l.secure.is_some()) {
            for end in [&l.a, &l.b] {
                let Some(i) = self.plan.index(end) else {
                    continue;
                };
                if ids.contains_key(&i) {
                    continue;
                }
                let path = self.plan.nodes[i].dir.join("identity.key");
                let (id, _) =
                    nameway_face::secure::Identity::load_or_create(&path).map_err(|e| {
                        LabError::Node {
                            node: end.clone(),
                            detail: format!("identity key: {e}"),
                        }
                    })?;
                ids.insert(i, id.public_key().to_string());
            }
        }
        Ok(ids)
    }

    /// With a `[controller]`: the domain's database (`namewayctl init`) in the controller's
    /// folder and an enrolment token per nameway node.
    async fn enrol(&mut self) -> Result<(), LabError> {
        let Some(section) = self.topology.controller.clone() else {
            return Ok(());
        };
        let bin = self.opts.bin_dir.join("namewayctl");
        let dir = controller::dir(&self.plan);
        std::fs::create_dir_all(&dir).map_err(|e| LabError::io(&dir, e))?;
        let db = controller::db(&self.plan).display().to_string();
        controller::namewayctl(&bin, &["init", "--domain", &section.domain, "--db", &db]).await?;
        for (i, n) in self.plan.nodes.iter().enumerate() {
            if n.kind != NodeKind::Nameway {
                continue;
            }
            let router = controller::router_name(&section, &n.name);
            let token =
                controller::namewayctl(&bin, &["token", "--router", &router, "--db", &db]).await?;
            self.tokens.insert(i, token.trim().to_owned());
        }
        Ok(())
    }

    /// With a `[controller]`: `namewayctl serve` in the controller's namespace, listening on
    /// the management bridge; returns the anchor's pin it prints.
    async fn start_controller(&mut self) -> Result<Option<String>, LabError> {
        let (Some(section), Some(netns)) = (&self.topology.controller, &self.plan.ctl_netns) else {
            return Ok(None);
        };
        let mut argv = vec![
            self.opts.bin_dir.join("namewayctl").display().to_string(),
            "serve".into(),
            "--db".into(),
            controller::db(&self.plan).display().to_string(),
            "--listen".into(),
            format!("{}:{}", controller::CTL_ADDR, controller::CTL_PORT),
        ];
        argv.extend(section.args.iter().cloned());
        let log = controller::log(&self.plan);
        let dir = controller::dir(&self.plan);
        let running = process::spawn(
            controller::CTL_NODE,
            &Spawn {
                netns,
                argv,
                env: vec![("RUST_LOG".into(), "info".into())],
                log: &log,
                cwd: Some(&dir),
            },
        )?;
        self.state.extra.push(running.id);
        self.ctl = Some(running);
        self.state.save()?;
        let pin = controller::wait_pin(&log, READY_BASE, || self.check_controller()).await?;
        Ok(Some(pin))
    }

    /// An error if `namewayctl serve` has exited.
    fn check_controller(&mut self) -> Result<(), LabError> {
        let Some(r) = self.ctl.as_mut() else {
            return Ok(());
        };
        match r.child.try_wait() {
            Ok(Some(status)) => Err(LabError::Node {
                node: r.name.clone(),
                detail: format!(
                    "the controller exited ({}); log: {}",
                    describe_status(status),
                    log_tail(&r.log, 4)
                ),
            }),
            Ok(None) => Ok(()),
            Err(e) => Err(LabError::io(&r.log, e)),
        }
    }

    /// The pid of `namewayctl serve`, when the lab has a controller.
    pub fn controller_pid(&self) -> Option<u32> {
        self.ctl.as_ref().map(|r| r.id.pid)
    }

    /// Writes every forwarder's configuration (with a `[controller]`, the agent's block
    /// pinning `pin`) and, when `check`, has namewayd check each.
    async fn write_configs(
        &self,
        ids: &Identities,
        pin: &str,
        check: bool,
    ) -> Result<(), LabError> {
        let namewayd = self.opts.bin_dir.join("namewayd");
        let mut checks = Vec::new();
        for (i, n) in self.plan.nodes.iter().enumerate() {
            let (text, file) = match n.kind {
                NodeKind::Nameway => (
                    self.agent_config(
                        config::namewayd(&self.topology, &self.plan, i, ids)?,
                        i,
                        pin,
                    )?,
                    n.dir.join("namewayd.toml"),
                ),
                NodeKind::Nfd => (
                    config::nfd(&self.topology, &self.plan, i),
                    n.dir.join("nfd.conf"),
                ),
                NodeKind::App => continue,
            };
            std::fs::write(&file, text).map_err(|e| LabError::io(&file, e))?;
            if check && n.kind == NodeKind::Nameway {
                let child = tokio::process::Command::new(&namewayd)
                    .arg("--check-config")
                    .arg("--config")
                    .arg(&file)
                    .stdin(std::process::Stdio::null())
                    .output();
                checks.push((n.name.clone(), child));
            }
        }
        for (name, check) in checks {
            let out = check.await.map_err(|e| LabError::io(&namewayd, e))?;
            if !out.status.success() {
                return Err(crate::error::TopologyError::invalid(
                    format!("node {name}"),
                    format!(
                        "namewayd refuses its configuration: {}",
                        net::one_line(&out.stderr)
                    ),
                )
                .into());
            }
        }
        Ok(())
    }

    /// `text` with the agent's `[controller]` block added when the lab has a controller.
    fn agent_config(&self, text: String, i: usize, pin: &str) -> Result<String, LabError> {
        let (Some(section), Some(token)) = (&self.topology.controller, self.tokens.get(&i)) else {
            return Ok(text);
        };
        let n = &self.plan.nodes[i];
        let ctx = format!("node {}", n.name);
        let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            crate::error::TopologyError::invalid(&ctx, e.message())
        })?;
        controller::add_agent_config(
            &mut table,
            &ctx,
            &controller::router_name(section, &n.name),
            token,
            pin,
            &n.dir.join("agent"),
        )?;
        Ok(table.to_string())
    }

    /// The environment of a process on node `i`.
    pub fn env(&self, i: usize) -> Vec<(String, String)> {
        let n = &self.plan.nodes[i];
        let mut path = vec![self.opts.bin_dir.display().to_string()];
        let mut env = Vec::new();
        if let Some(nfd) = &self.nfd {
            path.push(nfd.bin_dir().display().to_string());
            env.extend(nfd.client_env());
        }
        path.push(std::env::var("PATH").unwrap_or_else(|_| "/usr/sbin:/usr/bin:/sbin:/bin".into()));
        env.extend([
            ("PATH".into(), path.join(":")),
            (
                "NDN_CLIENT_TRANSPORT".into(),
                format!("unix://{}", n.socket.display()),
            ),
            ("LAB_NODE".into(), n.name.clone()),
            ("LAB_DIR".into(), self.plan.dir.display().to_string()),
        ]);
        env
    }

    async fn start_forwarder(&mut self, i: usize) -> Result<(), LabError> {
        let n = &self.plan.nodes[i];
        let (argv, mut env) = match n.kind {
            NodeKind::Nameway => (
                vec![
                    self.opts.bin_dir.join("namewayd").display().to_string(),
                    "--config".into(),
                    n.dir.join("namewayd.toml").display().to_string(),
                ],
                Vec::new(),
            ),
            _ => {
                let nfd = self
                    .nfd
                    .as_ref()
                    .ok_or_else(|| nfd_missing(&n.name, &self.opts))?;
                let env = nfd.node_env(&n.dir.join("home")).await?;
                (
                    vec![
                        nfd.bin("nfd").display().to_string(),
                        "--config".into(),
                        n.dir.join("nfd.conf").display().to_string(),
                    ],
                    env,
                )
            }
        };
        env.push(("RUST_BACKTRACE".into(), "1".into()));
        let running = process::spawn(
            &n.name,
            &Spawn {
                netns: &n.netns,
                argv,
                env,
                log: &n.log,
                cwd: Some(&n.dir),
            },
        )?;
        self.state.nodes[i].proc = Some(running.id);
        self.procs[i] = Some(running);
        Ok(())
    }

    async fn wait_forwarder(
        &mut self,
        i: usize,
        deadline: Instant,
        signals: &mut Signals,
    ) -> Result<(), LabError> {
        let socket = self.plan.nodes[i].socket.clone();
        let name = self.plan.nodes[i].name.clone();
        let mut last = String::from("no socket yet");
        loop {
            signals.check()?;
            self.check_exited(i)?;
            if socket.exists() {
                match status_general(&socket).await {
                    Ok(()) => return Ok(()),
                    Err(e) => last = e.to_string(),
                }
            }
            if Instant::now() > deadline {
                return Err(LabError::NotReady {
                    node: name,
                    seconds: READY_BASE.as_secs(),
                    detail: format!("{last}; log: {}", log_tail(&self.plan.nodes[i].log, 3)),
                });
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// An error if node `i`'s process has exited.
    fn check_exited(&mut self, i: usize) -> Result<(), LabError> {
        let Some(r) = self.procs[i].as_mut() else {
            return Ok(());
        };
        match r.child.try_wait() {
            Ok(Some(status)) => Err(LabError::Node {
                node: r.name.clone(),
                detail: format!(
                    "exited ({}); log: {}",
                    describe_status(status),
                    log_tail(&r.log, 4)
                ),
            }),
            Ok(None) => Ok(()),
            Err(e) => Err(LabError::io(&r.log, e)),
        }
    }

    async fn configure_nfd_nodes(&self) -> Result<(), LabError> {
        for i in 0..self.plan.nodes.len() {
            self.configure_nfd_node(i).await?;
        }
        Ok(())
    }

    /// An NFD node's faces and static routes, through nfdc (nothing for other kinds).
    async fn configure_nfd_node(&self, i: usize) -> Result<(), LabError> {
        let Some(nfd) = &self.nfd else { return Ok(()) };
        let n = &self.plan.nodes[i];
        if n.kind != NodeKind::Nfd {
            return Ok(());
        }
        for iface in &n.interfaces {
            let uri = iface.peer_uri();
            nfd.nfdc(
                &n.socket,
                &["face", "create", &uri, "persistency", "permanent"],
            )
            .await
            .map_err(|e| node_error(&n.name, &e))?;
        }
        for r in self.plan.routes.iter().filter(|r| r.node == i) {
            let Some(iface) = self.plan.interface(i, r.link) else {
                continue;
            };
            let (uri, cost) = (iface.peer_uri(), r.cost.to_string());
            nfd.nfdc(&n.socket, &["route", "add", &r.prefix, &uri, "cost", &cost])
                .await
                .map_err(|e| node_error(&n.name, &e))?;
        }
        Ok(())
    }

    async fn start_app(&mut self, i: usize, signals: &mut Signals) -> Result<(), LabError> {
        let node = &self.topology.nodes[i];
        let command = self
            .plan
            .expand(node.command.as_deref().unwrap_or_default());
        let ready = node.ready.clone();
        let n = &self.plan.nodes[i];
        let running = process::spawn(
            &n.name,
            &Spawn {
                netns: &n.netns,
                argv: vec!["sh".into(), "-c".into(), command],
                env: self.env(i),
                log: &n.log,
                cwd: Some(&self.plan.nodes[n.host].dir),
            },
        )?;
        self.state.nodes[i].proc = Some(running.id);
        self.procs[i] = Some(running);
        self.state.save()?;
        let Some(text) = ready else { return Ok(()) };
        let deadline = Instant::now() + READY_BASE;
        let log = self.plan.nodes[i].log.clone();
        loop {
            signals.check()?;
            if std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains(&text)
            {
                return Ok(());
            }
            self.check_exited(i)?;
            if Instant::now() > deadline {
                return Err(LabError::NotReady {
                    node: self.plan.nodes[i].name.clone(),
                    seconds: READY_BASE.as_secs(),
                    detail: format!("its output never said {text:?}; log: {}", log_tail(&log, 3)),
                });
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The node called `name`'s forwarder socket.
    pub fn socket(&self, name: &str) -> Option<&Path> {
        self.plan.node(name).map(|n| n.socket.as_path())
    }

    /// The pid of node `name`'s process.
    pub fn pid(&self, name: &str) -> Option<u32> {
        let i = self.plan.index(name)?;
        self.procs.get(i)?.as_ref().map(|r| r.id.pid)
    }

    /// The lab's state as written to its state file.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The logs folder.
    pub fn logs(&self) -> PathBuf {
        self.plan.dir.join("logs")
    }

    /// Starts `command` (`sh -c`, `{addr:NODE}` expanded) on node `on` with the node's
    /// environment plus `env`, its output in `logs/<name>.log`. The process is recorded in
    /// the state file and stopped at teardown.
    ///
    /// # Errors
    /// Unknown node, or the process cannot be started.
    pub fn spawn(
        &mut self,
        name: &str,
        on: &str,
        command: &str,
        env: &[(&str, &str)],
    ) -> Result<usize, LabError> {
        let i = self.plan.index(on).ok_or_else(|| LabError::Node {
            node: on.into(),
            detail: "no such node".into(),
        })?;
        let mut all = self.env(i);
        all.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let log = self.logs().join(format!("{name}.log"));
        let n = &self.plan.nodes[i];
        let running = process::spawn(
            name,
            &Spawn {
                netns: &n.netns,
                argv: vec!["sh".into(), "-c".into(), self.plan.expand(command)],
                env: all,
                log: &log,
                cwd: Some(&self.plan.nodes[n.host].dir),
            },
        )?;
        self.state.extra.push(running.id);
        self.extra.push(running);
        self.state.save()?;
        Ok(self.extra.len() - 1)
    }

    /// Waits for a process from [`Lab::spawn`] to end, at most `timeout` (then it is stopped
    /// and `None` returned).
    ///
    /// # Errors
    /// Waiting failed.
    pub async fn wait(
        &mut self,
        handle: usize,
        timeout: Duration,
    ) -> Result<Option<ExitStatus>, LabError> {
        let Some(r) = self.extra.get_mut(handle) else {
            return Ok(None);
        };
        match tokio::time::timeout(timeout, r.child.wait()).await {
            Ok(status) => status.map(Some).map_err(|e| LabError::io(&r.log, e)),
            Err(_) => {
                r.id.stop(Duration::from_secs(2)).await;
                // Reap it.
                let _ = r.child.wait().await;
                Ok(None)
            }
        }
    }

    /// The exit status of a process from [`Lab::spawn`] if it has ended (it is left running
    /// otherwise).
    pub fn try_status(&mut self, handle: usize) -> Option<ExitStatus> {
        self.extra.get_mut(handle)?.child.try_wait().ok().flatten()
    }

    /// Stops a process from [`Lab::spawn`] (SIGTERM, then SIGKILL after 3 s).
    pub async fn stop(&mut self, handle: usize) {
        if let Some(r) = self.extra.get_mut(handle) {
            r.id.stop(Duration::from_secs(3)).await;
            let _ = r.child.wait().await;
        }
    }

    /// The log file of a process from [`Lab::spawn`].
    pub fn log_of(&self, handle: usize) -> Option<&Path> {
        self.extra.get(handle).map(|r| r.log.as_path())
    }

    /// Waits until a signal arrives, or a part of the lab fails: a forwarder that exits, or
    /// an app that exits with a failure (an app that ends with status 0 is done, not failed).
    ///
    /// # Errors
    /// [`LabError::Node`] naming what exited, with the end of its log.
    pub async fn supervise(&mut self, signals: &mut Signals) -> Result<Stopped, LabError> {
        loop {
            tokio::select! {
                name = signals.recv() => return Ok(Stopped::Signal(name)),
                () = tokio::time::sleep(request::POLL) => {}
            }
            self.serve_requests(signals).await?;
            self.check_all()?;
        }
    }

    /// Acts on the operators' requests waiting ([`request`]): kills and restarts of
    /// forwarders. A signal during a restart stops the lab as during bring-up.
    async fn serve_requests(&mut self, signals: &mut Signals) -> Result<(), LabError> {
        for (node, action) in request::take(&self.plan.dir) {
            let result = match action {
                request::Action::Kill => self.kill_node(&node).await,
                request::Action::Restart => self.restart_node(&node, signals).await,
            };
            if let Err(LabError::Interrupted(name)) = result {
                let why = format!("the lab is stopping ({name})");
                request::answer(&self.plan.dir, &node, action, &Err(why));
                return Err(LabError::Interrupted(name));
            }
            let result = result.map_err(|e| e.to_string());
            if self.opts.verbose {
                match &result {
                    Ok(s) => println!("lab {}: {s}", self.plan.lab),
                    Err(e) => println!(
                        "lab {}: {} {node} refused: {e}",
                        self.plan.lab,
                        action.suffix()
                    ),
                }
            }
            request::answer(&self.plan.dir, &node, action, &result);
        }
        Ok(())
    }

    /// The index of forwarder `name`.
    fn forwarder_index(&self, name: &str) -> Result<usize, LabError> {
        let i = self.plan.index(name).ok_or_else(|| LabError::Node {
            node: name.into(),
            detail: "no such node".into(),
        })?;
        if !self.plan.nodes[i].kind.is_forwarder() {
            return Err(LabError::Node {
                node: name.into(),
                detail: "is an app, not a forwarder".into(),
            });
        }
        Ok(i)
    }

    /// SIGKILL to forwarder `name` (a crash: it cleans nothing up); the lab stays up.
    ///
    /// # Errors
    /// Not a forwarder, or not running.
    pub async fn kill_node(&mut self, name: &str) -> Result<String, LabError> {
        let i = self.forwarder_index(name)?;
        let Some(mut r) = self.procs[i].take() else {
            return Err(LabError::Node {
                node: name.into(),
                detail: "is not running".into(),
            });
        };
        let pid = r.id.pid;
        let _ = r.child.start_kill();
        let _ = r.child.wait().await;
        self.state.nodes[i].proc = None;
        self.state.save()?;
        Ok(format!("{name} killed (pid {pid})"))
    }

    /// Starts forwarder `name` again after [`Lab::kill_node`], with its configuration,
    /// identity and state folder, and waits until it answers.
    ///
    /// # Errors
    /// Not a forwarder, still running, or it did not start (the lab stays up without it).
    pub async fn restart_node(
        &mut self,
        name: &str,
        signals: &mut Signals,
    ) -> Result<String, LabError> {
        let i = self.forwarder_index(name)?;
        if self.procs[i].is_some() {
            return Err(LabError::Node {
                node: name.into(),
                detail: "is running (kill it first)".into(),
            });
        }
        let started = Instant::now();
        // The killed process left its socket file: wait for the new one.
        let _ = std::fs::remove_file(&self.plan.nodes[i].socket);
        self.start_forwarder(i).await?;
        self.state.save()?;
        let ready = match self
            .wait_forwarder(i, Instant::now() + READY_BASE, signals)
            .await
        {
            Ok(()) => self.configure_nfd_node(i).await,
            Err(e) => Err(e),
        };
        if let Err(e) = ready {
            if let Some(mut r) = self.procs[i].take() {
                let _ = r.child.start_kill();
                let _ = r.child.wait().await;
            }
            self.state.nodes[i].proc = None;
            self.state.save()?;
            return Err(e);
        }
        let pid = self.procs[i].as_ref().map_or(0, |r| r.id.pid);
        Ok(format!(
            "{name} running again (pid {pid}) after {:.2} s",
            started.elapsed().as_secs_f64()
        ))
    }

    /// An error if a forwarder has exited or an app has failed; apps that ended well are
    /// forgotten.
    ///
    /// # Errors
    /// As [`Lab::supervise`].
    pub fn check_all(&mut self) -> Result<(), LabError> {
        self.check_controller()?;
        for i in 0..self.procs.len() {
            let is_app = self.plan.nodes[i].kind == NodeKind::App;
            let Some(r) = self.procs[i].as_mut() else {
                continue;
            };
            let Ok(Some(status)) = r.child.try_wait() else {
                continue;
            };
            if is_app && status.success() {
                self.procs[i] = None;
                continue;
            }
            let what = if is_app { "app" } else { "forwarder" };
            return Err(LabError::Node {
                node: r.name.clone(),
                detail: format!(
                    "{what} exited ({}); log: {}",
                    describe_status(status),
                    log_tail(&r.log, 4)
                ),
            });
        }
        Ok(())
    }

    /// Tears the lab down gracefully (module documentation).
    ///
    /// # Errors
    /// A namespace or directory could not be removed.
    pub async fn down(mut self) -> Result<Cleanup, LabError> {
        // Applications first, so they end while their forwarders still answer; then the
        // forwarders.
        let apps: Vec<ProcId> = self
            .extra
            .iter()
            .map(|r| r.id)
            .chain(self.app_procs().map(|r| r.id))
            .collect();
        let mut stopped = stop_all(&apps).await;
        let forwarders: Vec<ProcId> = self
            .procs
            .iter()
            .enumerate()
            .filter(|(i, _)| self.plan.nodes[*i].kind.is_forwarder())
            .filter_map(|(_, r)| r.as_ref().map(|r| r.id))
            .collect();
        stopped += stop_all(&forwarders).await;
        // The controller last: the agents do not see it go.
        stopped += stop_all(&self.ctl.iter().map(|r| r.id).collect::<Vec<_>>()).await;
        for r in self
            .extra
            .iter_mut()
            .chain(self.procs.iter_mut().flatten())
            .chain(self.ctl.iter_mut())
        {
            let _ = r.child.start_kill();
            let _ = r.child.wait().await;
        }
        self.extra.clear();
        self.procs.clear();
        self.ctl = None;
        self.torn_down = true;
        let mut out = state::cleanup(&self.opts.root, &self.plan.lab).await?;
        out.processes += stopped;
        Ok(out)
    }

    fn app_procs(&self) -> impl Iterator<Item = &Running> {
        self.procs
            .iter()
            .enumerate()
            .filter(|(i, _)| self.plan.nodes[*i].kind == NodeKind::App)
            .filter_map(|(_, r)| r.as_ref())
    }

    /// Kills everything at once and removes namespaces, directories and the state file
    /// (best effort: used on errors and when a lab is dropped).
    fn teardown_now(&mut self) {
        if self.torn_down {
            return;
        }
        self.torn_down = true;
        for r in self
            .extra
            .iter_mut()
            .chain(self.procs.iter_mut().flatten())
            .chain(self.ctl.iter_mut())
        {
            let _ = r.child.start_kill();
        }
        self.extra.clear();
        self.procs.clear();
        self.ctl = None;
        let _ = net::delete_namespaces(&self.plan.namespaces());
        let _ = std::fs::remove_dir_all(self.plan.dir.join("nodes"));
        let _ = std::fs::remove_file(self.plan.state_file());
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.teardown_now();
    }
}

/// SIGTERM to every process of `procs` that runs, then up to 3 s for them to end, then
/// SIGKILL to the rest. Returns how many were running.
async fn stop_all(procs: &[ProcId]) -> usize {
    let running: Vec<&ProcId> = procs
        .iter()
        .filter(|p| p.signal(rustix::process::Signal::TERM))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(3);
    while running.iter().any(|p| p.alive()) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for p in &running {
        p.signal(rustix::process::Signal::KILL);
    }
    running.len()
}

/// Asks node `socket`'s forwarder for `status/general`.
async fn status_general(socket: &Path) -> Result<(), LabError> {
    let node = socket.display().to_string();
    let fail = |source| LabError::client(node.clone(), source);
    let mut c = Client::connect(Transport::Unix(socket.to_path_buf()))
        .await
        .map_err(fail)?;
    tokio::time::timeout(Duration::from_secs(2), c.dataset("status", "general"))
        .await
        .map_err(|_| LabError::NotReady {
            node: node.clone(),
            seconds: 2,
            detail: "status/general unanswered".into(),
        })?
        .map_err(fail)?;
    Ok(())
}

fn check_programs(t: &Topology, opts: &Options, nfd: Option<&NfdBuild>) -> Result<(), LabError> {
    let needs = |k: NodeKind| t.nodes.iter().any(|n| n.kind == k);
    if needs(NodeKind::Nameway) {
        let d = opts.bin_dir.join("namewayd");
        if !d.is_file() {
            return Err(LabError::Missing {
                program: d.display().to_string(),
                hint: "build it (cargo build --release -p namewayd) or give --bin-dir".into(),
            });
        }
    }
    if t.controller.is_some() {
        let c = opts.bin_dir.join("namewayctl");
        if !c.is_file() {
            return Err(LabError::Missing {
                program: c.display().to_string(),
                hint: "build it (cargo build --release -p nameway-ctl) or give --bin-dir".into(),
            });
        }
    }
    if needs(NodeKind::Nfd) && nfd.is_none() {
        let first = t
            .nodes
            .iter()
            .find(|n| n.kind == NodeKind::Nfd)
            .map_or("", |n| n.name.as_str());
        return Err(nfd_missing(first, opts));
    }
    Ok(())
}

fn nfd_missing(node: &str, opts: &Options) -> LabError {
    LabError::Node {
        node: node.into(),
        detail: format!(
            "NFD is not built (looked in {}): run scripts/build-nfd.sh",
            NfdBuild::searched(opts.nfd_dir.as_deref())
        ),
    }
}

fn node_error(node: &str, e: &LabError) -> LabError {
    LabError::Node {
        node: node.into(),
        detail: e.to_string(),
    }
}

/// `exit status 1`, `killed by signal 9`.
pub fn describe_status(s: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "unknown status".into(),
    }
}

/// What a cleanup removed, in a few words.
pub fn describe(c: &Cleanup) -> String {
    let mut parts = Vec::new();
    if c.runner_stopped {
        parts.push("stopped the runner".to_owned());
    }
    parts.push(format!("{} processes stopped", c.processes));
    parts.push(format!("{} namespaces deleted", c.namespaces.len()));
    if c.dirs_removed {
        parts.push("sockets and keys removed".into());
    }
    parts.join(", ")
}
