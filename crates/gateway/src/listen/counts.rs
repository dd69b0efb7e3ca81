//! [`ConnectionCounts`]: what the HTTP listener closed or refused, and
//! its TLS handshakes, for `/metrics`.

use std::sync::atomic::{AtomicU64, Ordering};

use super::deadline::Expiry;

/// Connections the listener ended early, by why, and TLS handshakes by kind.
#[derive(Debug, Default)]
pub struct ConnectionCounts {
    header: AtomicU64,
    idle: AtomicU64,
    per_ip: AtomicU64,
    proxy_header: AtomicU64,
    tls_full: AtomicU64,
    tls_resumed: AtomicU64,
    tls_failed: AtomicU64,
    tls_reloaded: AtomicU64,
    tls_reload_failed: AtomicU64,
}

impl ConnectionCounts {
    pub(crate) fn expired(&self, why: Expiry) {
        let counter = match why {
            Expiry::Header => &self.header,
            Expiry::Idle => &self.idle,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn refused_per_ip(&self) {
        self.per_ip.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn refused_proxy_header(&self) {
        self.proxy_header.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn tls_handshake(&self, kind: Option<rustls::HandshakeKind>) {
        let counter = match kind {
            Some(rustls::HandshakeKind::Resumed) => &self.tls_resumed,
            _ => &self.tls_full,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn tls_failed(&self) {
        self.tls_failed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn tls_reload(&self, ok: bool) {
        let counter = if ok {
            &self.tls_reloaded
        } else {
            &self.tls_reload_failed
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Closed because a trusted proxy's connection did not start with a
    /// valid PROXY header (`[http] proxy_protocol`).
    pub fn refused_proxy_header_total(&self) -> u64 {
        self.proxy_header.load(Ordering::Relaxed)
    }

    /// Closed for headers not complete by the header deadline.
    pub fn closed_header_timeout(&self) -> u64 {
        self.header.load(Ordering::Relaxed)
    }

    /// Closed for idling between requests past the idle timeout.
    pub fn closed_idle(&self) -> u64 {
        self.idle.load(Ordering::Relaxed)
    }

    /// Refused at accept: their address held `max_connections_per_ip`.
    pub fn refused_per_ip_total(&self) -> u64 {
        self.per_ip.load(Ordering::Relaxed)
    }

    /// TLS handshakes completed in full (a certificate sent and checked).
    pub fn tls_full_handshakes(&self) -> u64 {
        self.tls_full.load(Ordering::Relaxed)
    }

    /// TLS handshakes that resumed an earlier session (a ticket).
    pub fn tls_resumed_handshakes(&self) -> u64 {
        self.tls_resumed.load(Ordering::Relaxed)
    }

    /// TLS handshakes that failed (the client refused the certificate,
    /// spoke something else, or went away).
    pub fn tls_failed_handshakes(&self) -> u64 {
        self.tls_failed.load(Ordering::Relaxed)
    }

    /// Times changed certificate files were read and are served since.
    pub fn tls_reloads(&self) -> u64 {
        self.tls_reloaded.load(Ordering::Relaxed)
    }

    /// Times changed certificate files could not be used (the certificate
    /// in use was kept).
    pub fn tls_reload_failures(&self) -> u64 {
        self.tls_reload_failed.load(Ordering::Relaxed)
    }
}
