//! [`Stored`]: which registrations this controller wrote for each of its routers, so that a
//! name a router stops reporting (the producer left) is deleted from the registry at once
//! rather than when its soft state expires: other controllers on a shared database see the
//! deletion through the change feed (`serve/feed.rs`) and withdraw their routes.
//!
//! Only routers that reported are compared: a router that disconnected keeps its rows until
//! they expire (a controller started on the database, or taking the router over, serves
//! them meanwhile).

use std::collections::{HashMap, HashSet};

use nameway_wire::Name;

use crate::store::{Registration, RegistrationKey};

/// See the module documentation.
#[derive(Debug, Default)]
pub(super) struct Stored {
    by_router: HashMap<String, HashSet<RegistrationKey>>,
}

impl Stored {
    /// `regs` are now stored for the routers `reported`: the keys of theirs that were
    /// stored before and are no longer reported.
    pub(super) fn withdrawn(
        &mut self,
        reported: &[Name],
        regs: &[Registration],
    ) -> Vec<RegistrationKey> {
        let mut now: HashMap<String, HashSet<RegistrationKey>> = reported
            .iter()
            .map(|r| (r.to_string(), HashSet::new()))
            .collect();
        for r in regs {
            if let Some(set) = now.get_mut(&r.node) {
                set.insert(r.key());
            }
        }
        let mut gone = Vec::new();
        for (router, keys) in now {
            if let Some(before) = self.by_router.get(&router) {
                gone.extend(before.difference(&keys).cloned());
            }
            self.by_router.insert(router, keys);
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(prefix: &str, node: &str) -> Registration {
        Registration {
            prefix: prefix.parse().unwrap(),
            node: node.into(),
            face: 1,
            origin: 0,
            cost: 0,
            flags: 1,
            expires_ms: 9,
            owner_key: None,
            announcement: None,
        }
    }

    #[test]
    fn a_name_no_longer_reported_is_withdrawn_and_a_silent_router_keeps_its_names() {
        let mut s = Stored::default();
        let r1: Name = "/ex/r1".parse().unwrap();
        let r2: Name = "/ex/r2".parse().unwrap();
        let both = [
            reg("/a", "/ex/r1"),
            reg("/b", "/ex/r1"),
            reg("/c", "/ex/r2"),
        ];
        assert!(s.withdrawn(&[r1.clone(), r2.clone()], &both).is_empty());
        // r1 no longer reports /b; r2 did not report (disconnected): /c stays.
        let gone = s.withdrawn(std::slice::from_ref(&r1), &[reg("/a", "/ex/r1")]);
        assert_eq!(gone, vec![reg("/b", "/ex/r1").key()]);
        // r1 reports nothing at all: /a goes too.
        assert_eq!(s.withdrawn(&[r1], &[]), vec![reg("/a", "/ex/r1").key()]);
    }
}
