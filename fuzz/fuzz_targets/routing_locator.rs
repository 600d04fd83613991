//! A locator record: router name, FaceUri and key bounds, signature check answers.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| nameway_routing::fuzzing::decode_locator(data));
