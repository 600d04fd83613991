//! Strategy choice: which strategy instance handles which name prefix (longest-prefix match).
//! The root prefix always has one; by default best-route.

use nameway_wire::{Name, NameHasher, PrefixHashes};

use super::name_table::NameTable;
use crate::strategy::{Strategy, StrategyError};

/// Strategy instances by prefix.
pub(crate) struct StrategyChoice {
    /// Prefix → instance slot.
    table: NameTable<u32>,
    instances: Vec<Option<Box<dyn Strategy>>>,
    free: Vec<u32>,
}

impl core::fmt::Debug for StrategyChoice {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl StrategyChoice {
    /// A table with `root` for the root prefix.
    pub(crate) fn new(hasher: &NameHasher, root: Box<dyn Strategy>) -> Self {
        let mut sc = Self {
            table: NameTable::new(),
            instances: vec![Some(root)],
            free: Vec::new(),
        };
        let r = Name::root();
        if let Some(slot) = sc.table.get_or_insert_with(&r, hasher.hash_name(&r), || 0) {
            *slot = 0;
        }
        sc
    }

    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// Sets the strategy of `prefix`.
    pub(crate) fn set(
        &mut self,
        hasher: &NameHasher,
        prefix: &Name,
        strategy: Box<dyn Strategy>,
    ) -> Result<(), StrategyError> {
        let hash = hasher.hash_name(prefix);
        if let Some(&slot) = self.table.get(prefix, hash) {
            if let Some(s) = self.instances.get_mut(slot as usize) {
                *s = Some(strategy);
            }
            return Ok(());
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                if let Some(s) = self.instances.get_mut(slot as usize) {
                    *s = Some(strategy);
                }
                slot
            }
            None => {
                self.instances.push(Some(strategy));
                (self.instances.len() - 1) as u32
            }
        };
        match self.table.get_or_insert_with(prefix, hash, || slot) {
            Some(_) => Ok(()),
            None => {
                if let Some(s) = self.instances.get_mut(slot as usize) {
                    *s = None;
                }
                self.free.push(slot);
                Err(StrategyError::PrefixTooLong)
            }
        }
    }

    /// Removes the choice for `prefix`; false when there was none.
    pub(crate) fn unset(
        &mut self,
        hasher: &NameHasher,
        prefix: &Name,
    ) -> Result<bool, StrategyError> {
        if prefix.is_empty() {
            return Err(StrategyError::CannotUnsetRoot);
        }
        let Some(slot) = self.table.remove(prefix, hasher.hash_name(prefix)) else {
            return Ok(false);
        };
        if let Some(s) = self.instances.get_mut(slot as usize) {
            *s = None;
        }
        self.free.push(slot);
        Ok(true)
    }

    /// The slot of the instance that handles `name`.
    #[inline]
    pub(crate) fn effective(&self, name: &Name, hashes: &PrefixHashes) -> u32 {
        if self.table.len() == 1 {
            // Only the root, whose instance is always in slot 0.
            return 0;
        }
        self.table
            .longest_prefix_match(name, hashes)
            .map_or(0, |e| e.value)
    }

    /// The instance in `slot`.
    /// Measurements entries kept by every instance.
    pub(crate) fn measurements_len(&self) -> usize {
        self.instances
            .iter()
            .flatten()
            .map(|s| s.measurements_len())
            .sum()
    }

    pub(crate) fn instance_mut(&mut self, slot: u32) -> Option<&mut (dyn Strategy + 'static)> {
        self.instances.get_mut(slot as usize)?.as_deref_mut()
    }

    /// The instance in `slot`.
    pub(crate) fn instance(&self, slot: u32) -> Option<&(dyn Strategy + 'static)> {
        self.instances.get(slot as usize)?.as_deref()
    }

    /// `(prefix, instance name)` of every choice.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Name, &Name)> + '_ {
        self.table
            .iter()
            .filter_map(|e| Some((&e.prefix, self.instance(e.value)?.instance_name())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::builtin;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn longest_prefix_picks_the_instance() {
        let h = NameHasher::with_seed(9);
        let reg = builtin();
        let mut sc = StrategyChoice::new(
            &h,
            reg.create(&n("/localhost/nfd/strategy/best-route"))
                .unwrap(),
        );
        let mc = reg.create(&n("/localhost/nfd/strategy/multicast")).unwrap();
        sc.set(&h, &n("/a"), mc).unwrap();
        let name = n("/a/b");
        let slot = sc.effective(&name, &h.prefix_hashes(&name));
        assert!(sc
            .instance(slot)
            .unwrap()
            .instance_name()
            .to_string()
            .contains("multicast"));
        let name = n("/b");
        assert_eq!(sc.effective(&name, &h.prefix_hashes(&name)), 0);
        assert_eq!(sc.len(), 2);
        assert_eq!(sc.iter().count(), 2);
        assert_eq!(sc.unset(&h, &n("/")), Err(StrategyError::CannotUnsetRoot));
        assert_eq!(sc.unset(&h, &n("/a")), Ok(true));
        assert_eq!(sc.unset(&h, &n("/a")), Ok(false));
        let name = n("/a/b");
        assert_eq!(sc.effective(&name, &h.prefix_hashes(&name)), 0);
        // the freed slot is reused
        sc.set(
            &h,
            &n("/c"),
            reg.create(&n("/localhost/nfd/strategy/multicast")).unwrap(),
        )
        .unwrap();
        assert_eq!(sc.instances.len(), 2);
    }
}
