-- The registry of server hosts that register and heartbeat over the API, shared by
-- every gateway: a host may heartbeat to any replica and every replica allocates
-- to it. SQLite flavour; keep in step with ../postgres/0005_host_registry.sql.
-- (Hosts listed in a gateway's config are not here: each gateway keeps those.)
--
-- One row per host id, replaced by each heartbeat (admin, capacity, active,
-- draining, region, game as the host reported them at seen_ms, unix ms; at most one
-- row per admin address). allocated counts the matches gateways have allocated on
-- it since that heartbeat; full_until_ms passes it over after it refused a match
-- as full. A heartbeat resets both. A row silent for long is deleted.
CREATE TABLE registered_hosts (
    host_id       TEXT PRIMARY KEY,
    admin         TEXT NOT NULL,
    capacity      BIGINT NOT NULL CHECK (capacity >= 0),
    active        BIGINT NOT NULL CHECK (active >= 0),
    draining      INTEGER NOT NULL CHECK (draining IN (0, 1)),
    region        TEXT NOT NULL,
    game          TEXT NOT NULL,
    seen_ms       BIGINT NOT NULL,
    allocated     BIGINT NOT NULL DEFAULT 0,
    full_until_ms BIGINT
);
CREATE INDEX registered_hosts_seen ON registered_hosts (seen_ms);
CREATE INDEX registered_hosts_admin ON registered_hosts (admin);
