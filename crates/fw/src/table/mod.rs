//! The tables, one per file as in NFD: faces, FIB, PIT, content store, dead-nonce list,
//! straggler list, strategy choice, and the hashed name-prefix table the FIB and strategy
//! choice share.

pub(crate) mod cs;
pub(crate) mod dead_nonce_list;
pub(crate) mod face_table;
pub(crate) mod fib;
pub(crate) mod name_table;
pub(crate) mod pit;
pub(crate) mod straggler_list;
pub(crate) mod strategy_choice;
