//! The status manager: `status/general` (NFD's ForwarderStatus).

use nameway_fw::Forwarder;
use nameway_wire::mgmt::ForwarderStatus;

use super::{Dataset, Management};

impl Management {
    /// `status/<verb>` datasets.
    pub(super) fn status_dataset(&self, fw: &Forwarder, verb: &str) -> Option<Dataset> {
        match verb {
            "general" => Some(Ok(self.general_status(fw).encode().to_vec())),
            _ => None,
        }
    }

    fn general_status(&self, fw: &Forwarder) -> ForwarderStatus {
        let st = fw.status();
        ForwarderStatus {
            nfd_version: format!("nameway {}", env!("CARGO_PKG_VERSION")),
            start_timestamp: self.start_ms,
            current_timestamp: crate::wall_ms(),
            n_name_tree_entries: 0,
            n_fib_entries: st.n_fib_entries as u64,
            n_pit_entries: st.n_pit_entries as u64,
            n_measurements_entries: fw.n_measurements_entries() as u64,
            n_cs_entries: st.n_cs_entries as u64,
            n_in_interests: st.counters.n_in_interests,
            n_in_data: st.counters.n_in_data,
            n_in_nacks: st.counters.n_in_nacks,
            n_out_interests: st.counters.n_out_interests,
            n_out_data: st.counters.n_out_data,
            n_out_nacks: st.counters.n_out_nacks,
            n_satisfied_interests: st.counters.n_satisfied_interests,
            n_unsatisfied_interests: st.counters.n_unsatisfied_interests,
        }
    }
}
