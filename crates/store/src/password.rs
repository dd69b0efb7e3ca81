//! argon2id password hashing with the parameters hightick chose.
//!
//! The store only keeps the resulting PHC string; the gateway calls these on its
//! bounded pool of auth workers (hashing is deliberately slow, never call it on an
//! async executor thread).

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};

use crate::error::StoreError;

/// Memory cost in KiB (19 MiB, the OWASP argon2id baseline).
pub const MEMORY_KIB: u32 = 19 * 1024;
/// Number of passes over memory.
pub const ITERATIONS: u32 = 2;
/// Lanes.
pub const PARALLELISM: u32 = 1;
/// Longest password accepted, in bytes.
pub const MAX_PASSWORD_BYTES: usize = 1024;

fn hasher() -> Result<Argon2<'static>, StoreError> {
    let params = Params::new(MEMORY_KIB, ITERATIONS, PARALLELISM, None)
        .map_err(|e| StoreError::Password(e.to_string()))?;
    Ok(Argon2::new(Algorithm::Argon2id, Version::V0x13, params))
}

fn check_len(password: &str) -> Result<(), StoreError> {
    if password.is_empty() || password.len() > MAX_PASSWORD_BYTES {
        return Err(StoreError::InvalidInput {
            field: "password",
            reason: "must be 1..=1024 bytes",
        });
    }
    Ok(())
}

/// Hashes `password` with argon2id and a fresh random salt, returning a PHC string
/// (`$argon2id$v=19$m=19456,t=2,p=1$...`).
pub fn hash_password(password: &str) -> Result<String, StoreError> {
    check_len(password)?;
    let hash: PasswordHash = hasher()?
        .hash_password(password.as_bytes())
        .map_err(|e| StoreError::Password(e.to_string()))?;
    Ok(hash.to_string())
}

/// Checks `password` against a PHC string made by [`hash_password`]. A wrong
/// password is `Ok(false)`; a malformed PHC string is an error.
pub fn verify_password(password: &str, phc: &str) -> Result<bool, StoreError> {
    check_len(password)?;
    let parsed = PasswordHash::new(phc).map_err(|_| StoreError::InvalidInput {
        field: "password_hash",
        reason: "not a PHC string",
    })?;
    Ok(hasher()?
        .verify_password(password.as_bytes(), &parsed)
        .is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_then_verify() {
        let phc = hash_password("correct horse").unwrap();
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{phc}");
        assert!(verify_password("correct horse", &phc).unwrap());
        assert!(!verify_password("wrong horse", &phc).unwrap());
    }

    #[test]
    fn salts_differ() {
        assert_ne!(hash_password("pw").unwrap(), hash_password("pw").unwrap());
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert!(verify_password("pw", "not-a-hash").is_err());
        assert!(hash_password("").is_err());
        assert!(hash_password(&"x".repeat(2000)).is_err());
    }
}
