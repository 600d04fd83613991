//! NDNLPv2 LpPacket: decode, classify, round trip, fragmentation and reassembly, inner packet.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| nameway_wire::fuzzing::decode_lp(data));
