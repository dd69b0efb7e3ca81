//! JSON calls to a host's admin API.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use hightick_server::{CreateMatch, HostStats, MatchInfo};

/// A blocking client of one host's admin API.
#[derive(Debug)]
pub struct AdminClient {
    base: String,
    agent: ureq::Agent,
}

impl AdminClient {
    /// A client of the admin API at `address`.
    pub fn new(address: SocketAddr) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(10)))
            .build()
            .into();
        Self {
            base: format!("http://{address}"),
            agent,
        }
    }

    /// `POST /v1/matches`.
    pub fn create_match(&self, request: &CreateMatch) -> Result<MatchInfo> {
        let body = serde_json::to_string(request)?;
        let mut response = self
            .agent
            .post(&format!("{}/v1/matches", self.base))
            .header("content-type", "application/json")
            .send(&body)
            .context("POST /v1/matches")?;
        let status = response.status();
        let text = response.body_mut().read_to_string()?;
        if status.as_u16() != 201 {
            bail!("POST /v1/matches: {status}: {text}");
        }
        Ok(serde_json::from_str(&text)?)
    }

    /// `GET /v1/stats`.
    pub fn stats(&self) -> Result<HostStats> {
        let mut response = self
            .agent
            .get(&format!("{}/v1/stats", self.base))
            .call()
            .context("GET /v1/stats")?;
        let text = response.body_mut().read_to_string()?;
        serde_json::from_str(&text).with_context(|| format!("GET /v1/stats: {text}"))
    }

    /// `POST /v1/stats/reset`: a new measuring window.
    pub fn reset_stats(&self) -> Result<()> {
        let response = self
            .agent
            .post(&format!("{}/v1/stats/reset", self.base))
            .send("")
            .context("POST /v1/stats/reset")?;
        if !response.status().is_success() {
            bail!("POST /v1/stats/reset: {}", response.status());
        }
        Ok(())
    }

    /// Waits until `/healthz` answers.
    pub fn wait_healthy(&self, patience: Duration) -> Result<()> {
        let start = std::time::Instant::now();
        loop {
            if let Ok(r) = self.agent.get(&format!("{}/healthz", self.base)).call()
                && r.status().is_success()
            {
                return Ok(());
            }
            if start.elapsed() > patience {
                bail!("the server's admin API did not answer within {patience:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
