-- The sixth numbered migration on PostgreSQL (SQLite's 0006 changes
-- nothing): the payments are counted once per statement, not once per row.
-- A lab's batch writes its new payments in one multi-row INSERT; the row
-- trigger ran a PL/pgSQL function and two statements for each of them
-- (about 60 µs of the database's time a payment, against 13 µs for the
-- row itself). The statement's new rows (its transition table) are counted
-- by order in one INSERT … ON CONFLICT and by lab in one UPDATE.
--
-- The counts are those the row trigger kept. For an order whose charges go
-- from c0 to c1 in the statement, with p purchases: "doubled" counts the
-- orders charged twice, and rises when c0 < 2 <= c1; "overcharged" counts
-- the orders charged more often than bought, f(c) = c > 1 AND c > p, and
-- the row trigger's steps f(c) - f(c - 1) add up to f(c1) - f(c0).
DROP TRIGGER IF EXISTS payments_count ON payments;
DROP FUNCTION IF EXISTS payments_count();

CREATE OR REPLACE FUNCTION payments_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH g AS (
        SELECT lab_id, order_id, count(*) AS k, sum(amount) AS total, min(n) AS first_n,
               (array_agg(amount ORDER BY n))[1] AS first_amount
        FROM new_payments GROUP BY lab_id, order_id
    ), s AS (
        INSERT INTO order_stats AS o (lab_id, order_id, charges, total, first_n, first_amount)
        SELECT lab_id, order_id, k, total, first_n, first_amount FROM g
        ON CONFLICT (lab_id, order_id) DO UPDATE SET
            charges = o.charges + excluded.charges, total = o.total + excluded.total,
            first_n = COALESCE(o.first_n, excluded.first_n),
            first_amount = COALESCE(o.first_amount, excluded.first_amount)
        RETURNING o.lab_id, o.order_id, o.charges AS c1, o.purchases AS p
    ), d AS (
        SELECT s.lab_id, g.k, g.total, s.c1, s.c1 - g.k AS c0, s.p
        FROM s JOIN g ON g.lab_id = s.lab_id AND g.order_id = s.order_id
    )
    UPDATE lab_counts AS l SET
        payments = l.payments + x.k, total = l.total + x.total,
        doubled = l.doubled + x.doubled, overcharged = l.overcharged + x.over
    FROM (SELECT lab_id, sum(k) AS k, sum(total) AS total,
                 sum((c0 < 2 AND c1 >= 2)::int) AS doubled,
                 sum((c1 > 1 AND c1 > p)::int - (c0 > 1 AND c0 > p)::int) AS over
          FROM d GROUP BY lab_id) AS x
    WHERE l.lab_id = x.lab_id;
    RETURN NULL;
END $$;
CREATE TRIGGER payments_count AFTER INSERT ON payments
    REFERENCING NEW TABLE AS new_payments FOR EACH STATEMENT EXECUTE FUNCTION payments_count();
