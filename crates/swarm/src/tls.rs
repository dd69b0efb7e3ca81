//! TLS to `https://` targets: the client side of a gateway that terminates
//! TLS itself (or any HTTPS front). rustls on ring, its default client
//! session cache on, so a connection the pool opens again resumes the
//! session instead of paying a full handshake.
//!
//! - [`TlsClient`]: one per run, trusting the scenario's `[http] ca_file`
//!   or else the public (webpki) roots;
//! - [`Secure`]: what one target URL dials with (the client and the name
//!   its certificate must carry);
//! - [`Stream`]: a connection, plain or TLS, as the
//!   [HTTP/1.1 client](crate::http1) and the push sockets use it.
//!
//! What it is not: client certificates, or a choice of protocol versions
//! (rustls's safe defaults: TLS 1.2 and 1.3).

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// The run's TLS client. See the [module docs](self).
#[derive(Clone)]
pub struct TlsClient {
    connector: TlsConnector,
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsClient").finish_non_exhaustive()
    }
}

impl TlsClient {
    /// A client trusting the certificates in the PEM file `ca_file`, or
    /// the public roots when `None`. The error says what is wrong with the
    /// file (the caller names the field).
    pub fn new(ca_file: Option<&Path>) -> Result<Self, String> {
        let mut roots = rustls::RootCertStore::empty();
        match ca_file {
            Some(path) => {
                let certs = CertificateDer::pem_file_iter(path)
                    .and_then(Iterator::collect::<Result<Vec<_>, _>>)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                if certs.is_empty() {
                    return Err(format!("{}: no certificate in it", path.display()));
                }
                for cert in certs {
                    roots
                        .add(cert)
                        .map_err(|e| format!("{}: {e}", path.display()))?;
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self {
            connector: TlsConnector::from(Arc::new(config)),
        })
    }

    /// How to dial `host` (a name or an address, as in the URL).
    pub fn to(&self, host: &str) -> Result<Secure, String> {
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| format!("`{host}` cannot be a TLS server name: {e}"))?;
        Ok(Secure {
            connector: self.connector.clone(),
            name,
        })
    }
}

/// What one `https://` URL is dialled with. Cheap to clone.
#[derive(Clone)]
pub struct Secure {
    connector: TlsConnector,
    name: ServerName<'static>,
}

impl std::fmt::Debug for Secure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secure")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Secure {
    /// The TLS handshake over `tcp`.
    pub async fn handshake(&self, tcp: TcpStream) -> io::Result<Stream> {
        let tls = self.connector.connect(self.name.clone(), tcp).await?;
        Ok(Stream::Tls(Box::new(tls)))
    }
}

/// One connection to a target, plain or TLS.
#[derive(Debug)]
pub enum Stream {
    /// `http://`.
    Plain(TcpStream),
    /// `https://`, after the handshake.
    Tls(Box<TlsStream<TcpStream>>),
}

impl Stream {
    /// Whether the peer closed the connection (or sent something unasked)
    /// while it sat idle. Never blocks; what TLS carries on its own (session
    /// tickets) is read and is not "something".
    pub fn is_closed(&mut self) -> bool {
        let mut probe = [0u8; 1];
        match self {
            Self::Plain(tcp) => match tcp.try_read(&mut probe) {
                Err(e) => e.kind() != io::ErrorKind::WouldBlock,
                Ok(_) => true,
            },
            Self::Tls(tls) => {
                let mut buf = ReadBuf::new(&mut probe);
                let mut cx = Context::from_waker(std::task::Waker::noop());
                // Ready: end of stream, an unasked byte, or an error.
                Pin::new(tls.as_mut())
                    .poll_read(&mut cx, &mut buf)
                    .is_ready()
            }
        }
    }
}

impl From<TcpStream> for Stream {
    fn from(tcp: TcpStream) -> Self {
        Self::Plain(tcp)
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Self::Plain(s) => s.is_write_vectored(),
            Self::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_flush(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
