-- The fifteenth numbered migration on SQLite, as PostgreSQL's 0015: the
-- payments' UNIQUE key (lab, dedup_key) becomes a unique index of only the
-- payments that have one. A table's UNIQUE constraint indexes every row,
-- NULL keys too, so every payment written without one (every protection
-- but unique and on-conflict) wrote an entry nobody reads: about a tenth
-- of what the ledger did for a new charge under replay. The constraint is
-- the same for every key that is not NULL, and the statements that lean
-- on it (ON CONFLICT … DO NOTHING) name the index's condition. SQLite
-- drops a table's constraint only by building the table again: the rows
-- are copied, every one kept, and the indexes and the counting trigger
-- made again as they were.
CREATE TABLE payments_one (
    lab_id          TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    n               INTEGER NOT NULL,            -- the payment's number in its lab, from 1: its id in the API
    order_id        TEXT NOT NULL,
    amount          INTEGER NOT NULL CHECK (amount > 0),
    idempotency_key TEXT,
    dedup_key       TEXT,
    direct          INTEGER NOT NULL DEFAULT 0,  -- 1: sent straight to the API, not by the lab's client
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (lab_id, n)
) WITHOUT ROWID;
INSERT INTO payments_one (lab_id, n, order_id, amount, idempotency_key, dedup_key, direct, created_at)
SELECT lab_id, n, order_id, amount, idempotency_key, dedup_key, direct, created_at FROM payments;
DROP TABLE payments;
ALTER TABLE payments_one RENAME TO payments;
CREATE UNIQUE INDEX IF NOT EXISTS payments_dedup ON payments (lab_id, dedup_key) WHERE dedup_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS payments_lab_key ON payments (lab_id, idempotency_key);
CREATE INDEX IF NOT EXISTS payments_recent_unique ON payments (lab_id, n, dedup_key) WHERE dedup_key IS NOT NULL;

CREATE TRIGGER IF NOT EXISTS payments_count AFTER INSERT ON payments BEGIN
    INSERT INTO order_stats (lab_id, order_id, charges, total, first_n, first_amount)
    VALUES (NEW.lab_id, NEW.order_id, 1, NEW.amount, NEW.n, NEW.amount)
    ON CONFLICT (lab_id, order_id) DO UPDATE SET
        charges = charges + 1, total = total + excluded.total,
        first_n = COALESCE(first_n, excluded.first_n), first_amount = COALESCE(first_amount, excluded.first_amount);
    UPDATE lab_counts SET
        payments = payments + 1,
        total = total + NEW.amount,
        doubled = doubled + (SELECT charges = 2 FROM order_stats WHERE lab_id = NEW.lab_id AND order_id = NEW.order_id),
        overcharged = overcharged + (SELECT (charges > 1 AND charges > purchases) - (charges > 2 AND charges - 1 > purchases)
                                     FROM order_stats WHERE lab_id = NEW.lab_id AND order_id = NEW.order_id)
    WHERE lab_id = NEW.lab_id;
END;
