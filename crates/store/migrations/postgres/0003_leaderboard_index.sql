-- The leaderboard reads only players who have played, best first. Its old index
-- (rating alone) made both the top-100 and a player's rank walk every account that
-- has not played yet: at 20,000 fresh accounts, ~3 ms of database CPU per
-- leaderboard call. A partial index in the order the queries read holds only the
-- players on the board. PostgreSQL flavour; keep in step with ../sqlite/0003_leaderboard_index.sql.
DROP INDEX player_stats_rating;
CREATE INDEX player_stats_leaderboard ON player_stats (rating DESC, account_id)
    WHERE matches_played > 0;
