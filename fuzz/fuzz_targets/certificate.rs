//! An NDN certificate (a Data packet): name layout, ValidityPeriod form, checks answer.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| nameway_transport::fuzzing::decode_certificate(data));
