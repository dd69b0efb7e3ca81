//! The plan's arithmetic: from a target and measured figures to game servers,
//! gateway replicas, the store's load, the swarm that rehearses it, and the
//! autoscalers' settings. Each [`Number`] names the figures it came from; a number
//! whose figure is missing has no value.

use serde::Serialize;

use crate::plan::agreement::{Agreement, against};
use crate::plan::freshness::{Warning, warnings};
use crate::plan::inputs::{Need, PlanInputs};
use crate::plan::queue::SeatOrder;
use crate::plan::rehearsal::{Rehearsal, field};

/// The part of the service a number sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// Game-server hosts and Agones GameServers.
    GameServers,
    /// Gateway replicas.
    Gateway,
    /// The store's write load.
    Database,
    /// How long a player waits for a match.
    Matchmaking,
    /// The swarm that rehearses the target.
    Swarm,
    /// FleetAutoscaler and HPA settings.
    Autoscaling,
}

impl Section {
    /// How the report titles it.
    pub fn title(self) -> &'static str {
        match self {
            Section::GameServers => "game servers",
            Section::Gateway => "gateway",
            Section::Database => "database",
            Section::Matchmaking => "matchmaking",
            Section::Swarm => "swarm",
            Section::Autoscaling => "autoscaling",
        }
    }
}

/// One number of the plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Number {
    /// Where it belongs.
    pub section: Section,
    /// Its name in JSON, e.g. `gameservers`.
    pub key: &'static str,
    /// The value; `None` when a figure it needs is missing.
    pub value: Option<f64>,
    /// Its unit.
    pub unit: &'static str,
    /// How it is computed.
    pub formula: &'static str,
    /// The measured figures it came from (none: from the target alone).
    pub from: Vec<Need>,
    /// The rehearsal report's fields it came from (none: not from a rehearsal).
    pub rehearsal: Vec<&'static str>,
}

/// A capacity plan: its inputs, its numbers, and the warnings about its figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacityPlan {
    /// What it was computed from.
    pub inputs: PlanInputs,
    /// Its numbers, section by section.
    pub numbers: Vec<Number>,
    /// Missing, stale or foreign figures.
    pub warnings: Vec<Warning>,
    /// What the numbers assume, and limits they exceed.
    pub notes: Vec<String>,
    /// Built from a rehearsal: its numbers set against what the run measured.
    pub agreement: Vec<Agreement>,
}

impl CapacityPlan {
    /// The value of the number named `key`, when it has one.
    pub fn value(&self, key: &str) -> Option<f64> {
        self.numbers.iter().find(|n| n.key == key)?.value
    }
}

/// The numbers as they are worked out.
struct Sheet<'a> {
    inputs: &'a PlanInputs,
    section: Section,
    numbers: Vec<Number>,
}

impl Sheet<'_> {
    fn fig(&self, need: Need) -> Option<f64> {
        self.inputs.figures.value(need)
    }

    fn put(
        &mut self,
        key: &'static str,
        unit: &'static str,
        formula: &'static str,
        from: &[Need],
        value: Option<f64>,
    ) -> Option<f64> {
        self.numbers.push(Number {
            section: self.section,
            key,
            value,
            unit,
            formula,
            from: from.to_vec(),
            rehearsal: Vec::new(),
        });
        value
    }

    /// A number worked out from the rehearsal's report `fields`.
    fn put_rehearsed(
        &mut self,
        key: &'static str,
        unit: &'static str,
        formula: &'static str,
        fields: &[&'static str],
        value: f64,
    ) -> f64 {
        self.put(key, unit, formula, &[], Some(value));
        if let Some(n) = self.numbers.last_mut() {
            n.rehearsal = fields.to_vec();
        }
        value
    }
}

/// The report fields the queue model is worked from.
const QUEUE_FIELDS: &[&str] = &[
    field::PLAYERS,
    field::RAMP_UP,
    field::STAMPEDE_SHARE,
    field::STAMPEDE_WITHIN,
    field::HOLD,
    field::LOGIN_MEAN,
    field::BETWEEN_MATCHES,
    field::MATCHES_AT_ONCE,
    field::PLAYERS_PER_MATCH,
    field::MATCH_MINUTES,
];

/// The matchmaking and the hosts of a plan built from rehearsal `r`: its
/// queue worked out with its own hosts (freed seats to the tickets of the
/// matches a pass allocates at once alike, and to the oldest tickets), and
/// again with room for every match. Whether its hosts were short (players
/// waited for a match to end).
fn rehearsal_numbers(s: &mut Sheet, r: &Rehearsal, notes: &mut Vec<String>) -> bool {
    let d = &s.inputs.deployment;
    let capped = r.queue_model(d, Some(r.matches_at_once));
    let oldest = capped.run(SeatOrder::Oldest);
    let race = capped.run(SeatOrder::Race {
        matches: u64::from(d.parallel_allocations),
    });
    let open = r.queue_model(d, None).run(SeatOrder::Oldest);
    s.section = Section::Matchmaking;
    s.put_rehearsed(
        "seat_turnover_players_per_s",
        "players/s",
        "matches at once x players per match / (match length + half a host heartbeat): players a second the full hosts seat",
        &[field::MATCHES_AT_ONCE, field::PLAYERS_PER_MATCH, field::MATCH_MINUTES],
        capped.turnover_per_s().unwrap_or(0.0),
    );
    s.put_rehearsed(
        "matchmaking_wait_s",
        "s",
        "mean wait of every ticket (one still waiting at the end counts its wait so far), by the queue model: the rehearsal's arrivals, logins and time between matches; a pass every interval seats tickets on the hosts' room; a seat is free half a heartbeat after its match ends",
        QUEUE_FIELDS,
        oldest.wait_all_mean_s,
    );
    s.put_rehearsed(
        "matchmaking_queued_mean",
        "players",
        "players waiting for a match, mean over the run, by the queue model",
        QUEUE_FIELDS,
        oldest.queued_mean,
    );
    for (key, formula, value) in [
        (
            "matchmaking_wait_answered_oldest_s",
            "mean wait of the tickets answered before the end, freed seats to the oldest tickets",
            oldest.wait_mean_s,
        ),
        (
            "matchmaking_wait_answered_race_s",
            "the same, freed seats to the tickets of the oldest matches a pass forms (as many as it allocates at once) alike: a match is filled by rating, not age",
            race.wait_mean_s,
        ),
        (
            "matchmaking_wait_p50_oldest_s",
            "median wait of the tickets answered, freed seats to the oldest tickets",
            oldest.wait_p50_s,
        ),
        (
            "matchmaking_wait_p50_race_s",
            "the same, the oldest matches' tickets alike",
            race.wait_p50_s,
        ),
        (
            "matchmaking_wait_p99_oldest_s",
            "99th percentile wait of the tickets answered, freed seats to the oldest tickets (the queue's tail; matches of one length add none)",
            oldest.wait_p99_s,
        ),
        (
            "matchmaking_wait_p99_race_s",
            "the same, the oldest matches' tickets alike",
            race.wait_p99_s,
        ),
    ] {
        s.put_rehearsed(key, "s", formula, QUEUE_FIELDS, value);
    }
    s.put_rehearsed(
        "players_waiting_at_end",
        "players",
        "tickets the queue model still has waiting at the end",
        QUEUE_FIELDS,
        oldest.waiting_at_end as f64,
    );
    s.put_rehearsed(
        "matchmaking_wait_with_room_s",
        "s",
        "the mean wait of every ticket again with room on the hosts for every match (no capacity queue)",
        QUEUE_FIELDS,
        open.wait_all_mean_s,
    );
    s.section = Section::GameServers;
    let per_host = r.matches_per_host();
    let mut host_fields = QUEUE_FIELDS.to_vec();
    host_fields.push(field::HOSTS);
    let in_use = s.put_rehearsed(
        "hosts_in_use_peak",
        "hosts",
        "most matches running at once in the queue model / matches per host, in whole hosts",
        &host_fields,
        whole(oldest.matches_running_peak as f64 / per_host),
    );
    let needed = s.put_rehearsed(
        "hosts_needed",
        "hosts",
        "the same with room for every match: the hosts that leave nobody waiting for a seat",
        &host_fields,
        whole(open.matches_running_peak as f64 / per_host),
    );
    if oldest.capacity_bound {
        notes.push(format!(
            "the rehearsal's {} host(s) ({} matches at once) were short: players beyond them waited for a match to end ({:.1} s mean wait, {:.1} s with room for every match); its peak filled {in_use:.0} host(s), and {needed:.0} would seat everyone",
            r.hosts, r.matches_at_once, oldest.wait_all_mean_s, open.wait_all_mean_s
        ));
        notes.push(
            "a freed seat does not go to the oldest tickets alone (a pass anchors each match on the oldest ticket and fills it with the tickets nearest its rating): the answered tickets' waits depend on who is seated, and are shown from the oldest matches' tickets seated alike to the oldest tickets first; the mean wait of every ticket and the queue are the same whoever is seated".into(),
        );
    }
    oldest.capacity_bound
}

/// Whole units: a fraction of a pod is a pod.
fn whole(x: f64) -> f64 {
    (x - 1e-9).ceil().max(0.0)
}

/// The plan for `inputs`.
pub fn plan(inputs: PlanInputs) -> CapacityPlan {
    use Need::*;
    let t = &inputs.target;
    let d = &inputs.deployment;
    let free = 1.0 - d.cpu_headroom;
    let ccu = t.ccu as f64;
    let players = f64::from(t.players_per_match);
    let mut s = Sheet {
        inputs: &inputs,
        section: Section::GameServers,
        numbers: Vec::new(),
    };
    let mut notes = Vec::new();

    let matches = s.put(
        "matches",
        "matches",
        "CCU / players per match",
        &[],
        Some(whole(ccu / players)),
    );
    let matches = matches.unwrap_or(0.0);
    let gpc = s.fig(GamesPerCore);
    s.put(
        "game_cores",
        "cores",
        "matches / games per core (the sweep's, within budget with its CPU headroom)",
        &[GamesPerCore],
        gpc.map(|g| matches / g),
    );
    let per_gs = s.put(
        "matches_per_gameserver",
        "matches",
        "floor(games per core x cores per GameServer), at least 1",
        &[GamesPerCore],
        gpc.map(|g| (g * f64::from(d.gameserver_cores)).floor().max(1.0)),
    );
    let gameservers = s.put(
        "gameservers",
        "GameServers",
        "matches / matches per GameServer",
        &[GamesPerCore],
        per_gs.map(|m| whole(matches / m)),
    );
    s.put(
        "host_cores",
        "cores",
        "GameServers x cores per GameServer",
        &[GamesPerCore],
        gameservers.map(|g| g * f64::from(d.gameserver_cores)),
    );

    s.section = Section::Gateway;
    let rps = ccu * t.requests_per_player_min / 60.0;
    s.put(
        "requests_per_s",
        "req/s",
        "CCU x requests per player per minute / 60",
        &[],
        Some(rps),
    );
    let rps_core = s.fig(GatewayRequestsPerCore);
    let login_core = s.fig(LoginsPerCore);
    let cores = s.put(
        "gateway_cores",
        "cores",
        "(requests/s / requests per core + logins/s / logins per core) / (1 - headroom)",
        &[GatewayRequestsPerCore, LoginsPerCore],
        rps_core
            .zip(login_core)
            .map(|(r, l)| (rps / r + t.login_rate_per_s / l) / free),
    );
    let ws = s.fig(WebSocketsPerReplica);
    let by_cpu = cores.map(|c| whole(c / f64::from(d.gateway_cores)));
    let by_ws = ws.map(|w| whole(ccu / w));
    s.put(
        "gateway_replicas_for_cpu",
        "replicas",
        "gateway cores / cores per replica",
        &[GatewayRequestsPerCore, LoginsPerCore],
        by_cpu,
    );
    s.put(
        "gateway_replicas_for_websockets",
        "replicas",
        "CCU (one push WebSocket each) / WebSockets one replica holds",
        &[WebSocketsPerReplica],
        by_ws,
    );
    let replicas = s.put(
        "gateway_replicas",
        "replicas",
        "the larger of the two",
        &[GatewayRequestsPerCore, LoginsPerCore, WebSocketsPerReplica],
        by_cpu.zip(by_ws).map(|(a, b)| a.max(b)),
    );
    s.put(
        "logins_per_replica",
        "logins/s",
        "peak logins/s / gateway replicas",
        &[GatewayRequestsPerCore, LoginsPerCore, WebSocketsPerReplica],
        replicas.map(|r| t.login_rate_per_s / r),
    );
    s.put(
        "websockets_per_replica",
        "sockets",
        "CCU / gateway replicas",
        &[GatewayRequestsPerCore, LoginsPerCore, WebSocketsPerReplica],
        replicas.map(|r| ccu / r),
    );

    s.section = Section::Database;
    let results = matches / (t.match_minutes * 60.0);
    s.put(
        "results_per_s",
        "results/s",
        "matches / match length (each with its players' ledger rows)",
        &[],
        Some(results),
    );
    let purchases = ccu * t.purchases_per_player_min / 60.0;
    s.put(
        "purchases_per_s",
        "ledger writes/s",
        "CCU x purchases per player per minute / 60",
        &[],
        Some(purchases),
    );
    let claims = (results * players).max(t.login_rate_per_s);
    s.put(
        "matchmaking_claims_per_s",
        "players/s",
        "the larger of players re-queuing (results/s x players) and peak logins/s",
        &[],
        Some(claims),
    );
    let mm_capacity = s.fig(MatchmakingPlayersPerS);
    let shares = [
        (
            s.put(
                "store_results_share",
                "of capacity",
                "results/s / the store's batched results/s",
                &[StoreResultsPerS],
                s.fig(StoreResultsPerS).map(|c| results / c),
            ),
            StoreResultsPerS,
        ),
        (
            s.put(
                "store_purchases_share",
                "of capacity",
                "purchases/s / the store's purchases/s",
                &[StorePurchasesPerS],
                s.fig(StorePurchasesPerS).map(|c| purchases / c),
            ),
            StorePurchasesPerS,
        ),
        (
            s.put(
                "store_matchmaking_share",
                "of capacity",
                "matchmaking claims/s / the shared queue's players/s",
                &[MatchmakingPlayersPerS],
                mm_capacity.map(|c| claims / c),
            ),
            MatchmakingPlayersPerS,
        ),
    ];
    let busy = shares
        .iter()
        .try_fold(0.0, |sum, (share, _)| share.map(|v| sum + v));
    let from: Vec<Need> = shares.iter().map(|(_, n)| *n).collect();
    s.put(
        "store_busy",
        "of capacity",
        "the three shares summed (each was measured alone; they share the store)",
        &from,
        busy,
    );
    if let Some(b) = busy
        && b > free
    {
        notes.push(format!(
            "the store would be {:.0}% busy, over the {:.0}% the headroom allows: shard it, batch more, or measure a larger store",
            b * 100.0,
            free * 100.0
        ));
    }

    s.section = Section::Matchmaking;
    let mut hosts_short = false;
    match &inputs.rehearsal {
        Some(r) => hosts_short = rehearsal_numbers(&mut s, r, &mut notes),
        None => {
            s.put(
                "matchmaking_wait_s",
                "s",
                "mean wait for a match: half a matchmaking pass + filling a match at the claims rate (hosts ready: the fleet buffer holds)",
                &[],
                Some(d.matchmaking_pass_s / 2.0 + (players - 1.0) / (2.0 * claims)),
            );
        }
    }
    if let Some(c) = mm_capacity
        && claims >= c
    {
        notes.push(format!(
            "matchmaking claims ({claims:.0} players/s) reach the shared queue's measured {c:.0} players/s: the wait grows without bound"
        ));
    }

    s.section = Section::Swarm;
    let bots = matches * players;
    s.put(
        "match_bots",
        "bots",
        "matches x players per match",
        &[],
        Some(bots),
    );
    let bot_cores = s.put(
        "bot_cores",
        "cores",
        "match bots / match bots per core",
        &[MatchBotsPerCore],
        s.fig(MatchBotsPerCore).map(|b| bots / b),
    );
    let meta_cores = s.put(
        "meta_client_cores",
        "cores",
        "requests/s / the swarm's requests per core",
        &[SwarmRequestsPerCore],
        s.fig(SwarmRequestsPerCore).map(|r| rps / r),
    );
    let swarm_cores = s.put(
        "swarm_cores",
        "cores",
        "(bot cores + meta-client cores) / (1 - headroom)",
        &[MatchBotsPerCore, SwarmRequestsPerCore],
        bot_cores.zip(meta_cores).map(|(b, m)| (b + m) / free),
    );
    s.put(
        "swarm_agents",
        "agents",
        "swarm cores / cores per agent",
        &[MatchBotsPerCore, SwarmRequestsPerCore],
        swarm_cores.map(|c| whole(c / f64::from(d.agent_cores))),
    );

    s.section = Section::Autoscaling;
    let formed = t.login_rate_per_s / players;
    s.put(
        "matches_formed_per_s",
        "matches/s",
        "peak logins/s / players per match",
        &[],
        Some(formed),
    );
    let react = s.put(
        "fleet_react_s",
        "s",
        "autoscaler sync interval + GameServer start to Ready",
        &[GameServerStartMs],
        s.fig(GameServerStartMs)
            .map(|ms| d.autoscaler_sync_s + ms / 1000.0),
    );
    let buffer = s.put(
        "fleet_buffer_matches",
        "matches",
        "FleetAutoscaler counter bufferSize: matches formed during one reaction",
        &[GameServerStartMs],
        react.map(|r| whole(formed * r)),
    );
    s.put(
        "fleet_counter_capacity",
        "matches",
        "the `matches` Counter's capacity per GameServer: matches per GameServer",
        &[GamesPerCore],
        per_gs,
    );
    s.put(
        "fleet_min_capacity",
        "matches",
        "FleetAutoscaler minCapacity: the buffer in whole GameServers",
        &[GameServerStartMs, GamesPerCore],
        buffer.zip(per_gs).map(|(b, m)| whole(b / m) * m),
    );
    s.put(
        "fleet_max_capacity",
        "matches",
        "FleetAutoscaler maxCapacity: GameServers x matches each + the buffer",
        &[GamesPerCore, GameServerStartMs],
        gameservers
            .zip(per_gs)
            .zip(buffer)
            .map(|((g, m), b)| g * m + b),
    );
    s.put(
        "hpa_min_replicas",
        "replicas",
        "replicas the login peak alone needs: logins/s / logins per core / (1 - headroom) / cores per replica",
        &[LoginsPerCore],
        login_core.map(|l| whole(t.login_rate_per_s / l / free / f64::from(d.gateway_cores)).max(1.0)),
    );
    s.put(
        "hpa_max_replicas",
        "replicas",
        "gateway replicas at the target",
        &[GatewayRequestsPerCore, LoginsPerCore, WebSocketsPerReplica],
        replicas,
    );
    s.put(
        "hpa_target_cpu_pct",
        "%",
        "100 x (1 - headroom)",
        &[],
        Some(100.0 * free),
    );
    s.put(
        "hpa_scale_up_pods_per_min",
        "replicas/min",
        "a minute of the login ramp: the larger of its requests' cores and its WebSockets, in replicas",
        &[GatewayRequestsPerCore, WebSocketsPerReplica],
        rps_core.zip(ws).map(|(r, w)| {
            let joined = t.login_rate_per_s * 60.0;
            let by_cpu = joined * t.requests_per_player_min / 60.0 / r / free / f64::from(d.gateway_cores);
            whole(by_cpu.max(joined / w))
        }),
    );

    notes.push(format!(
        "every player is counted in a match and holding a WebSocket (an upper bound); matches last {} min",
        t.match_minutes
    ));
    notes.push(
        "GameServer start-up is the process's start to Ready; image pull and pod scheduling come on top, and no gateway start-up is measured"
            .into(),
    );
    let numbers = s.numbers;
    let warnings = warnings(&inputs);
    let agreement = inputs
        .rehearsal
        .as_ref()
        .map(|r| against(&numbers, r, &inputs.deployment, hosts_short))
        .unwrap_or_default();
    CapacityPlan {
        inputs,
        numbers,
        warnings,
        notes,
        agreement,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::fixtures::{inputs, rehearsal_report};

    fn all_figures() -> Vec<(Need, f64)> {
        vec![
            (Need::GamesPerCore, 80.0),
            (Need::GatewayRequestsPerCore, 3000.0),
            (Need::LoginsPerCore, 4000.0),
            (Need::WebSocketsPerReplica, 19_000.0),
            (Need::StoreResultsPerS, 1000.0),
            (Need::StorePurchasesPerS, 1000.0),
            (Need::MatchmakingPlayersPerS, 17_000.0),
            (Need::MatchBotsPerCore, 500.0),
            (Need::SwarmRequestsPerCore, 75_000.0),
            (Need::GameServerStartMs, 500.0),
        ]
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-6 * b.abs().max(1.0))
    }

    #[test]
    fn the_plan_scales_the_target_by_the_figures() {
        let p = plan(inputs(&all_figures()));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        // 200,000 players in 10-player matches at 80 games per core, 2 cores a GameServer.
        assert_eq!(p.value("matches"), Some(20_000.0));
        assert!(close(p.value("game_cores"), 250.0));
        assert_eq!(p.value("matches_per_gameserver"), Some(160.0));
        assert_eq!(p.value("gameservers"), Some(125.0));
        assert_eq!(p.value("host_cores"), Some(250.0));
        // 20,000 req/s at 3,000 per core + 2,000 logins/s at 4,000 per core, 10% free.
        assert!(close(p.value("requests_per_s"), 20_000.0));
        assert!(close(
            p.value("gateway_cores"),
            (20_000.0 / 3000.0 + 0.5) / 0.9
        ));
        assert_eq!(p.value("gateway_replicas_for_cpu"), Some(8.0));
        assert_eq!(p.value("gateway_replicas_for_websockets"), Some(11.0));
        assert_eq!(p.value("gateway_replicas"), Some(11.0));
        // 20,000 matches of 30 minutes: 11.1 results/s; 1,667 purchases/s.
        assert!(close(p.value("results_per_s"), 20_000.0 / 1800.0));
        assert!(close(p.value("purchases_per_s"), 200_000.0 * 0.5 / 60.0));
        assert!(
            close(p.value("matchmaking_claims_per_s"), 2000.0),
            "logins dominate"
        );
        let busy = 20_000.0 / 1800.0 / 1000.0 + 200_000.0 * 0.5 / 60.0 / 1000.0 + 2000.0 / 17_000.0;
        assert!(close(p.value("store_busy"), busy));
        assert!(p.notes[0].contains("store would be"), "{:?}", p.notes);
        // 200,000 bots at 500 per core + 20,000 req/s at 75,000 per core, 10% free, 2 cores an agent.
        assert!(close(
            p.value("swarm_cores"),
            (400.0 + 20_000.0 / 75_000.0) / 0.9
        ));
        assert_eq!(p.value("swarm_agents"), Some(223.0));
        // 200 matches formed a second for 10 s + 0.5 s.
        assert_eq!(p.value("fleet_buffer_matches"), Some(2100.0));
        assert_eq!(p.value("fleet_min_capacity"), Some(14.0 * 160.0));
        assert_eq!(p.value("fleet_max_capacity"), Some(125.0 * 160.0 + 2100.0));
        assert_eq!(p.value("hpa_min_replicas"), Some(1.0));
        assert_eq!(p.value("hpa_max_replicas"), Some(11.0));
        assert!(close(p.value("hpa_target_cpu_pct"), 90.0));
        // A minute of 2,000 logins/s: 120,000 sockets = 7 replicas; 12,000 req/s = 5.
        assert_eq!(p.value("hpa_scale_up_pods_per_min"), Some(7.0));
    }

    #[test]
    fn a_missing_figure_leaves_its_numbers_empty_and_says_so() {
        let figures: Vec<_> = all_figures()
            .into_iter()
            .filter(|(n, _)| *n != Need::WebSocketsPerReplica)
            .collect();
        let p = plan(inputs(&figures));
        assert_eq!(p.value("gateway_replicas"), None);
        assert_eq!(p.value("gateway_replicas_for_cpu"), Some(8.0));
        assert_eq!(p.value("hpa_max_replicas"), None);
        assert_eq!(p.value("gameservers"), Some(125.0));
        assert_eq!(p.warnings.len(), 1);
        assert!(p.warnings[0].message.contains("ws_hold"));
        for n in &p.numbers {
            assert_eq!(
                n.value.is_none(),
                n.from.contains(&Need::WebSocketsPerReplica),
                "{}",
                n.key
            );
        }
    }

    #[test]
    fn a_plan_from_a_rehearsal_works_out_its_queue_with_its_hosts() {
        let r = Rehearsal::from_json(&rehearsal_report().to_string(), "run.json").unwrap();
        let mut i = inputs(&all_figures());
        i.target = r.target(128);
        i.rehearsal = Some(r);
        let p = plan(i);
        // 4 matches of 10 players, 12 s each + half a 2 s heartbeat.
        assert!(close(p.value("seat_turnover_players_per_s"), 40.0 / 13.0));
        let wait = p.value("matchmaking_wait_s").unwrap();
        let with_room = p.value("matchmaking_wait_with_room_s").unwrap();
        assert!(wait > with_room + 10.0, "{wait} vs {with_room}");
        let oldest = p.value("matchmaking_wait_answered_oldest_s").unwrap();
        let race = p.value("matchmaking_wait_answered_race_s").unwrap();
        assert!(race < oldest, "{race} vs {oldest}");
        assert!(p.value("matchmaking_wait_p99_race_s").unwrap() >= race);
        assert!(p.value("matchmaking_queued_mean").unwrap() > 50.0);
        assert_eq!(p.value("hosts_in_use_peak"), Some(2.0));
        // 200 players are at most 20 matches: 10 hosts of 2.
        let needed = p.value("hosts_needed").unwrap();
        assert!(needed > 2.0 && needed <= 10.0, "{needed}");
        assert!(
            p.notes.iter().any(|n| n.contains("were short")),
            "{:?}",
            p.notes
        );
        assert!(
            p.notes.iter().any(|n| n.contains("oldest tickets alone")),
            "{:?}",
            p.notes
        );
        let n = p
            .numbers
            .iter()
            .find(|n| n.key == "matchmaking_wait_s")
            .unwrap();
        assert!(n.rehearsal.contains(&"launch.capacity.match_minutes"));
        let rows: Vec<_> = p.agreement.iter().map(|a| a.key).collect();
        assert_eq!(
            rows,
            [
                "matchmaking_wait_s",
                "matchmaking_queued_mean",
                "matchmaking_wait_answered_s",
                "matchmaking_wait_p50_s",
                "matchmaking_wait_p99_s",
                "hosts_in_use_peak",
                "hosts_needed"
            ]
        );
        assert_eq!(p.agreement[2].plan_low, race);
        assert_eq!(p.agreement[2].plan_high, oldest);
        let hosts = &p.agreement[5];
        assert!(hosts.agrees && hosts.why_not.is_none(), "{hosts:?}");
        assert!(
            p.agreement[6]
                .why_not
                .as_deref()
                .unwrap()
                .contains("had 2 host(s)")
        );
        let text = p.render_table();
        assert!(text.contains("plan against the rehearsal"), "{text}");
        assert!(
            text.contains("rehearsal: run.json (hightick stack --scenario"),
            "{text}"
        );
        assert!(p.render_html().unwrap().contains("Against the rehearsal"));
    }

    #[test]
    fn whole_units_round_up_but_not_through_float_noise() {
        assert_eq!(whole(2.0), 2.0);
        assert_eq!(whole(2.0000000001), 2.0);
        assert_eq!(whole(2.01), 3.0);
        assert_eq!(whole(0.0), 0.0);
    }
}
