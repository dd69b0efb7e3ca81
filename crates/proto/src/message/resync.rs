//! [`ResyncRequest`]: a client asking for full state.

use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

wire_enum! {
    /// Why a client asks for a full-state snapshot.
    pub enum ResyncReason: 2 bits, "resync reason" {
        /// The client reconnected to a match it was in.
        Reconnect = 0,
        /// The client joined a match in progress.
        LateJoin = 1,
        /// The client's world no longer matches the snapshots (e.g. it failed
        /// to decode one).
        Desync = 2,
    }
}

/// A client's request for a [`SnapshotKind::FullResync`](super::SnapshotKind)
/// snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResyncRequest {
    /// Why.
    pub reason: ResyncReason,
    /// The newest server tick the client holds a snapshot of, if any.
    pub last_server_tick: Option<u32>,
}

impl ResyncRequest {
    /// Writes the request: reason (2 bits), then a presence bit and the tick.
    pub fn encode(&self, w: &mut BitWriter) -> Result<(), ProtoError> {
        w.all_or_nothing(|w| {
            self.reason.write(w)?;
            w.write_bool(self.last_server_tick.is_some())?;
            match self.last_server_tick {
                Some(tick) => w.write_u32(tick),
                None => Ok(()),
            }
        })
    }

    /// Reads a request written by [`encode`](Self::encode); an unknown reason
    /// is [`ProtoError::InvalidValue`].
    pub fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        let reason = ResyncReason::read(r)?;
        let last_server_tick = if r.read_bool()? {
            Some(r.read_u32()?)
        } else {
            None
        };
        Ok(Self {
            reason,
            last_server_tick,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_reason_is_refused() {
        assert_eq!(
            ResyncRequest::decode(&mut BitReader::new(&[0b11])),
            Err(ProtoError::invalid("resync reason"))
        );
        let req = ResyncRequest {
            reason: ResyncReason::LateJoin,
            last_server_tick: None,
        };
        let mut buf = [0u8; 1];
        let mut w = BitWriter::new(&mut buf);
        req.encode(&mut w).unwrap();
        assert_eq!(w.bits_written(), 3);
        assert_eq!(ResyncRequest::decode(&mut BitReader::new(&buf)), Ok(req));
    }
}
