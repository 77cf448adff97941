-- The seventh numbered migration on SQLite changes nothing: it keeps the
-- numbers of both dialects alike. On PostgreSQL (its 0007) a lab's batch
-- takes the lab's lock and reads its numbers in one round trip; SQLite's
-- batches cost none.
SELECT 1;
