-- The fifth numbered migration on SQLite, as PostgreSQL's 0005: the keys
-- panel's index of a lab's records by age becomes partial, on a condition
-- its query names (created_at >= 0, always true) and a key's lookup does
-- not, so that a key's lookup can use the primary key only, whatever the
-- planner knows of the table.
DROP INDEX IF EXISTS idempotency_records_lab_age;
CREATE INDEX IF NOT EXISTS idempotency_records_by_age ON idempotency_records (lab_id, scope, created_at)
    WHERE created_at >= 0;
