//! Randomness and secrets (Low's `rand.*`, `secret.*` and `password.*` rows; docs/language.md,
//! "Randomness and secrets"): each rule once, for the Rust path, the LLVM path (`cabi::secrets`)
//! and the interpreter's host.
//!
//! Every random value comes from the operating system's CSPRNG: `token` reads it directly
//! (`getrandom`), `random_int` through `rand`'s thread-local generator, which the operating
//! system seeds and reseeds. Passwords are hashed with Argon2id at the parameters OWASP
//! recommends (m = 19456 KiB, t = 2, p = 1, the `argon2` crate's defaults), a fresh 16-byte salt
//! per hash, and stored as the PHC string (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`). A hash
//! takes tens of milliseconds of CPU, so the async forms run it on the runtime's bounded
//! blocking pool and no worker thread stalls while it runs.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::Rng as _;
use subtle::ConstantTimeEq as _;

use crate::trap::trap;

/// The most bytes one `token(n)` gives: a bound on what one call can allocate.
pub const MAX_TOKEN_BYTES: i64 = 1024;

/// A uniformly random `i64` in `lo..=hi`; errors (the trap's message) when `lo > hi`.
pub fn try_random_int(lo: i64, hi: i64) -> Result<i64, String> {
    if lo > hi {
        return Err(format!("random_int: the range {lo}..={hi} is empty"));
    }
    Ok(rand::rng().random_range(lo..=hi))
}

/// As [`try_random_int`], trapping on an empty range.
pub fn random_int(lo: i64, hi: i64) -> i64 {
    try_random_int(lo, hi).unwrap_or_else(|message| trap(&message))
}

/// `n` bytes from the operating system's CSPRNG as URL-safe base64 without padding (43
/// characters for 32 bytes); errors (the trap's message) unless `1 <= n <=` [`MAX_TOKEN_BYTES`].
pub fn try_token(n: i64) -> Result<String, String> {
    if !(1..=MAX_TOKEN_BYTES).contains(&n) {
        return Err(format!("token: {n} bytes is outside 1..={MAX_TOKEN_BYTES}"));
    }
    let mut bytes = vec![0u8; n as usize];
    // The operating system's generator does not fail once the system has booted; if it ever
    // does, no token is better than a predictable one.
    getrandom::fill(&mut bytes)
        .map_err(|error| format!("token: the operating system's random source failed: {error}"))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// As [`try_token`], trapping on a count out of range.
pub fn token(n: i64) -> String {
    try_token(n).unwrap_or_else(|message| trap(&message))
}

/// Whether `a` and `b` are equal, in time that depends on their lengths but not on where they
/// first differ: the comparison for tokens and API keys, which `==` would leak byte by byte.
pub fn secure_eq(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

/// The Argon2id hash of `password` with a fresh random salt, as a PHC string. Runs on the
/// calling thread (the interpreter's host); programs use [`hash_password`].
pub fn hash_password_now(password: &str) -> String {
    let mut salt = [0u8; 16];
    if let Err(error) = getrandom::fill(&mut salt) {
        trap(&format!("hash_password: the operating system's random source failed: {error}"));
    }
    let salt = SaltString::encode_b64(&salt).unwrap_or_else(|error| trap(&format!("hash_password: {error}")));
    match Argon2::default().hash_password(password.as_bytes(), &salt) {
        Ok(hash) => hash.to_string(),
        // Only a password longer than 2^32 bytes gets here, which no request body holds.
        Err(error) => trap(&format!("hash_password: {error}")),
    }
}

/// Whether `password` matches `hash`, a PHC string of any Argon2 variant with its own
/// parameters (so hashes made at older costs still verify); false when `hash` is not one. Runs
/// on the calling thread; programs use [`verify_password`].
pub fn verify_password_now(password: &str, hash: &str) -> bool {
    match PasswordHash::new(hash) {
        Ok(parsed) => Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok(),
        Err(_) => false,
    }
}

/// [`hash_password_now`] on the runtime's bounded blocking pool.
pub async fn hash_password(password: &str) -> String {
    let password = password.to_owned();
    crate::tasks::run_blocking(move || hash_password_now(&password)).await
}

/// [`verify_password_now`] on the runtime's bounded blocking pool.
pub async fn verify_password(password: &str, hash: &str) -> bool {
    let (password, hash) = (password.to_owned(), hash.to_owned());
    crate::tasks::run_blocking(move || verify_password_now(&password, &hash)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ints_stay_in_their_inclusive_range_and_reach_both_ends() {
        let mut seen = [false; 3];
        for _ in 0..1000 {
            let x = random_int(-1, 1);
            assert!((-1..=1).contains(&x), "{x}");
            seen[(x + 1) as usize] = true;
        }
        assert_eq!(seen, [true; 3]);
        assert_eq!(try_random_int(i64::MIN, i64::MIN), Ok(i64::MIN));
        assert_eq!(try_random_int(2, 1), Err("random_int: the range 2..=1 is empty".to_string()));
    }

    #[test]
    fn tokens_are_url_safe_base64_of_fresh_bytes() {
        let a = token(32);
        assert_eq!(a.len(), 43);
        assert!(a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{a}");
        assert_ne!(a, token(32));
        assert_eq!(URL_SAFE_NO_PAD.decode(&a).map(|b| b.len()), Ok(32));
        assert_eq!(token(1).len(), 2);
        assert!(try_token(0).is_err());
        assert!(try_token(MAX_TOKEN_BYTES + 1).is_err());
        assert_eq!(try_token(MAX_TOKEN_BYTES).map(|t| t.len()), Ok(1366));
    }

    #[test]
    fn secure_eq_is_equality() {
        assert!(secure_eq("abc", "abc"));
        assert!(secure_eq("", ""));
        assert!(!secure_eq("abc", "abd"));
        assert!(!secure_eq("abc", "ab"));
    }

    #[test]
    fn a_password_hash_is_a_phc_argon2id_string_that_verifies_only_its_password() {
        let hash = hash_password_now("correct horse");
        assert!(hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{hash}");
        assert_ne!(hash, hash_password_now("correct horse"), "a fresh salt per hash");
        assert!(verify_password_now("correct horse", &hash));
        assert!(!verify_password_now("correct horse!", &hash));
        assert!(!verify_password_now("correct horse", "not a hash"));
        assert!(!verify_password_now("", ""));
    }
}
