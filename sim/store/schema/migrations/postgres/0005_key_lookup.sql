-- The fifth numbered migration on PostgreSQL, as SQLite's 0005: the keys
-- panel's index of a lab's records by age becomes partial, on a condition
-- its query names (created_at >= 0, always true) and a key's lookup does
-- not. A key's lookup (lab, scope, key) can then use the primary key only.
-- Before, on a database whose statistics were not yet gathered (a new one,
-- a table that grew fast), the planner found the two indexes alike and
-- could take the age index for the lookup, reading every record of the lab:
-- a charge cost more with every charge before it.
DROP INDEX IF EXISTS idempotency_records_lab_age;
CREATE INDEX IF NOT EXISTS idempotency_records_by_age ON idempotency_records (lab_id, scope, created_at)
    WHERE created_at >= 0;
