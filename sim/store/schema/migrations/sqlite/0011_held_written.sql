-- The eleventh numbered migration on SQLite changes nothing: it keeps the
-- numbers of both dialects alike. On PostgreSQL (its 0011) a batch's held
-- writes check in their own statement that every row was written; SQLite's
-- writer checks each statement's rows as it runs them.
SELECT 1;
