//! A Prefix Announcement: fields re-encode to the same fields; the name is <prefix>/32=PA/v/seg.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| nameway_routing::fuzzing::decode_announcement(data));
