-- The fourteenth numbered migration on PostgreSQL, as SQLite's 0014: a
-- lab's idempotency records keep one index beside their primary key, not
-- two. The expiry index (expires_at, for the sweeper) and the keys panel's
-- index by age (lab, scope, created_at) each took a B-tree write with every
-- new key, about a fifth of what the ledger did for a new charge under
-- replay. One index of a lab's records by the time they expire serves both:
-- the sweeper deletes the expired ones of each lab and scope from its start
-- (stepping from one lab and scope to the next through it), the keys panel
-- reads a lab's from its end, the longest to live first (the newest, while
-- the lab's key TTL does not change). Partial, on a condition its queries
-- name and a key's lookup does not (expires_at >= 0, always true), as
-- migration 5's was: a key's lookup uses the primary key only.
DROP INDEX IF EXISTS idempotency_records_expiry;
DROP INDEX IF EXISTS idempotency_records_by_age;
CREATE INDEX IF NOT EXISTS idempotency_records_by_expiry ON idempotency_records (lab_id, scope, expires_at)
    WHERE expires_at >= 0;
