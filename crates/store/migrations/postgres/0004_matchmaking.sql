-- Matchmaking shared by every gateway: the queue, the matches formed from it (for
-- polls and rejoins at any gateway), and parties. PostgreSQL flavour; keep in step
-- with ../sqlite/0004_matchmaking.sql.
--
-- A ticket is one queue entry: a solo player or a whole party (members is the
-- account ids, comma-separated, in party order). state: 'queued' (waiting),
-- 'forming' (claimed by one gateway's matchmaker pass at claimed_ms), 'matched'
-- (match_id and team set at settled_ms). claimed_by names the pass holding a
-- forming ticket (its leftovers go back in one statement).
CREATE TABLE mm_tickets (
    ticket     TEXT PRIMARY KEY,
    mode       TEXT NOT NULL,
    members    TEXT NOT NULL,
    size       INTEGER NOT NULL CHECK (size > 0),
    rating     BIGINT NOT NULL,
    region     TEXT NOT NULL,
    joined_ms  BIGINT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('queued', 'forming', 'matched')),
    claimed_ms BIGINT,
    claimed_by TEXT,
    settled_ms BIGINT,
    match_id   TEXT,
    team       INTEGER
);
CREATE INDEX mm_tickets_queue ON mm_tickets (mode, state, joined_ms);
CREATE INDEX mm_tickets_claim ON mm_tickets (claimed_by) WHERE state = 'forming';
CREATE INDEX mm_tickets_settled ON mm_tickets (settled_ms) WHERE state = 'matched';

-- Which ticket an account is on (one at a time).
CREATE TABLE mm_members (
    account_id BIGINT PRIMARY KEY,
    ticket     TEXT NOT NULL
);
CREATE INDEX mm_members_ticket ON mm_members (ticket);

-- Matches formed: where they run and who sits where (seats: "account:team",
-- comma-separated, in seat order). over_ms is set when the result is in.
CREATE TABLE mm_matches (
    match_id  TEXT PRIMARY KEY,
    mode      TEXT NOT NULL,
    address   TEXT NOT NULL,
    region    TEXT NOT NULL,
    seats     TEXT NOT NULL,
    formed_ms BIGINT NOT NULL,
    over_ms   BIGINT
);
CREATE INDEX mm_matches_formed ON mm_matches (formed_ms);

CREATE TABLE parties (
    party_id   TEXT PRIMARY KEY,
    code       TEXT NOT NULL UNIQUE,
    leader     BIGINT NOT NULL,
    created_ms BIGINT NOT NULL
);

CREATE TABLE party_members (
    account_id BIGINT PRIMARY KEY,
    party_id   TEXT NOT NULL REFERENCES parties (party_id) ON DELETE CASCADE,
    joined_ms  BIGINT NOT NULL
);
CREATE INDEX party_members_party ON party_members (party_id, joined_ms);
