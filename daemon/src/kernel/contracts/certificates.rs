//! Certificates for this vyred's names (`names` provides it): the network serves HTTPS inside
//! the tunnel with them, and answers requests that name them.

use std::sync::Arc;

use super::Capability;

pub trait Certificates: Send + Sync {
    /// The TLS configuration for HTTPS, once a certificate was issued; read per connection, so
    /// a renewed certificate is served at once.
    fn server_config(&self) -> Option<Arc<tokio_rustls::rustls::ServerConfig>>;
    /// The names there are certificates for.
    fn names(&self) -> Vec<String>;
}

impl Capability for dyn Certificates {
    const NAME: &'static str = "certificates";
}
