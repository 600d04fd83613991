//! NDN URI parsing: canonical print, print -> parse round trip, wire round trip.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| nameway_wire::fuzzing::parse_uri(data));
