-- The fourth numbered migration on PostgreSQL: the processes on the
-- database, their leases, and the work each owns, as SQLite's 0004.
-- Idempotent, like the others.
--
-- A process takes its row at its start and renews its lease every third
-- of it, on the database's clock; a process whose lease has ended is dead
-- to the others, who mend its work and take its row away in one
-- transaction. Every writing transaction begins with hold_lease: the
-- writer's lease must be current, and its row is locked (FOR KEY SHARE)
-- until the transaction ends, so that no other process takes it away, and
-- mends the work, while a write of it may still commit.
CREATE TABLE IF NOT EXISTS processes (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    parts       TEXT NOT NULL DEFAULT '',
    started_at  BIGINT NOT NULL,
    lease_until BIGINT NOT NULL
);

ALTER TABLE attempts ADD COLUMN IF NOT EXISTS process TEXT;
ALTER TABLE idempotency_records ADD COLUMN IF NOT EXISTS process TEXT;
ALTER TABLE email_outbox ADD COLUMN IF NOT EXISTS process TEXT;
CREATE INDEX IF NOT EXISTS idempotency_records_in_flight ON idempotency_records (process) WHERE state = 'in-flight';

-- db_ms is the database's clock in unix milliseconds: the clock of every
-- lease.
CREATE OR REPLACE FUNCTION db_ms() RETURNS BIGINT LANGUAGE sql VOLATILE AS $$
    SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint
$$;

-- hold_lease is the first step of every writing transaction of process p:
-- it fails (SQLSTATE IL001) unless p's lease is current, and otherwise
-- holds p's row until the transaction ends.
CREATE OR REPLACE FUNCTION hold_lease(p TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM processes WHERE id = p AND lease_until > db_ms() FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the lease of lab process % is not current: it writes again once it has renewed it', p
            USING ERRCODE = 'IL001';
    END IF;
    RETURN TRUE;
END $$;
