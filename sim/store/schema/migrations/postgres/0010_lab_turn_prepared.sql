-- The tenth numbered migration on PostgreSQL (SQLite's 0010 changes
-- nothing): lab_turn reads a batch's numbers through a statement prepared
-- once per connection, not planned anew in every batch.
--
-- A batch's numbers are read after the lab's lock is taken, so their
-- query's planning (about 0.1 ms for a payment's and an action's, against
-- 0.02 ms to run it) held every other batch of the lab back. The query
-- (numbers, built from the numberings the writer remembers) is prepared in
-- the session under a name made from its text the first time the session
-- meets it; PostgreSQL keeps its plan from then on (a generic plan after
-- five runs, its plan cache's rule). A writer remembers a few numberings,
-- so a session holds a few such statements.
CREATE OR REPLACE FUNCTION lab_turn(lab TEXT, numbers TEXT) RETURNS TEXT LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    row TEXT;
    name TEXT;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(lab, 0));
    IF numbers IS NULL THEN
        RETURN NULL;
    END IF;
    name := 'lab_turn_' || md5(numbers);
    BEGIN
        EXECUTE format('EXECUTE %I(%L)', name, lab) INTO row;
    EXCEPTION WHEN invalid_sql_statement_name THEN -- not prepared in this session yet
        EXECUTE format('PREPARE %I(text) AS SELECT row(n.*)::text FROM (%s) AS n', name, numbers);
        EXECUTE format('EXECUTE %I(%L)', name, lab) INTO row;
    END;
    RETURN row;
END $$;
