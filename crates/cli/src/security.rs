//! `nameway security`, `nameway neighbour` and `nameway identity`: hop-by-hop encryption
//! between forwarders (namewayd's `security/*` and `neighbours/*` management, JSON datasets).

use anyhow::{bail, Context};
use nameway_face::secure::{Identity, PublicKey};
use nameway_wire::lp::SecurityLevel;
use nameway_wire::mgmt::ControlParameters;
use serde_json::Value;

use crate::client::{self, parse_name, Client};
use crate::output::{outln, print_json, JsonFlag, Table};

const LEVELS_HELP: &str = "none, cpa, chacha20, forro14, chacha20-poly1305, xforro14-poly1305 or \
aes-256-gcm. cpa, chacha20 and forro14 give NO integrity (tampered packets are delivered), and \
cpa only permutes bytes: it is weak; they exist to compare with published schemes";

/// `nameway security ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum SecurityCommand {
    /// This forwarder's identity, trusted peers and the prefix → level policy.
    List(JsonFlag),
    /// Protect Data under PREFIX with LEVEL between secure neighbours.
    #[command(after_help = LEVELS_HELP)]
    Set {
        /// Name prefix.
        prefix: String,
        /// none, cpa, chacha20, forro14, chacha20-poly1305, xforro14-poly1305, aes-256-gcm.
        level: String,
    },
    /// Remove PREFIX's level (names under it fall back to a shorter prefix's).
    Unset {
        /// Name prefix.
        prefix: String,
    },
}

/// `nameway neighbour ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum NeighbourCommand {
    /// Secure links: peer identity, handshake state, key ids, packets encrypted, decrypted
    /// and dropped by reason.
    List(JsonFlag),
    /// Accept handshakes from the forwarder with this public key (`nameway identity show`
    /// on it).
    Trust {
        /// 64 hexadecimal digits.
        key: String,
    },
    /// Stop trusting a key; the sessions established with it end.
    Untrust {
        /// 64 hexadecimal digits.
        key: String,
    },
}

/// `nameway identity ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum IdentityCommand {
    /// Print this forwarder's public key on one line, to give to its peers.
    Show {
        /// Read the key file instead of asking the running forwarder.
        #[arg(long, value_name = "PATH")]
        file: Option<std::path::PathBuf>,
    },
}

/// # Errors
/// The forwarder cannot be reached, is not namewayd, or refuses the command.
pub(crate) async fn security(transport: Option<&str>, cmd: &SecurityCommand) -> anyhow::Result<()> {
    let mut c = nameway(transport).await?;
    match cmd {
        SecurityCommand::List(out) => {
            let view = dataset(&mut c, "security", "list").await?;
            if out.json {
                return print_json(&view);
            }
            if view["enabled"] != true {
                outln!("security: off (no [security] identity in the forwarder's configuration)")?;
                return Ok(());
            }
            outln!("identity: {}", view["identity"].as_str().unwrap_or("?"))?;
            outln!(
                "link-wide level: {}; rekey after {} packets or {} s",
                view["link_level"].as_str().unwrap_or("?"),
                view["rekey_packets"],
                view["rekey_seconds"]
            )?;
            let trusted = view["trusted_peers"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            outln!("trusted peers: {}", trusted.len())?;
            for k in trusted {
                outln!("  {}", k.as_str().unwrap_or("?"))?;
            }
            let mut t = Table::new(&["PREFIX", "LEVEL", "NOTE"]);
            for p in view["policy"].as_array().cloned().unwrap_or_default() {
                t.row(vec![
                    text(&p["prefix"]),
                    text(&p["level"]),
                    p["warning"].as_str().unwrap_or("").to_owned(),
                ]);
            }
            outln!("{}", t.render())?;
            Ok(())
        }
        SecurityCommand::Set { prefix, level } => {
            let name = parse_name(prefix)?;
            let parsed: SecurityLevel = level.parse()?;
            if let Some(w) = parsed.warning() {
                eprintln!("warning: {w}");
            }
            let params = ControlParameters {
                name: Some(name.clone()),
                security_level: Some(parsed.name().to_owned()),
                ..ControlParameters::default()
            };
            c.command_ok("security", "set", &params).await?;
            outln!("security policy set: {name} {parsed}")?;
            Ok(())
        }
        SecurityCommand::Unset { prefix } => {
            let name = parse_name(prefix)?;
            c.command_ok(
                "security",
                "unset",
                &ControlParameters::with_name(name.clone()),
            )
            .await?;
            outln!("security policy unset: {name}")?;
            Ok(())
        }
    }
}

/// # Errors
/// The forwarder cannot be reached, is not namewayd, or refuses the command.
pub(crate) async fn neighbour(
    transport: Option<&str>,
    cmd: &NeighbourCommand,
) -> anyhow::Result<()> {
    let mut c = nameway(transport).await?;
    match cmd {
        NeighbourCommand::List(out) => {
            let list = dataset(&mut c, "neighbours", "list").await?;
            if out.json {
                return print_json(&list);
            }
            let mut t = Table::new(&[
                "FACE", "REMOTE", "PEER", "STATE", "MODE", "TX KEY", "ENC", "DEC", "DROPS",
            ]);
            for n in list.as_array().cloned().unwrap_or_default() {
                let drops: Vec<String> = n["drops"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .filter(|(_, v)| v.as_u64().unwrap_or(0) > 0)
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect()
                    })
                    .unwrap_or_default();
                let peer = n["peer"].as_str().map_or_else(
                    || "-".to_owned(),
                    |p| {
                        let short = p.get(..16).unwrap_or(p);
                        if n["trusted"] == true {
                            format!("{short}…")
                        } else {
                            format!("{short}… (untrusted)")
                        }
                    },
                );
                t.row(vec![
                    text(&n["face_id"]),
                    text(&n["remote"]),
                    peer,
                    text(&n["state"]),
                    n["mode"].as_str().unwrap_or("-").to_owned(),
                    n["tx_key_id"]
                        .as_u64()
                        .map_or_else(|| "-".to_owned(), |k| format!("{k:#010x}")),
                    text(&n["encrypted"]),
                    text(&n["decrypted"]),
                    if drops.is_empty() {
                        "-".to_owned()
                    } else {
                        drops.join(" ")
                    },
                ]);
            }
            outln!("{}", t.render())?;
            Ok(())
        }
        NeighbourCommand::Trust { key } | NeighbourCommand::Untrust { key } => {
            let trust = matches!(cmd, NeighbourCommand::Trust { .. });
            let key: PublicKey = key.parse()?;
            let params = ControlParameters {
                peer_key: Some(key.to_string()),
                ..ControlParameters::default()
            };
            let verb = if trust { "trust" } else { "untrust" };
            c.command_ok("neighbours", verb, &params).await?;
            outln!(
                "{}: {key}",
                if trust {
                    "trusted"
                } else {
                    "no longer trusted"
                }
            )?;
            Ok(())
        }
    }
}

/// # Errors
/// The file cannot be read, or the forwarder cannot be reached or has no identity.
pub(crate) async fn identity(transport: Option<&str>, cmd: &IdentityCommand) -> anyhow::Result<()> {
    let IdentityCommand::Show { file } = cmd;
    if let Some(path) = file {
        if !path.exists() {
            bail!(
                "{} does not exist (namewayd creates it on first start)",
                path.display()
            );
        }
        let (id, _) = Identity::load_or_create(path)?;
        outln!("{}", id.public_key())?;
        return Ok(());
    }
    let mut c = nameway(transport).await?;
    let view = dataset(&mut c, "security", "list").await?;
    match view["identity"].as_str() {
        Some(key) => {
            outln!("{key}")?;
            Ok(())
        }
        None => {
            bail!("the forwarder has no identity: set [security] identity in its configuration")
        }
    }
}

async fn nameway(transport: Option<&str>) -> anyhow::Result<Client> {
    let mut c = client::connect(transport).await?;
    if !c.is_nameway().await? {
        bail!("the forwarder is not namewayd: hop-by-hop security is namewayd's");
    }
    Ok(c)
}

async fn dataset(c: &mut Client, module: &str, verb: &str) -> anyhow::Result<Value> {
    let raw = c.dataset(module, verb).await?;
    serde_json::from_slice(&raw).with_context(|| format!("bad {module}/{verb} dataset"))
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".to_owned(),
        other => other.to_string(),
    }
}
