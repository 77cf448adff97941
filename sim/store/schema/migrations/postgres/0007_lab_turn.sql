-- The seventh numbered migration on PostgreSQL (SQLite's 0007 changes
-- nothing): a lab's batch reads its numbers in its first statement.
--
-- lab_turn takes a lab's lock (a lab's batches run one at a time across the
-- processes) and then reads the numbers the batch will count on (numbers,
-- a query of one row of integers whose placeholders are all $1, the lab),
-- in the same round trip as the batch's first statement. A function, so
-- that the numbers are read once the lock is held: each statement in a
-- volatile function reads committed rows as of its own start, where a
-- subquery of the first statement would see them as of before the wait,
-- without what the batch before wrote. It answers the row as text,
-- "(12,3,0)", NULL when numbers is NULL or answers no row.
CREATE OR REPLACE FUNCTION lab_turn(lab TEXT, numbers TEXT) RETURNS TEXT LANGUAGE plpgsql VOLATILE AS $$
DECLARE row TEXT;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(lab, 0));
    IF numbers IS NULL THEN
        RETURN NULL;
    END IF;
    EXECUTE 'SELECT row(n.*)::text FROM (' || numbers || ') AS n' INTO row USING lab;
    RETURN row;
END $$;
