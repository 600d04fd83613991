//! X25519 for `snow` (feature `noise`): the Noise handshakes of the secure faces
//! (nameway-face) and of the controller channel (nameway-ctl) both build their
//! `HandshakeState` with [`resolver`].
//!
//! snow's ring resolver has no static-key Diffie-Hellman, and the workspace builds snow
//! without its default RustCrypto resolver, so X25519 comes from curve25519-dalek here and
//! SHA-256 and ChaCha20-Poly1305 from the ring resolver behind it.

use snow::params::{CipherChoice, DHChoice, HashChoice};
use snow::resolvers::{BoxedCryptoResolver, CryptoResolver, FallbackResolver, RingResolver};
use snow::types::{Dh, Random};
use zeroize::Zeroizing;

/// The resolver for `snow::Builder::with_resolver`: X25519 from curve25519-dalek, hash and
/// cipher from ring.
pub fn resolver() -> BoxedCryptoResolver {
    Box::new(FallbackResolver::new(
        Box::new(X25519Resolver),
        Box::new(RingResolver),
    ))
}

/// Resolves only `25519`.
struct X25519Resolver;

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
        // snow hands keys in buffers sized for its largest curve: the key is the first 32.
        let theirs: [u8; 32] = pubkey
            .get(..32)
            .and_then(|k| k.try_into().ok())
            .ok_or(snow::Error::Dh)?;
        let shared = Zeroizing::new(
            curve25519_dalek::MontgomeryPoint(theirs)
                .mul_clamped(*self.secret)
                .to_bytes(),
        );
        // A low-order point gives the all-zero secret: refuse it (RFC 7748 section 6.1).
        if shared.iter().all(|&b| b == 0) {
            return Err(snow::Error::Dh);
        }
        out.get_mut(..32)
            .ok_or(snow::Error::Dh)?
            .copy_from_slice(&shared[..]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn both_sides_agree_and_a_low_order_point_is_refused() {
        let (mut a, mut b) = (X25519::default(), X25519::default());
        a.set(&[1u8; 32]);
        b.set(&[2u8; 32]);
        let (mut ab, mut ba) = ([0u8; 32], [0u8; 32]);
        a.dh(b.pubkey(), &mut ab).unwrap();
        b.dh(a.pubkey(), &mut ba).unwrap();
        assert_eq!(ab, ba);
        assert_ne!(ab, [0u8; 32]);
        // The point of order 1 (u = 0) gives the all-zero secret.
        assert!(a.dh(&[0u8; 32], &mut ab).is_err());
        assert!(resolver().resolve_dh(&DHChoice::Curve25519).is_some());
    }
}
