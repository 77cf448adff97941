-- The eleventh numbered migration on PostgreSQL (SQLite's 0011 changes
-- nothing): a batch's held writes check inside their own statement that
-- each part wrote every row it carried.
--
-- held_written compares the rows each part of the statement wrote (got)
-- with the rows it carried (want) and fails (SQLSTATE IL002) when they
-- differ: a row that a conflict left unwritten (ON CONFLICT ... WHERE).
-- The statement fails with it, and the transaction with the statement, so
-- that a COMMIT sent behind it in the same round trip commits nothing; the
-- batch runs again statement by statement (sim/store/pgsql).
CREATE OR REPLACE FUNCTION held_written(got BIGINT[], want BIGINT[]) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
BEGIN
    IF got IS DISTINCT FROM want THEN
        RAISE EXCEPTION 'a held write was not written: % of % rows', got, want USING ERRCODE = 'IL002';
    END IF;
    RETURN TRUE;
END $$;
