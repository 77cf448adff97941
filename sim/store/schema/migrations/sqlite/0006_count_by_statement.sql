-- The sixth numbered migration on SQLite changes nothing: it keeps the
-- numbers of both dialects alike. On PostgreSQL (its 0006) the payments
-- are counted once per statement; SQLite has no statement-level triggers,
-- and its row triggers cost no round trip.
SELECT 1;
