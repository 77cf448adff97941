-- The tenth numbered migration on SQLite changes nothing: it keeps the
-- numbers of both dialects alike. On PostgreSQL (its 0010) lab_turn reads
-- a batch's numbers through a statement prepared once per connection.
SELECT 1;
