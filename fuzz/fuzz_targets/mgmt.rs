//! NFD management TLVs: ControlParameters, ControlResponse, FaceQueryFilter, dataset contents.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| nameway_wire::fuzzing::decode_mgmt(data));
