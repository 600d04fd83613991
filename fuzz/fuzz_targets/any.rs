//! Any input, dispatched on its first TLV-TYPE to the matching decoder.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| nameway_wire::fuzzing::decode_any(data));
