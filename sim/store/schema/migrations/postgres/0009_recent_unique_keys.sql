-- The ninth numbered migration (as SQLite's 0009): the keys panel's newest UNIQUE keys of a
-- lab (SELECT dedup_key FROM payments WHERE lab_id = ? AND dedup_key IS NOT
-- NULL ORDER BY n DESC LIMIT ?) read from an index of only the payments
-- that have one, which holds the key too: covering, the planner takes it
-- without statistics. Through the primary key, a lab whose payments have
-- none (every protection but unique and on-conflict) had all its payments
-- read for each page: its cost grew with the lab's history.
CREATE INDEX IF NOT EXISTS payments_recent_unique ON payments (lab_id, n, dedup_key) WHERE dedup_key IS NOT NULL;
