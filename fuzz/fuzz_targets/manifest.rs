//! A manifest's content (FLIC-style Node): round trip, stable encoding, digest lookup.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| nameway_transport::fuzzing::decode_manifest(data));
