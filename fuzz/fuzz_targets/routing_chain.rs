//! An announcement followed by a locator record, through the chain verifier.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| nameway_routing::fuzzing::verify_chain(data));
