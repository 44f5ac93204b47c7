//! What the names module keeps, all under `VYRE_HOME/certs` (0700, every file 0600): the
//! directory's claim (`directory.json`), the ACME account (`account.json`), and each name's
//! certificate chain and key (`<name>/cert.pem`, `<name>/key.pem`).

use std::path::PathBuf;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;

pub struct CertDir {
    root: PathBuf,
}

/// A name's certificate, loaded.
pub struct Loaded {
    pub config: Arc<ServerConfig>,
    /// When it stops being valid (ms since the epoch).
    pub not_after: i64,
}

impl CertDir {
    pub fn new(root: PathBuf) -> CertDir {
        CertDir { root }
    }

    fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String> {
        let path = self.root.join(rel);
        if let Some(dir) = path.parent() {
            for dir in [self.root.as_path(), dir] {
                crate::kernel::paths::private_dir(dir)
                    .map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
            }
        }
        crate::kernel::nofollow::write_atomic(&path, bytes, 0o600)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.root.join(rel)).ok()
    }

    pub fn save_json<T: serde::Serialize>(&self, rel: &str, value: &T) -> Result<(), String> {
        let text = serde_json::to_vec_pretty(value).map_err(|e| e.to_string())?;
        self.write(rel, &text)
    }

    pub fn load_json<T: serde::de::DeserializeOwned>(&self, rel: &str) -> Option<T> {
        serde_json::from_slice(&self.read(rel)?).ok()
    }

    /// Keep a name's certificate; it must load before it replaces the one there.
    pub fn save_cert(&self, name: &str, chain_pem: &str, key_pem: &str) -> Result<Loaded, String> {
        let loaded = load(chain_pem.as_bytes(), key_pem.as_bytes())?;
        self.write(&format!("{name}/key.pem"), key_pem.as_bytes())?;
        self.write(&format!("{name}/cert.pem"), chain_pem.as_bytes())?;
        Ok(loaded)
    }

    pub fn load_cert(&self, name: &str) -> Option<Result<Loaded, String>> {
        let chain = self.read(&format!("{name}/cert.pem"))?;
        let key = self.read(&format!("{name}/key.pem"))?;
        Some(load(&chain, &key))
    }
}

/// A chain and key as rustls serves them, and when the certificate expires.
fn load(chain_pem: &[u8], key_pem: &[u8]) -> Result<Loaded, String> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(chain_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the certificate chain: {e}"))?;
    let first = chain.first().ok_or("the certificate chain is empty")?;
    let (_, cert) =
        x509_parser::parse_x509_certificate(first).map_err(|e| format!("the certificate: {e}"))?;
    let not_after = cert.validity().not_after.timestamp() * 1000;
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| format!("the key: {e}"))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("the certificate and key do not make a server: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Loaded {
        config: Arc::new(config),
        not_after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_certificate_is_kept_private_and_refused_when_it_does_not_load() {
        let dir = std::env::temp_dir().join(format!("vyre-certs-{}", std::process::id()));
        let certs = CertDir::new(dir.join("certs"));
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["alex.vyre.test".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let loaded = certs
            .save_cert("alex.vyre.test", &cert.pem(), &key.serialize_pem())
            .unwrap();
        assert!(loaded.not_after > crate::now_ms());
        for f in ["alex.vyre.test/cert.pem", "alex.vyre.test/key.pem"] {
            let mode = std::fs::metadata(dir.join("certs").join(f))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{f}");
        }
        let mode = std::fs::metadata(dir.join("certs"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(certs.load_cert("alex.vyre.test").unwrap().is_ok());
        let other = rcgen::KeyPair::generate().unwrap();
        assert!(
            certs
                .save_cert("alex.vyre.test", &cert.pem(), &other.serialize_pem())
                .is_err(),
            "a key that is not the certificate's is refused"
        );
        assert!(
            certs.load_cert("alex.vyre.test").unwrap().is_ok(),
            "and the old one kept"
        );
        assert!(certs.load_cert("nobody.vyre.test").is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
