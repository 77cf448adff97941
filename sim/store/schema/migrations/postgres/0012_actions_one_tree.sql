-- The twelfth numbered migration on PostgreSQL changes nothing: it keeps the
-- numbers of both dialects alike. On SQLite (its 0012) lab_actions becomes
-- one B-tree (WITHOUT ROWID); a PostgreSQL table is a heap with its primary
-- key's index either way.
SELECT 1;
