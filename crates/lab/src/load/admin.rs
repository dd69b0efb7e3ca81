//! Blocking JSON calls to one host's admin API.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hightick_host_api::{CreateMatch, HostStats, MatchInfo, TimelinePoint};

use crate::error::LabError;

/// A client of the admin API of one `hightick serve`.
#[derive(Debug)]
pub(crate) struct AdminClient {
    base: String,
    agent: ureq::Agent,
}

fn failed(call: &'static str) -> impl Fn(ureq::Error) -> LabError {
    move |e| LabError::Admin {
        call,
        message: e.to_string(),
    }
}

impl AdminClient {
    /// A client of the admin API at `address`.
    pub(crate) fn new(address: SocketAddr) -> Self {
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
    pub(crate) fn create_match(&self, request: &CreateMatch) -> Result<MatchInfo, LabError> {
        const CALL: &str = "POST /v1/matches";
        let body = serde_json::to_string(request).map_err(LabError::EncodeJson)?;
        let mut response = self
            .agent
            .post(&format!("{}/v1/matches", self.base))
            .header("content-type", "application/json")
            .send(&body)
            .map_err(failed(CALL))?;
        let status = response.status();
        let text = response.body_mut().read_to_string().map_err(failed(CALL))?;
        if status.as_u16() != 201 {
            return Err(LabError::Admin {
                call: CALL,
                message: format!("{status}: {text}"),
            });
        }
        serde_json::from_str(&text).map_err(|e| LabError::Admin {
            call: CALL,
            message: format!("{e}: {text}"),
        })
    }

    /// `GET /v1/matches`: every match the host holds (a finished one until
    /// it has lingered and is retired).
    pub(crate) fn matches(&self) -> Result<Vec<MatchInfo>, LabError> {
        self.get_json("GET /v1/matches", "/v1/matches")
    }

    /// `GET /v1/stats`.
    pub(crate) fn stats(&self) -> Result<HostStats, LabError> {
        self.get_json("GET /v1/stats", "/v1/stats")
    }

    /// `GET /v1/timeline`: the per-second points alone (the workers are not
    /// asked for anything, unlike `stats`).
    pub(crate) fn timeline(&self) -> Result<Vec<TimelinePoint>, LabError> {
        self.get_json("GET /v1/timeline", "/v1/timeline")
    }

    fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        call: &'static str,
        path: &str,
    ) -> Result<T, LabError> {
        let mut response = self
            .agent
            .get(&format!("{}{path}", self.base))
            .call()
            .map_err(failed(call))?;
        let text = response.body_mut().read_to_string().map_err(failed(call))?;
        serde_json::from_str(&text).map_err(|e| LabError::Admin {
            call,
            message: format!("{e}: {text}"),
        })
    }

    /// `POST /v1/stats/reset`: a new measuring window.
    pub(crate) fn reset_stats(&self) -> Result<(), LabError> {
        const CALL: &str = "POST /v1/stats/reset";
        let response = self
            .agent
            .post(&format!("{}/v1/stats/reset", self.base))
            .send("")
            .map_err(failed(CALL))?;
        if !response.status().is_success() {
            return Err(LabError::Admin {
                call: CALL,
                message: response.status().to_string(),
            });
        }
        Ok(())
    }

    /// Waits until `/healthz` answers.
    pub(crate) fn wait_healthy(&self, patience: Duration) -> Result<(), LabError> {
        let start = Instant::now();
        loop {
            if let Ok(r) = self.agent.get(&format!("{}/healthz", self.base)).call()
                && r.status().is_success()
            {
                return Ok(());
            }
            if start.elapsed() > patience {
                return Err(LabError::Admin {
                    call: "GET /healthz",
                    message: format!("no answer within {patience:?}"),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
