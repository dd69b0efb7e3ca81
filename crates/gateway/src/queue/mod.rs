//! The shared matchmaking queue's gateway side: the matching rules (sans IO)
//! and the snapshot of the store's queue a gateway answers polls from.

pub mod rules;
pub(crate) mod view;
