//! [`Probe`]: the stack's own short HTTP calls to a gateway, apart from the
//! players': the host listing (who is registered, how fresh), a guest
//! login, and one store-backed read whose status shows whether the store
//! answers.

use std::time::{Duration, Instant};

/// Longest one probe call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// One registered host as a gateway lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Listed {
    /// Its host id.
    pub host_id: String,
    /// Matches it runs.
    pub active: u64,
    /// Matches it may be given at once.
    pub capacity: u64,
    /// Seconds since its last heartbeat.
    pub last_seen_s: f64,
}

/// A store-backed read's answer: its status (`None`: no answer) and its
/// `Retry-After` header.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Answer {
    pub status: Option<u16>,
    pub retry_after: Option<String>,
}

/// HTTP calls to gateways.
pub(crate) struct Probe {
    agent: ureq::Agent,
    /// For store reads, which may be held while the store waits for a
    /// connection.
    patient: ureq::Agent,
}

/// Longest a store read may be held.
const HELD_TIMEOUT: Duration = Duration::from_secs(90);

impl Probe {
    pub(crate) fn new() -> Self {
        let agent = |timeout| {
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(timeout))
                .build()
                .into()
        };
        Self {
            agent: agent(CALL_TIMEOUT),
            patient: agent(HELD_TIMEOUT),
        }
    }

    /// The hosts `gateway` lists (`None`: it did not answer).
    pub(crate) fn hosts(&self, gateway: &str, secret: &str) -> Option<Vec<Listed>> {
        let listed: serde_json::Value = self
            .agent
            .get(&format!("{gateway}/v1/hosts"))
            .header("authorization", &format!("Bearer {secret}"))
            .call()
            .ok()?
            .body_mut()
            .read_json()
            .ok()?;
        let hosts = listed["hosts"].as_array()?;
        Some(
            hosts
                .iter()
                .map(|h| Listed {
                    host_id: h["host_id"].as_str().unwrap_or_default().to_owned(),
                    active: h["active"].as_u64().unwrap_or(0),
                    capacity: h["capacity"].as_u64().unwrap_or(0),
                    last_seen_s: h["last_seen_s"].as_f64().unwrap_or(0.0),
                })
                .collect(),
        )
    }

    /// Logs in as guest `device` through the login queue; the session token.
    pub(crate) fn guest_session(&self, gateway: &str, device: &str) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut answer: serde_json::Value = self
            .agent
            .post(&format!("{gateway}/v1/auth/guest"))
            .send_json(serde_json::json!({ "device_id": device }))
            .ok()?
            .body_mut()
            .read_json()
            .ok()?;
        let ticket = answer["ticket"].as_str().unwrap_or_default().to_owned();
        while answer["session_token"].is_null() && Instant::now() < deadline {
            answer = self
                .agent
                .get(&format!("{gateway}/v1/auth/tickets/{ticket}?wait_ms=1000"))
                .call()
                .ok()?
                .body_mut()
                .read_json()
                .ok()?;
        }
        answer["session_token"].as_str().map(str::to_owned)
    }

    /// One store-backed read (the leaderboard) with session `token`.
    pub(crate) fn store_read(&self, gateway: &str, token: &str) -> Answer {
        match self
            .patient
            .get(&format!("{gateway}/v1/leaderboard"))
            .header("authorization", &format!("Bearer {token}"))
            .call()
        {
            Ok(response) => Answer {
                status: Some(response.status().as_u16()),
                retry_after: response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned),
            },
            Err(_) => Answer {
                status: None,
                retry_after: None,
            },
        }
    }
}
