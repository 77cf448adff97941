-- The thirteenth numbered migration on SQLite changes nothing: it keeps the
-- numbers of both dialects alike. On PostgreSQL (its 0013) a writing
-- transaction holds its process's lease with a shared advisory lock instead
-- of a lock on the lease's row; SQLite has one process and no leases.
SELECT 1;
