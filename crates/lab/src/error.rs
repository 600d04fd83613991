//! The lab's errors: a topology that cannot be run (one line naming the node or link), and
//! what can go wrong while a lab is brought up, run or torn down.

use std::path::PathBuf;

/// A topology file that cannot be run. Its `Display` is one line that names the node, link,
/// route or step at fault and the problem; nothing has been started when it is returned.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TopologyError {
    /// The file is not TOML of the expected shape (a syntax error, an unknown key, a value of
    /// the wrong type).
    #[error("{0}")]
    Syntax(String),
    /// The file names no node.
    #[error("the topology has no [[node]]")]
    Empty,
    /// A lab, node or app name that cannot be used.
    #[error("{what} {name:?}: {rule}")]
    BadName {
        /// `lab`, `node`.
        what: &'static str,
        /// The name as written.
        name: String,
        /// What a name may be.
        rule: &'static str,
    },
    /// Two nodes share a name.
    #[error("node {0:?}: the name is used twice")]
    DuplicateNode(String),
    /// A link, route, app or step names a node that does not exist.
    #[error("{context}: unknown node {name:?}")]
    UnknownNode {
        /// The link, route, app or step, as `link a-b`.
        context: String,
        /// The unknown name.
        name: String,
    },
    /// A link from a node to itself.
    #[error("link {0}-{0}: a link from a node to itself")]
    SelfLink(String),
    /// A second link between the same two nodes.
    #[error("link {0}-{1}: a second link between the same nodes")]
    DuplicateLink(String, String),
    /// A setting of a node, link, route or step that is out of range or inconsistent.
    #[error("{context}: {problem}")]
    Invalid {
        /// The node, link, route or step, as `link a-b` or `node r1`.
        context: String,
        /// What is wrong.
        problem: String,
    },
}

impl TopologyError {
    /// An [`TopologyError::Invalid`] for `context`.
    pub(crate) fn invalid(context: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Invalid {
            context: context.into(),
            problem: problem.into(),
        }
    }
}

/// What can go wrong once a valid topology is being brought up, run or torn down.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabError {
    /// The topology cannot be run.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The lab needs root (network namespaces, veth pairs, qdiscs).
    #[error("the lab needs root to create network namespaces (run it as root)")]
    NotRoot,
    /// A program the lab runs is missing.
    #[error("{program} not found: {hint}")]
    Missing {
        /// The program.
        program: String,
        /// Where to get it.
        hint: String,
    },
    /// A command that sets up or tears down the network failed.
    #[error("{command} failed: {detail}")]
    Command {
        /// The command line, shortened.
        command: String,
        /// Its error output, one line.
        detail: String,
    },
    /// A process of the lab exited or could not be started.
    #[error("node {node}: {detail}")]
    Node {
        /// The node (or app) name.
        node: String,
        /// What happened, with the tail of its log when there is one.
        detail: String,
    },
    /// A node did not become ready in time.
    #[error("node {node}: not ready after {seconds} s ({detail})")]
    NotReady {
        /// The node (or app) name.
        node: String,
        /// How long the lab waited.
        seconds: u64,
        /// What was missing.
        detail: String,
    },
    /// A lab of this name is already up.
    #[error("lab {name} is up (runner pid {pid}); run `nameway lab down {name}` first")]
    AlreadyUp {
        /// The lab's name.
        name: String,
        /// Its runner.
        pid: u32,
    },
    /// No lab of this name is known.
    #[error("no lab named {0} is up")]
    NotUp(String),
    /// A file of the lab could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The state file of a lab does not parse.
    #[error("{path}: not a lab state file ({detail})")]
    BadState {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// A management request to a node failed.
    #[error("node {node}: {source}")]
    Client {
        /// The node.
        node: String,
        /// The client's error.
        #[source]
        source: Box<nameway_transport::client::ClientError>,
    },
    /// A scenario step failed.
    #[error("step {index} on {node} ({command}): {detail}")]
    Step {
        /// Its position in the file, from 1.
        index: usize,
        /// Where it ran.
        node: String,
        /// Its command.
        command: String,
        /// Exit status or timeout.
        detail: String,
    },
    /// A reproduction could not measure what it set out to.
    #[error("reproduction {name}: {detail}")]
    Reproduction {
        /// Its name.
        name: String,
        /// What failed.
        detail: String,
    },
    /// The lab was stopped by a signal while it was being brought up or run.
    #[error("stopped by {0}")]
    Interrupted(&'static str),
}

impl LabError {
    /// An [`LabError::Io`] for `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    /// A [`LabError::Client`] for `node`.
    pub(crate) fn client(
        node: impl Into<String>,
        source: nameway_transport::client::ClientError,
    ) -> Self {
        Self::Client {
            node: node.into(),
            source: Box::new(source),
        }
    }

    /// A [`LabError::Reproduction`].
    pub(crate) fn repro(name: &str, detail: impl Into<String>) -> Self {
        Self::Reproduction {
            name: name.to_owned(),
            detail: detail.into(),
        }
    }
}
