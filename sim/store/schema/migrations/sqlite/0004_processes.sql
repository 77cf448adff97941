-- The fourth numbered migration: the processes on the database and the
-- work each owns (SPEC, "Membership survives a restart of PostgreSQL").
--
-- processes holds one row per running process, with the end of its lease
-- on the database's clock; a process renews it every third of the lease,
-- and one whose lease has ended is dead to the others: they mend the work
-- it owned and take its row away. On SQLite one process runs: its row is
-- the only one, taken at its start, and whatever the last run owned is its
-- to mend. The columns are PostgreSQL's (0004 there), where it matters.
CREATE TABLE IF NOT EXISTS processes (
    id          TEXT PRIMARY KEY,           -- random, the process's for its life
    name        TEXT NOT NULL,              -- host and pid, for the people who run it
    parts       TEXT NOT NULL DEFAULT '',   -- the parts it keeps to itself (embedded): "kv", "broker"
    started_at  INTEGER NOT NULL,           -- when it took its lease (again, after losing it), unix ms
    lease_until INTEGER NOT NULL            -- the end of its lease, unix ms of the database's clock
);

-- The process that owns a piece of work under way: an attempt the
-- simulated client is making, a claim in flight, an email being sent.
-- NULL for rows from before this column, which the next start mends.
ALTER TABLE attempts ADD COLUMN process TEXT;
ALTER TABLE idempotency_records ADD COLUMN process TEXT;
ALTER TABLE email_outbox ADD COLUMN process TEXT;
CREATE INDEX IF NOT EXISTS idempotency_records_in_flight ON idempotency_records (process) WHERE state = 'in-flight';
