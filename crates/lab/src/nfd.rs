//! NFD nodes, with NFD, nfdc and ndnsec as `scripts/build-nfd.sh` installs them
//! (`$NAMEWAY_NFD`, default `~/nameway-nfd`).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::Command;

use crate::error::LabError;
use crate::net::one_line;

/// An NFD build.
#[derive(Clone, Debug)]
pub struct NfdBuild {
    /// The install folder (`prefix/bin/nfd` inside).
    pub dir: PathBuf,
}

impl NfdBuild {
    /// The build in `dir`, or in `$NAMEWAY_NFD`, or in `~/nameway-nfd`, if `nfd` is there.
    pub fn find(dir: Option<&Path>) -> Option<Self> {
        let dir = dir.map(Path::to_path_buf).or_else(|| {
            std::env::var_os("NAMEWAY_NFD")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join("nameway-nfd")))
        })?;
        dir.join("prefix/bin/nfd").is_file().then_some(Self { dir })
    }

    /// Where the lab looks, for messages.
    pub fn searched(dir: Option<&Path>) -> String {
        match dir {
            Some(d) => d.display().to_string(),
            None => std::env::var("NAMEWAY_NFD").unwrap_or_else(|_| "~/nameway-nfd".into()),
        }
    }

    /// A program of the build.
    pub fn bin(&self, name: &str) -> PathBuf {
        self.dir.join("prefix/bin").join(name)
    }

    /// `prefix/bin`, for PATH.
    pub fn bin_dir(&self) -> PathBuf {
        self.dir.join("prefix/bin")
    }

    /// The environment of the build's clients: libraries and the client keychain that
    /// build-nfd.sh made (nfdc signs its commands with it).
    pub fn client_env(&self) -> Vec<(String, String)> {
        let keychain = self.dir.join("keychain");
        vec![
            (
                "LD_LIBRARY_PATH".into(),
                self.dir.join("prefix/lib").display().to_string(),
            ),
            (
                "NDN_CLIENT_PIB".into(),
                format!("pib-sqlite3:{}", keychain.display()),
            ),
            (
                "NDN_CLIENT_TPM".into(),
                format!("tpm-file:{}", keychain.join("tpm").display()),
            ),
        ]
    }

    /// The environment NFD itself runs with: a keychain of its own under `home` (it signs its
    /// management responses), made on first use.
    ///
    /// # Errors
    /// ndnsec fails.
    pub async fn node_env(&self, home: &Path) -> Result<Vec<(String, String)>, LabError> {
        let ndn = home.join(".ndn");
        std::fs::create_dir_all(&ndn).map_err(|e| LabError::io(&ndn, e))?;
        let env = vec![
            ("HOME".into(), home.display().to_string()),
            (
                "LD_LIBRARY_PATH".into(),
                self.dir.join("prefix/lib").display().to_string(),
            ),
            (
                "NDN_CLIENT_PIB".into(),
                format!("pib-sqlite3:{}", ndn.display()),
            ),
            (
                "NDN_CLIENT_TPM".into(),
                format!("tpm-file:{}", ndn.join("tpm").display()),
            ),
        ];
        let ndnsec = self.bin("ndnsec");
        let script = format!(
            "{0} get-default >/dev/null 2>&1 || {0} key-gen /localhost/lab-nfd | {0} cert-install - >/dev/null",
            ndnsec.display()
        );
        let out = Command::new("sh")
            .args(["-c", &script])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .output()
            .await
            .map_err(|e| LabError::io(&ndnsec, e))?;
        if !out.status.success() {
            return Err(LabError::Command {
                command: format!("{} key-gen", ndnsec.display()),
                detail: one_line(&out.stderr),
            });
        }
        Ok(env)
    }

    /// Runs `nfdc ARGS` against the NFD on `socket`.
    ///
    /// # Errors
    /// nfdc fails, with its message.
    pub async fn nfdc(&self, socket: &Path, args: &[&str]) -> Result<String, LabError> {
        let nfdc = self.bin("nfdc");
        let out = Command::new(&nfdc)
            .args(args)
            .envs(self.client_env())
            .env(
                "NDN_CLIENT_TRANSPORT",
                format!("unix://{}", socket.display()),
            )
            .stdin(Stdio::null())
            .output()
            .await
            .map_err(|e| LabError::io(&nfdc, e))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(LabError::Command {
                command: format!("nfdc {}", args.join(" ")),
                detail: one_line(if out.stderr.is_empty() {
                    &out.stdout
                } else {
                    &out.stderr
                }),
            })
        }
    }
}
