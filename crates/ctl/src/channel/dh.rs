//! X25519 for snow, from curve25519-dalek (snow's ring resolver has no static-key DH, and
//! the workspace builds snow without its default RustCrypto resolver).

use snow::params::{CipherChoice, DHChoice, HashChoice};
use snow::resolvers::CryptoResolver;
use snow::types::{Dh, Random};
use zeroize::Zeroizing;

/// Resolves only `25519`; hash and cipher come from the ring resolver behind it.
pub(crate) struct X25519Resolver;

impl CryptoResolver for X25519Resolver {
    fn resolve_rng(&self) -> Option<Box<dyn Random>> {
        None
    }

    fn resolve_dh(&self, choice: &DHChoice) -> Option<Box<dyn Dh>> {
        matches!(choice, DHChoice::Curve25519).then(|| Box::new(X25519::default()) as Box<dyn Dh>)
    }

    fn resolve_hash(&self, _: &HashChoice) -> Option<Box<dyn snow::types::Hash>> {
        None
    }

    fn resolve_cipher(&self, _: &CipherChoice) -> Option<Box<dyn snow::types::Cipher>> {
        None
    }
}

#[derive(Default)]
struct X25519 {
    secret: Zeroizing<[u8; 32]>,
    public: [u8; 32],
}

impl Dh for X25519 {
    fn name(&self) -> &'static str {
        "25519"
    }

    fn pub_len(&self) -> usize {
        32
    }

    fn priv_len(&self) -> usize {
        32
    }

    fn set(&mut self, privkey: &[u8]) {
        let mut secret = Zeroizing::new([0u8; 32]);
        if let Some(k) = privkey.get(..32) {
            secret.copy_from_slice(k);
        }
        self.public = curve25519_dalek::MontgomeryPoint::mul_base_clamped(*secret).to_bytes();
        self.secret = secret;
    }

    fn generate(&mut self, rng: &mut dyn Random) -> Result<(), snow::Error> {
        let mut secret = Zeroizing::new([0u8; 32]);
        rng.try_fill_bytes(&mut secret[..])?;
        self.set(&secret[..]);
        Ok(())
    }

    fn pubkey(&self) -> &[u8] {
        &self.public
    }

    fn privkey(&self) -> &[u8] {
        &self.secret[..]
    }

    fn dh(&self, pubkey: &[u8], out: &mut [u8]) -> Result<(), snow::Error> {
        let theirs: [u8; 32] = pubkey
            .get(..32)
            .and_then(|k| k.try_into().ok())
            .ok_or(snow::Error::Dh)?;
        let shared = Zeroizing::new(
            curve25519_dalek::MontgomeryPoint(theirs)
                .mul_clamped(*self.secret)
                .to_bytes(),
        );
        // The all-zero secret of a low-order point is refused (RFC 7748 section 6.1).
        if shared.iter().all(|&b| b == 0) {
            return Err(snow::Error::Dh);
        }
        out.get_mut(..32)
            .ok_or(snow::Error::Dh)?
            .copy_from_slice(&shared[..]);
        Ok(())
    }
}
