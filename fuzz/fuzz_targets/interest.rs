//! Interest: InterestView and Interest::decode agree; round trip; HopLimit/Nonce rewrites.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| nameway_wire::fuzzing::decode_interest(data));
