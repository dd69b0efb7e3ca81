//! The secrets of a load run: the shared token key (written to a file only the owner
//! may read, for the server instances) and one connect token per bot.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use hightick_net::{ConnectToken, Key, TokenParams};

use crate::error::LabError;

/// How long minted tokens stay valid, seconds (long enough for a warm-up to end).
const TOKEN_LIFETIME_S: u64 = 600;

/// A connect token for `client_id` to play on `server`, sealed with `key`.
pub(crate) fn mint_token(
    key: &Key,
    client_id: u64,
    server: SocketAddr,
) -> Result<Vec<u8>, LabError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| LabError::Token(e.to_string()))?
        .as_secs();
    let token = ConnectToken::generate(
        &TokenParams {
            protocol_id: hightick_proto::PROTOCOL_ID,
            client_id,
            create_unix: now,
            expire_unix: now + TOKEN_LIFETIME_S,
            timeout_seconds: 5,
            server_addresses: &[server],
            user_data: &[],
        },
        key,
        &mut rand::rng(),
    )
    .map_err(|e| LabError::Token(e.to_string()))?;
    Ok(token.encode().to_vec())
}

/// Writes `text` to a new file readable by its owner only.
pub(crate) fn write_secret(path: &Path, text: &str) -> Result<(), LabError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let what = || format!("writing {}", path.display());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(LabError::io(what()))?;
    file.write_all(text.as_bytes())
        .map_err(LabError::io(what()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_token_decodes_and_names_its_server() {
        let key = Key::generate(&mut rand::rng());
        let server: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        let bytes = mint_token(&key, 42, server).unwrap();
        let token = ConnectToken::decode(&bytes).unwrap();
        assert!(token.server_addresses.contains(&server));
    }

    #[test]
    fn secrets_are_private_to_their_owner() {
        use std::os::unix::fs::PermissionsExt as _;
        let path = std::env::temp_dir().join(format!("hightick-lab-secret-{}", std::process::id()));
        write_secret(&path, "00ff").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "00ff");
        std::fs::remove_file(&path).unwrap();
    }
}
