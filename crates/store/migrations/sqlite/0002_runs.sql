-- Capacity-lab run history, SQLite flavour. Keep in step with ../postgres/0002_runs.sql.
-- One row per recorded `hightick demo` or `hightick lab sweep`: what was built, where
-- it ran, how it was configured, and the result as the lab's JSON.
CREATE TABLE lab_runs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    recorded_at_ms BIGINT NOT NULL,
    kind           TEXT NOT NULL,
    mode           TEXT NOT NULL,
    matches        BIGINT NOT NULL CHECK (matches >= 0),
    git_commit     TEXT,
    build_profile  TEXT NOT NULL,
    host_json      TEXT NOT NULL,
    config_json    TEXT NOT NULL,
    summary_json   TEXT NOT NULL,
    report_json    TEXT
);
CREATE INDEX lab_runs_commit ON lab_runs (git_commit);
CREATE INDEX lab_runs_kind_mode ON lab_runs (kind, mode);
