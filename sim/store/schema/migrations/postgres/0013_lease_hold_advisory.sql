-- The thirteenth numbered migration on PostgreSQL (SQLite's 0013 changes
-- nothing): a writing transaction holds its process's lease with a shared
-- advisory lock, not a lock on the lease's row.
--
-- hold_lease locked the process's row FOR KEY SHARE until the transaction
-- ended, so that no other process would bury the row, and mend the work,
-- while a write of it might still commit. A row lock writes the row: each
-- writing transaction dirtied the lease's page and logged it, and two of
-- one process at once (a lab's next batch begins while one commits) made a
-- multixact of their locks each time. The lock is now the process's
-- advisory lock in the two-key space (1, hashtext(id)), shared by its
-- writing transactions, taken before the lease is read: the read runs in a
-- statement of its own (a volatile function's), after the lock, so it sees
-- a burial that committed while it waited. Burying a dead process takes the
-- lock exclusively, without waiting (sim/store/join.go), and leaves a
-- process whose write still runs for the next time, as SKIP LOCKED did.
CREATE OR REPLACE FUNCTION hold_lease(p TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1, hashtext(p));
    PERFORM 1 FROM processes WHERE id = p AND lease_until > db_ms();
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the lease of lab process % is not current: it writes again once it has renewed it', p
            USING ERRCODE = 'IL001';
    END IF;
    RETURN TRUE;
END $$;
