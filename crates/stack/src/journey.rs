//! The players' journey as a swarm scenario: log in through the login queue,
//! queue for a match, play it over UDP with the game's bot, buy something
//! with what the match paid (out of coins is an answer, not a failure),
//! and queue again, until the run's end.

use std::time::Duration;

use hightick_swarm::scenario::duration::format_duration;

/// What the scenario is made of.
#[derive(Debug, Clone)]
pub(crate) struct Journey<'a> {
    /// The gateways' base URLs (player i starts on gateway i mod n).
    pub gateways: &'a [String],
    /// Players.
    pub users: u64,
    /// Ramp-up.
    pub ramp_up: Duration,
    /// Hold after the ramp-up.
    pub hold: Duration,
    /// The mode queued for.
    pub mode: &'a str,
    /// The mode's match settings (what the gateway sends to hosts), as a
    /// TOML inline table, for the bots.
    pub settings_toml: &'a str,
    /// A shop item to buy after each match.
    pub item: &'a str,
    /// Keep-alive HTTP connections the players share.
    pub connections: usize,
}

impl Journey<'_> {
    /// The scenario file's text.
    pub(crate) fn scenario(&self) -> String {
        format!(
            r#"name = "stack journey"
model = "closed"
users = {users}
ramp_up = "{ramp}"
duration = "{hold}"

[targets]
gateway = {gateway}

[http]
connections = {connections}
timeout = "30s"

[retry]
attempts = 4
backoff = "200ms"
max_backoff = "5s"
on_status = [429, 502, 503, 504]

[matches]
mode = "{mode}"
settings = {settings}

[[setup]]
name = "login"
method = "POST"
url = "/v1/auth/guest"
json = {{ device_id = "stack-{{{{user}}}}" }}
expect_status = 200
wait_while_status = [202]
wait_capture = {{ ticket = "/ticket" }}
poll_url = "/v1/auth/tickets/{{{{ticket}}}}?wait_ms=2000"
wait_interval = "100ms"
max_wait = "10m"
capture = {{ token = "/session_token" }}

[[behaviour]]
name = "journey"
[[behaviour.step]]
name = "matchmake"
method = "POST"
url = "/v1/matchmaking/tickets"
headers = {{ authorization = "Bearer {{{{token}}}}" }}
json = {{ mode = "{mode}" }}
expect_status = 200
wait_while_status = [202]
wait_capture = {{ mm_ticket = "/ticket" }}
poll_url = "/v1/matchmaking/tickets/{{{{mm_ticket}}}}?wait_ms=2000"
wait_interval = "100ms"
max_wait = "10m"
capture = {{ connect_token = "/match/connect_token" }}
think = "0s"
[[behaviour.step]]
name = "play"
play_match = {{ token = "{{{{connect_token}}}}", duration = "30m" }}
think = "0s"
[[behaviour.step]]
name = "purchase"
method = "POST"
url = "/v1/me/purchases"
headers = {{ authorization = "Bearer {{{{token}}}}" }}
json = {{ item_id = "{item}", quantity = 1, idempotency_key = "stack-{{{{user}}}}-{{{{iteration}}}}" }}
expect_status = [200, 409]
think = {{ uniform = ["1s", "3s"] }}
"#,
            users = self.users,
            ramp = format_duration(self.ramp_up),
            hold = format_duration(self.hold),
            gateway = self.gateway_toml(),
            connections = self.connections,
            mode = self.mode,
            settings = self.settings_toml,
            item = self.item,
        )
    }
}

impl Journey<'_> {
    /// The `[targets] gateway` value: one URL as a string (what every swarm
    /// reads), more as an array (the swarm spreads players over them and
    /// fails over between them).
    fn gateway_toml(&self) -> String {
        match self.gateways {
            [one] => format!("{one:?}"),
            many => {
                let urls: Vec<String> = many.iter().map(|u| format!("{u:?}")).collect();
                format!("[{}]", urls.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_journey_is_a_valid_scenario_with_its_steps() {
        let text = Journey {
            gateways: &["http://127.0.0.1:8080".to_owned()],
            users: 20,
            ramp_up: Duration::from_secs(5),
            hold: Duration::from_secs(60),
            mode: "5v5",
            settings_toml: "{ rounds_to_win = 2 }",
            item: "xp.boost",
            connections: 16,
        }
        .scenario();
        let scenario = hightick_swarm::Scenario::parse(&text, "journey").unwrap();
        assert_eq!(scenario.users, 20);
        assert_eq!(
            scenario.step_names,
            ["login", "matchmake", "play", "purchase"],
            "{text}"
        );
        assert!(
            text.contains("gateway = \"http://127.0.0.1:8080\"\n"),
            "{text}"
        );
    }

    #[test]
    fn two_gateways_are_an_array() {
        let urls = [
            "http://127.0.0.1:1".to_owned(),
            "http://127.0.0.1:2".to_owned(),
        ];
        let journey = Journey {
            gateways: &urls,
            users: 4,
            ramp_up: Duration::from_secs(1),
            hold: Duration::from_secs(1),
            mode: "duel",
            settings_toml: "{}",
            item: "xp.boost",
            connections: 4,
        };
        assert!(
            journey
                .scenario()
                .contains(r#"gateway = ["http://127.0.0.1:1", "http://127.0.0.1:2"]"#)
        );
    }
}
