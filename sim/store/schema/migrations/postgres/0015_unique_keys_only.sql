-- The fifteenth numbered migration on PostgreSQL, as SQLite's 0015: the
-- payments' UNIQUE key (lab, dedup_key) becomes a unique index of only the
-- payments that have one. A table's UNIQUE constraint indexes every row,
-- NULL keys too, so every payment written without one (every protection
-- but unique and on-conflict) wrote an entry nobody reads. The constraint
-- is the same for every key that is not NULL, and the statements that lean
-- on it (ON CONFLICT … DO NOTHING) name the index's condition.
CREATE UNIQUE INDEX IF NOT EXISTS payments_dedup ON payments (lab_id, dedup_key) WHERE dedup_key IS NOT NULL;
ALTER TABLE payments DROP CONSTRAINT IF EXISTS payments_lab_id_dedup_key_key;
