//! Test fixtures of the plan's modules: the target (200,000 players of
//! 5v5 at 128 Hz, 2,000 logins/s, 6 requests and 0.5 purchases per player per
//! minute, 30-minute matches, PostgreSQL), a machine, measured figures, and a
//! small rehearsal's report.

use crate::plan::inputs::{
    Deployment, Figures, Machine, Measured, Need, PlanInputs, Source, StoreBackend, Target,
};

/// The target.
pub(crate) fn target() -> Target {
    Target {
        ccu: 200_000,
        mode: "5v5".into(),
        players_per_match: 10,
        tick_rate_hz: 128,
        login_rate_per_s: 2000.0,
        requests_per_player_min: 6.0,
        purchases_per_player_min: 0.5,
        match_minutes: 30.0,
        store: StoreBackend::Postgres,
    }
}

/// A 2-CPU machine of CPU model `cpu`.
pub(crate) fn machine(cpu: &str) -> Machine {
    Machine {
        cpu_model: cpu.into(),
        cores: 2,
    }
}

/// `value`, measured at `commit` on a `cpu` machine by a release build or a bench.
pub(crate) fn measured(value: f64, commit: Option<&str>, cpu: &str) -> Measured {
    Measured {
        value,
        unit: "u".into(),
        source: Source {
            command: "c".into(),
            figure: "f".into(),
            run_id: Some(1),
            commit: commit.map(Into::into),
            machine: machine(cpu),
            build_profile: None,
            recorded_at_ms: 0,
        },
    }
}

/// The target's plan inputs on an `EPYC` machine at commit `abcdef0`, with
/// `figures` measured there.
pub(crate) fn inputs(figures: &[(Need, f64)]) -> PlanInputs {
    let mut f = Figures::default();
    for (need, value) in figures {
        f.insert(*need, measured(*value, Some("abcdef0"), "EPYC"));
    }
    PlanInputs {
        target: target(),
        deployment: Deployment::default(),
        figures: f,
        commit: Some("abcdef0".into()),
        machine: machine("EPYC"),
        rehearsal: None,
    }
}

/// A `hightick stack --json` report of a small rehearsal, the fields a plan
/// reads: 200 players (half within a second, the rest over 5 s), held 60 s,
/// 2 hosts of 2 matches, 10 players a match of 12 s, 4.25 s between matches.
pub(crate) fn rehearsal_report() -> serde_json::Value {
    serde_json::json!({
        "game": "arena", "mode": "5v5", "backend": "sqlite", "players": 200,
        "hosts": 2, "gateways": 1, "elapsed_s": 65.0, "requests": 1300,
        "login": { "p50_ms": 40.0, "p99_ms": 90.0, "mean_ms": 50.0 },
        "match_found": { "p50_ms": 30000.0, "p99_ms": 60000.0, "mean_ms": 28000.0 },
        "launch": {
            "scenario": "launch.toml",
            "arrival": { "players": 200, "ramp_up_s": 5.0, "stampede_share": 0.5,
                "stampede_within_s": 1.0, "hold_s": 60.0, "between_matches_s": 4.25 },
            "capacity": { "hosts": 2, "matches_at_once": 4, "players_per_match": 10,
                "match_minutes": 0.2, "matches_running_peak": 4.0 },
            "login_rate_peak_per_s": 120.0,
            "matchmaking_wait_all_mean_s": 20.0, "matchmaking_queued_mean": 90.0
        }
    })
}
