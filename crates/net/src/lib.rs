//! hightick-net: the sans-IO connection layer.
//!
//! (Root docs are completed when the crate lands: what it is for, what it is not,
//! and a short example.)

// ---- secure layer: tokens, AEAD, handshake, connection slots (netcode.io 1.02 semantics)

// ---- packet layer: sequence numbers, acks, delivery notifications, channels, fragments

// ---- test support
