//! A RIB answer or registration reply: re-encodes to the same; a found chain is verified.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| nameway_routing::fuzzing::decode_rib_answer(data));
