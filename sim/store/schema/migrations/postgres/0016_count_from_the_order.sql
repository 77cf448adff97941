-- The sixteenth numbered migration on PostgreSQL changes nothing: it keeps
-- the numbers of both dialects alike. On SQLite (its 0016) a new payment's
-- lab counts go up without reading its order's row again; here the
-- payments are counted once per statement (migration 6).
SELECT 1;
