//! An authenticator as a browser drives one, for tests (the unit tests here and the integration
//! tests' person with a passkey): a P-256 key, a credential id and a signature counter, making
//! the `clientDataJSON`, `authenticatorData` and signatures a real one makes. Not used by vyred.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use p256::ecdsa::SigningKey;
use p256::ecdsa::signature::Signer;
use p256::pkcs8::EncodePublicKey;
use sha2::{Digest, Sha256};

pub struct Authenticator {
    key: SigningKey,
    pub id: Vec<u8>,
    pub count: u32,
    /// Whether it verifies the person (Touch ID, a PIN): the UV flag.
    pub verifies: bool,
}

/// What `navigator.credentials.create` or `.get` answers, raw.
pub struct Answer {
    pub client_data_json: Vec<u8>,
    pub authenticator_data: Vec<u8>,
    /// Empty for a registration.
    pub signature: Vec<u8>,
}

impl Answer {
    /// As `vault.reveal`'s `passkey` (base64url each).
    pub fn assertion(&self, id: &[u8]) -> serde_json::Value {
        serde_json::json!({
            "credential_id": B64.encode(id),
            "client_data_json": B64.encode(&self.client_data_json),
            "authenticator_data": B64.encode(&self.authenticator_data),
            "signature": B64.encode(&self.signature),
        })
    }
}

impl Authenticator {
    /// One made from `seed` (the same seed, the same key).
    pub fn new(seed: u8) -> Self {
        Authenticator {
            key: SigningKey::from_slice(&[seed; 32]).expect("a valid scalar"),
            id: vec![seed, 1, 2, 3, 4, 5, 6, 7],
            count: 0,
            verifies: true,
        }
    }

    /// The public key as `response.getPublicKey()` gives it (SubjectPublicKeyInfo, DER).
    pub fn spki(&self) -> Vec<u8> {
        self.key
            .verifying_key()
            .to_public_key_der()
            .expect("encodes")
            .as_bytes()
            .to_vec()
    }

    pub fn client_data(kind: &str, challenge: &str, origin: &str) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "type": kind, "challenge": challenge, "origin": origin, "crossOrigin": false
        }))
        .expect("serializes")
    }

    fn auth_data(&mut self, rp_id: &str, attested: bool) -> Vec<u8> {
        self.count += 1;
        let mut d = Sha256::digest(rp_id.as_bytes()).to_vec();
        let uv = if self.verifies { 0x04 } else { 0 };
        let at = if attested { 0x40 } else { 0 };
        d.push(0x01 | uv | at);
        d.extend_from_slice(&self.count.to_be_bytes());
        if attested {
            d.extend_from_slice(&[0u8; 16]);
            d.extend_from_slice(&(self.id.len() as u16).to_be_bytes());
            d.extend_from_slice(&self.id);
            d.push(0xa0); // the COSE key, which vyred takes from getPublicKey() instead
        }
        d
    }

    /// A registration for `rp_id` from `origin`.
    pub fn register(&mut self, rp_id: &str, challenge: &str, origin: &str) -> Answer {
        Answer {
            client_data_json: Self::client_data("webauthn.create", challenge, origin),
            authenticator_data: self.auth_data(rp_id, true),
            signature: Vec::new(),
        }
    }

    /// `vault.passkey.add`'s input for a registration.
    pub fn add_input(
        &mut self,
        name: &str,
        rp_id: &str,
        challenge: &str,
        origin: &str,
    ) -> serde_json::Value {
        let a = self.register(rp_id, challenge, origin);
        serde_json::json!({
            "name": name,
            "credential_id": B64.encode(&self.id),
            "client_data_json": B64.encode(&a.client_data_json),
            "authenticator_data": B64.encode(&a.authenticator_data),
            "public_key": B64.encode(self.spki()),
            "alg": super::ES256,
        })
    }

    /// An assertion for `rp_id` from `origin`, signed.
    pub fn assert(&mut self, rp_id: &str, challenge: &str, origin: &str) -> Answer {
        let cd = Self::client_data("webauthn.get", challenge, origin);
        let ad = self.auth_data(rp_id, false);
        let mut signed = ad.clone();
        signed.extend_from_slice(&Sha256::digest(&cd));
        let sig: p256::ecdsa::Signature = self.key.sign(&signed);
        Answer {
            client_data_json: cd,
            authenticator_data: ad,
            signature: sig.to_der().as_bytes().to_vec(),
        }
    }
}
