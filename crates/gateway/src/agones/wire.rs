//! The allocator's REST documents, typed: [`AllocationRequest`] (what the
//! gateway sends to `POST /gameserverallocation`) and
//! [`AllocationResponse`] (what comes back), after Agones'
//! `proto/allocation/allocation.proto` in its JSON mapping (field names in
//! lowerCamelCase, enums by name, int64 values as strings or numbers).
//! Only the fields the gateway uses are here; unknown ones are ignored.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

use serde::{Deserialize, Deserializer, Serialize};

use hightick_host_api::agones::Allocation;

use super::{AgonesConfig, MATCHES_COUNTER, port_name};
use crate::hosts::MatchRequest;

/// The allocator's REST path.
pub const ALLOCATE_PATH: &str = "/gameserverallocation";

/// `AllocationRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocationRequest {
    /// The Fleet's namespace.
    pub namespace: String,
    /// Tried in order until one finds a GameServer.
    pub game_server_selectors: Vec<GameServerSelector>,
    /// `Packed` (fill nodes first) or `Distributed`.
    pub scheduling: String,
    /// Which of the matching GameServers first.
    pub priorities: Vec<Priority>,
    /// What the allocation does to Counters.
    pub counters: BTreeMap<String, CounterAction>,
    /// Labels and annotations the allocation writes on the GameServer.
    pub metadata: MetaPatch,
}

/// `GameServerSelector`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GameServerSelector {
    /// Labels the GameServer must carry.
    pub match_labels: BTreeMap<String, String>,
    /// `READY` or `ALLOCATED`.
    pub game_server_state: String,
    /// Counter conditions.
    pub counters: BTreeMap<String, CounterSelector>,
}

/// `CounterSelector`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CounterSelector {
    /// Room (capacity - count) the Counter must have at least.
    pub min_available: i64,
}

/// `Priority`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Priority {
    /// `Counter` or `List`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The Counter's name.
    pub key: String,
    /// `Ascending`: least room first (packs matches).
    pub order: String,
}

/// `CounterAction`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CounterAction {
    /// `Increment` or `Decrement`.
    pub action: String,
    /// By how much.
    pub amount: i64,
}

/// `MetaPatch`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MetaPatch {
    /// Labels to add.
    pub labels: BTreeMap<String, String>,
    /// Annotations to add.
    pub annotations: BTreeMap<String, String>,
}

impl AllocationRequest {
    /// The request for `request`'s match on `worker` of a GameServer of the
    /// configured Fleet (see the [`crate::agones`] module docs).
    pub fn for_match(config: &AgonesConfig, request: MatchRequest<'_>, worker: usize) -> Self {
        let mut match_labels = config.match_labels.clone();
        match_labels.insert("agones.dev/fleet".to_owned(), config.fleet.clone());
        let room = BTreeMap::from([(
            MATCHES_COUNTER.to_owned(),
            CounterSelector { min_available: 1 },
        )]);
        let selector = |state: &str| GameServerSelector {
            match_labels: match_labels.clone(),
            game_server_state: state.to_owned(),
            counters: room.clone(),
        };
        let annotations = Allocation {
            request: request.create_match(),
            worker: Some(worker),
        }
        .annotations();
        Self {
            namespace: config.namespace.clone(),
            game_server_selectors: vec![selector("ALLOCATED"), selector("READY")],
            scheduling: "Packed".to_owned(),
            priorities: vec![Priority {
                kind: "Counter".to_owned(),
                key: MATCHES_COUNTER.to_owned(),
                order: "Ascending".to_owned(),
            }],
            counters: BTreeMap::from([(
                MATCHES_COUNTER.to_owned(),
                CounterAction {
                    action: "Increment".to_owned(),
                    amount: 1,
                },
            )]),
            metadata: MetaPatch {
                labels: BTreeMap::new(),
                annotations,
            },
        }
    }
}

/// `AllocationResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocationResponse {
    /// The GameServer allocated.
    pub game_server_name: String,
    /// Its ports, by name.
    #[serde(default)]
    pub ports: Vec<GameServerPort>,
    /// Its address (the node's).
    #[serde(default)]
    pub address: String,
    /// Its node.
    #[serde(default)]
    pub node_name: String,
    /// Its Counters after the allocation.
    #[serde(default)]
    pub counters: BTreeMap<String, CounterStatus>,
}

/// `GameServerStatusPort`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct GameServerPort {
    /// The port's name in the GameServer spec.
    pub name: String,
    /// The port clients reach.
    pub port: u16,
}

/// `CounterStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct CounterStatus {
    /// Its count.
    #[serde(default, deserialize_with = "int64")]
    pub count: Option<i64>,
    /// Its capacity.
    #[serde(default, deserialize_with = "int64")]
    pub capacity: Option<i64>,
}

/// An int64 in the JSON mapping: a string of digits, or a number.
fn int64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Int64 {
        Text(String),
        Number(i64),
    }
    match Option::<Int64>::deserialize(d)? {
        None => Ok(None),
        Some(Int64::Number(n)) => Ok(Some(n)),
        Some(Int64::Text(s)) => s.parse().map(Some).map_err(serde::de::Error::custom),
    }
}

impl AllocationResponse {
    /// Where clients connect for the match on `worker`: the address and
    /// the port named `game-<worker>`.
    pub fn game_address(&self, worker: usize) -> Result<SocketAddr, String> {
        let ip: IpAddr = self.address.parse().map_err(|_| {
            format!(
                "GameServer {}: address `{}` is no IP address",
                self.game_server_name, self.address
            )
        })?;
        let name = port_name(worker);
        let port = self.ports.iter().find(|p| p.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.ports.iter().map(|p| p.name.as_str()).collect();
            format!(
                "GameServer {}: no port `{name}` (it has {}): agones.game_ports must match its ports",
                self.game_server_name,
                names.join(", ")
            )
        })?;
        Ok(SocketAddr::new(ip, port.port))
    }
}

/// The allocator's error body (`{"code", "message", "details"}`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ErrorBody {
    /// The gRPC status code.
    #[serde(default)]
    pub code: i32,
    /// What went wrong.
    #[serde(default)]
    pub message: String,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// An answer as the allocator's REST endpoint gives it (the JSON
    /// mapping of `AllocationResponse`: int64 Counter values as strings).
    const ANSWER: &str = r#"{
      "gameServerName": "hightick-fleet-7mxkq-x2x8p",
      "ports": [{"name": "game-0", "port": 7061}, {"name": "game-1", "port": 7062}],
      "address": "34.94.118.237",
      "addresses": [{"type": "ExternalIP", "address": "34.94.118.237"},
                    {"type": "InternalIP", "address": "10.128.0.4"}],
      "nodeName": "gke-hightick-pool-8b0c1f-x2x8",
      "source": "local",
      "metadata": {"labels": {"agones.dev/fleet": "hightick"},
                   "annotations": {"hightick.dev/match-id": "m-1"}},
      "counters": {"matches": {"count": "3", "capacity": "8"}}
    }"#;

    fn config() -> AgonesConfig {
        AgonesConfig {
            allocator: "https://allocator:443".to_owned(),
            namespace: "games".to_owned(),
            fleet: "hightick".to_owned(),
            match_labels: BTreeMap::from([("region".to_owned(), "eu".to_owned())]),
            game_ports: 2,
            client_cert_file: "c".into(),
            client_key_file: "k".into(),
            ca_file: "ca".into(),
            timeout_s: 5,
        }
    }

    #[test]
    fn a_published_answer_is_read() {
        let answer: AllocationResponse = serde_json::from_str(ANSWER).unwrap();
        assert_eq!(answer.game_server_name, "hightick-fleet-7mxkq-x2x8p");
        assert_eq!(
            answer.game_address(1).unwrap(),
            "34.94.118.237:7062".parse().unwrap()
        );
        assert_eq!(answer.counters["matches"].count, Some(3));
        assert_eq!(answer.counters["matches"].capacity, Some(8));
        // Numbers are read as well as strings.
        let numbers: CounterStatus =
            serde_json::from_value(json!({"count": 2, "capacity": "4"})).unwrap();
        assert_eq!((numbers.count, numbers.capacity), (Some(2), Some(4)));
    }

    #[test]
    fn a_missing_port_or_a_hostname_is_an_error_that_says_so() {
        let answer: AllocationResponse = serde_json::from_str(ANSWER).unwrap();
        let err = answer.game_address(2).unwrap_err();
        assert!(
            err.contains("game-2") && err.contains("game_ports"),
            "{err}"
        );
        let named = AllocationResponse {
            address: "node-1.example".to_owned(),
            ..answer
        };
        assert!(named.game_address(0).unwrap_err().contains("no IP"));
    }

    #[test]
    fn the_request_is_the_documented_shape() {
        let settings = json!({"rounds_to_win": 1});
        let request = MatchRequest {
            match_id: "m-1",
            mode: "5v5",
            roster: &[11, 12],
            settings: settings.as_object().unwrap(),
        };
        let body =
            serde_json::to_value(AllocationRequest::for_match(&config(), request, 1)).unwrap();
        let labels = json!({"agones.dev/fleet": "hightick", "region": "eu"});
        let room = json!({"matches": {"minAvailable": 1}});
        assert_eq!(
            body,
            json!({
                "namespace": "games",
                "gameServerSelectors": [
                    {"matchLabels": labels, "gameServerState": "ALLOCATED", "counters": room},
                    {"matchLabels": labels, "gameServerState": "READY", "counters": room},
                ],
                "scheduling": "Packed",
                "priorities": [{"type": "Counter", "key": "matches", "order": "Ascending"}],
                "counters": {"matches": {"action": "Increment", "amount": 1}},
                "metadata": {
                    "labels": {},
                    "annotations": {
                        "hightick.dev/match-id": "m-1",
                        "hightick.dev/mode": "5v5",
                        "hightick.dev/roster": "11,12",
                        "hightick.dev/worker": "1",
                        "hightick.dev/settings": "{\"rounds_to_win\":1}",
                    },
                },
            })
        );
    }
}
