-- The third numbered migration on PostgreSQL: who made a lab, as SQLite's
-- 0003 (a keyed hash of the client's address, never the address).
ALTER TABLE labs ADD COLUMN IF NOT EXISTS owner TEXT;
CREATE INDEX IF NOT EXISTS labs_owner ON labs (owner, kind) WHERE owner IS NOT NULL;
