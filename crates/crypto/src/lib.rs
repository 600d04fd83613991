//! Payload ciphers (placeholder until the cipher-suite work lands).
