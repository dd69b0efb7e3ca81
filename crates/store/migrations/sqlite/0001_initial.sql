-- hightick store schema, SQLite flavour. Keep in step with ../postgres/0001_initial.sql.
CREATE TABLE accounts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    device_id     TEXT UNIQUE,
    name          TEXT UNIQUE,
    password_hash TEXT,
    balance       BIGINT NOT NULL DEFAULT 0 CHECK (balance >= 0),
    created_at_ms BIGINT NOT NULL,
    CHECK (device_id IS NOT NULL OR (name IS NOT NULL AND password_hash IS NOT NULL))
);

CREATE TABLE sessions (
    token_id      TEXT PRIMARY KEY,
    account_id    BIGINT NOT NULL REFERENCES accounts (id),
    created_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    revoked       BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX sessions_account ON sessions (account_id);

CREATE TABLE profiles (
    account_id    BIGINT PRIMARY KEY REFERENCES accounts (id),
    display_name  TEXT NOT NULL,
    xp            BIGINT NOT NULL DEFAULT 0 CHECK (xp >= 0),
    updated_at_ms BIGINT NOT NULL
);

CREATE TABLE inventory (
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    item_id    TEXT NOT NULL,
    quantity   BIGINT NOT NULL CHECK (quantity >= 0),
    PRIMARY KEY (account_id, item_id)
);

CREATE TABLE ledger (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    BIGINT NOT NULL REFERENCES accounts (id),
    delta         BIGINT NOT NULL,
    reason        TEXT NOT NULL,
    reference     TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);
CREATE INDEX ledger_account ON ledger (account_id, id);

CREATE TABLE purchases (
    account_id      BIGINT NOT NULL REFERENCES accounts (id),
    idempotency_key TEXT NOT NULL,
    item_id         TEXT NOT NULL,
    quantity        BIGINT NOT NULL,
    unit_price      BIGINT NOT NULL,
    cost            BIGINT NOT NULL,
    balance_after   BIGINT NOT NULL,
    created_at_ms   BIGINT NOT NULL,
    PRIMARY KEY (account_id, idempotency_key)
);

CREATE TABLE match_results (
    match_id       TEXT PRIMARY KEY,
    mode           TEXT NOT NULL,
    recorded_at_ms BIGINT NOT NULL
);

CREATE TABLE match_players (
    match_id      TEXT NOT NULL REFERENCES match_results (match_id),
    account_id    BIGINT NOT NULL REFERENCES accounts (id),
    team          BIGINT NOT NULL,
    score         BIGINT NOT NULL,
    outcome       TEXT NOT NULL CHECK (outcome IN ('win', 'loss', 'draw')),
    reward        BIGINT NOT NULL,
    rating_before DOUBLE PRECISION NOT NULL,
    rating_after  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (match_id, account_id)
);
CREATE INDEX match_players_account ON match_players (account_id);

CREATE TABLE player_stats (
    account_id     BIGINT PRIMARY KEY REFERENCES accounts (id),
    matches_played BIGINT NOT NULL DEFAULT 0,
    wins           BIGINT NOT NULL DEFAULT 0,
    losses         BIGINT NOT NULL DEFAULT 0,
    draws          BIGINT NOT NULL DEFAULT 0,
    score_total    BIGINT NOT NULL DEFAULT 0,
    rating         DOUBLE PRECISION NOT NULL,
    updated_at_ms  BIGINT NOT NULL
);
CREATE INDEX player_stats_rating ON player_stats (rating);
