//! Data: DataView and Data::decode agree; round trip; full name.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| nameway_wire::fuzzing::decode_data(data));
