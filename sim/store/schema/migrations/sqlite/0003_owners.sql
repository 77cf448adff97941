-- The third numbered migration: who made a lab, so that one client address
-- holds a bounded number of labs ("Fair shares"). owner is a keyed hash of
-- the client's address (its key random per start, kept in memory only),
-- never the address itself; NULL for a lab no client made (demo) or made
-- before this column.
ALTER TABLE labs ADD COLUMN owner TEXT;
CREATE INDEX IF NOT EXISTS labs_owner ON labs (owner, kind) WHERE owner IS NOT NULL;
