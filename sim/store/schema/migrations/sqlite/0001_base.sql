-- The lab's database, first numbered migration: the labs, the ledger and
-- the history. Every time a row keeps is an integer, unix milliseconds, so
-- that the database compares and orders times as numbers. A file from
-- before the numbered migrations (PRAGMA user_version 1 to 4) is brought to
-- this shape by legacy.go first; every statement is idempotent, so that it
-- may run over such a file.
--
-- Every row belongs to a lab: the child tables reference labs(id) with ON
-- DELETE CASCADE, so a lab removed takes everything in it along, and a write
-- for a lab that is gone fails instead of leaving an orphan behind.

-- labs is a lab's settings and life; lab_counts, what the page and the
-- live updates show of it, kept by the triggers at the end of this file in
-- the transaction that changes what they count: showing them costs the same
-- for a lab of ten payments as for one of ten thousand. The counts have a
-- narrow row of their own, so that keeping them never rewrites the settings.
CREATE TABLE IF NOT EXISTS labs (
    id          TEXT PRIMARY KEY,
    settings    TEXT NOT NULL,                   -- JSON of Settings
    created_at  INTEGER NOT NULL,
    kind        TEXT NOT NULL DEFAULT 'private'  -- demo, private, compare; building (a scenario link, not yet whole); doomed (being removed)
                CHECK (kind IN ('demo', 'private', 'compare', 'building', 'doomed')),
    touched_at  INTEGER NOT NULL DEFAULT 0,      -- unix ms of the last use: a lab idle long enough is removed
    rev         INTEGER NOT NULL DEFAULT 0,      -- bumped by every change of settings or lesson
    clock_ms    INTEGER NOT NULL DEFAULT 0,      -- how far the lab's clock runs ahead, for expiry (version 4)
    gen         INTEGER NOT NULL DEFAULT 0       -- bumped by every reset: answers kept in memory carry it
);
CREATE INDEX IF NOT EXISTS labs_idle ON labs (touched_at) WHERE kind <> 'demo';

CREATE TABLE IF NOT EXISTS lab_counts (
    lab_id      TEXT PRIMARY KEY REFERENCES labs (id) ON DELETE CASCADE,
    payments    INTEGER NOT NULL DEFAULT 0,      -- rows of payments
    total       INTEGER NOT NULL DEFAULT 0,      -- their sum
    doubled     INTEGER NOT NULL DEFAULT 0,      -- orders charged more than once
    overcharged INTEGER NOT NULL DEFAULT 0,      -- orders charged more than once and more often than bought
    action_seq  INTEGER NOT NULL DEFAULT 0,      -- seq of the latest lab_actions row
    base_seq    INTEGER NOT NULL DEFAULT 0,      -- seq of the scenario's "base" row
    op_seq      INTEGER NOT NULL DEFAULT 0       -- seq of the latest operation
) WITHOUT ROWID;

-- payments is the ledger the lessons count, kept in the order of its key:
-- a lab's payments, by their number in it. idempotency_key is the key
-- the request carried, as sent. dedup_key is the column the UNIQUE constraint
-- guards: it is set only by the protections that rely on the constraint
-- (unique, on-conflict), so that "none" can show a double charge even when the
-- client does send a key.
CREATE TABLE IF NOT EXISTS payments (
    lab_id          TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    n               INTEGER NOT NULL,            -- the payment's number in its lab, from 1: its id in the API
    order_id        TEXT NOT NULL,
    amount          INTEGER NOT NULL CHECK (amount > 0),
    idempotency_key TEXT,
    dedup_key       TEXT,
    direct          INTEGER NOT NULL DEFAULT 0,  -- 1: sent straight to the API, not by the lab's client
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (lab_id, n),
    UNIQUE (lab_id, dedup_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS payments_lab_key ON payments (lab_id, idempotency_key);

-- order_stats is each order's charges and purchases (operations the client
-- started for it), kept by the triggers at the end: the double-charge alert
-- reads the orders charged more than once through a partial index, never the
-- ledger.
CREATE TABLE IF NOT EXISTS order_stats (
    lab_id       TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    order_id     TEXT NOT NULL,
    charges      INTEGER NOT NULL DEFAULT 0,
    purchases    INTEGER NOT NULL DEFAULT 0,
    total        INTEGER NOT NULL DEFAULT 0,
    first_n      INTEGER,                        -- the order's first payment
    first_amount INTEGER,
    told_done    INTEGER NOT NULL DEFAULT 0,     -- attempts answered "already done" (duplicate, replayed) (version 4)
    PRIMARY KEY (lab_id, order_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS order_stats_doubled ON order_stats (lab_id, first_n) WHERE charges > 1;
-- A lost charge: an order its customer was told was paid, with no payment.
CREATE INDEX IF NOT EXISTS order_stats_lost ON order_stats (lab_id, order_id) WHERE told_done > 0 AND charges = 0;

-- idempotency_records backs the "replay" protection (IETF Idempotency-Key
-- draft, Stripe): one row per (lab, scope, key), claimed atomically.
CREATE TABLE IF NOT EXISTS idempotency_records (
    lab_id       TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    scope        TEXT NOT NULL,          -- "charges", or an API route for the lab's own endpoints
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,          -- SHA-256 of the canonical request
    state        TEXT NOT NULL CHECK (state IN ('in-flight', 'done')),
    token        TEXT NOT NULL,          -- who holds the claim
    status       INTEGER,
    location     TEXT,
    content_type TEXT,
    body         BLOB,
    locked_until INTEGER NOT NULL,       -- unix ms: an in-flight claim older than this is stale
    expires_at   INTEGER NOT NULL,       -- unix ms: after this the key may be used afresh
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (lab_id, scope, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_records_expiry ON idempotency_records (expires_at);
CREATE INDEX IF NOT EXISTS idempotency_records_lab_age ON idempotency_records (lab_id, scope, created_at); -- the keys panel, newest first (version 4)

-- operations and attempts are the lab's history: what the simulated client did.
CREATE TABLE IF NOT EXISTS operations (
    lab_id       TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    id           TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    order_id     TEXT NOT NULL,
    amount       INTEGER NOT NULL,
    method       TEXT NOT NULL DEFAULT 'POST', -- POST charges; PUT, DELETE: the order (version 3)
    key_strategy TEXT NOT NULL,
    key          TEXT,                   -- the operation's key, for strategies fixed per operation
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (lab_id, id)
);
CREATE INDEX IF NOT EXISTS operations_lab_seq ON operations (lab_id, seq);
CREATE INDEX IF NOT EXISTS operations_lab_order ON operations (lab_id, order_id, seq);

CREATE TABLE IF NOT EXISTS attempts (
    lab_id      TEXT NOT NULL,
    op_id       TEXT NOT NULL,
    n           INTEGER NOT NULL,
    key         TEXT,
    fate        TEXT NOT NULL,
    status      INTEGER NOT NULL DEFAULT 0,
    error       TEXT,
    outcome     TEXT NOT NULL,
    deliveries  TEXT NOT NULL DEFAULT '[]', -- JSON: what the server did with each copy it received
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    version     INTEGER NOT NULL DEFAULT 0, -- of the client's state, saved: a later save never loses to an earlier
    PRIMARY KEY (lab_id, op_id, n),
    FOREIGN KEY (lab_id, op_id) REFERENCES operations (lab_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS attempts_unfinished ON attempts (lab_id) WHERE finished_at IS NULL;

-- lab_actions is what was done to a lab: a "base" row (its settings then)
-- and every action after it, in order. A scenario URL carries those since the
-- latest base (labs.base_seq), and replaying them with the same seed rebuilds
-- the ledger.
CREATE TABLE IF NOT EXISTS lab_actions (
    lab_id TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    action TEXT NOT NULL, -- JSON of Action
    PRIMARY KEY (lab_id, seq)
);

-- lab_lessons is the guided lesson open in a lab and how far it has gone,
-- so that a restart of the server does not lose a class's place.
CREATE TABLE IF NOT EXISTS lab_lessons (
    lab_id TEXT PRIMARY KEY REFERENCES labs (id) ON DELETE CASCADE,
    lesson INTEGER NOT NULL,
    ready  INTEGER NOT NULL,
    next   INTEGER NOT NULL
) WITHOUT ROWID;

-- health is one row that /healthz writes, to know that the ledger can be written.
CREATE TABLE IF NOT EXISTS health (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    at INTEGER NOT NULL
);

-- The counts of lab_counts and order_stats, kept in the transaction that
-- changes what they count. Rows are deleted only by a reset, which zeroes
-- the counts itself, and by a lab's removal, which takes the counts along.
-- An order is overcharged when it was charged more than once and more often
-- than bought: a new charge (c-1 → c) or a new purchase (p-1 → p) moves the
-- lab's count by the difference.
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

CREATE TRIGGER IF NOT EXISTS operations_count AFTER INSERT ON operations BEGIN
    INSERT INTO order_stats (lab_id, order_id, purchases) VALUES (NEW.lab_id, NEW.order_id, 1)
    ON CONFLICT (lab_id, order_id) DO UPDATE SET purchases = purchases + 1;
    UPDATE lab_counts SET
        overcharged = overcharged + (SELECT (charges > 1 AND charges > purchases) - (charges > 1 AND charges > purchases - 1)
                                     FROM order_stats WHERE lab_id = NEW.lab_id AND order_id = NEW.order_id)
    WHERE lab_id = NEW.lab_id;
END;

-- An attempt whose outcome becomes "already done" counts against its order
-- (version 4): the lost-charge alert reads the orders told so and never
-- charged through the partial index above, never the history.
CREATE TRIGGER IF NOT EXISTS attempts_told_done AFTER UPDATE OF outcome ON attempts
WHEN NEW.outcome IN ('duplicate', 'replayed') AND OLD.outcome NOT IN ('duplicate', 'replayed') BEGIN
    UPDATE order_stats SET told_done = told_done + 1
    WHERE lab_id = NEW.lab_id AND order_id = (SELECT order_id FROM operations WHERE lab_id = NEW.lab_id AND id = NEW.op_id);
END;

-- comparisons are the side-by-side runs, kept so that their page has an
-- address of their own: reloaded or shared, it shows the same run without
-- running again. They go when their labs idle out.
CREATE TABLE IF NOT EXISTS comparisons (
    id         TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL, -- unix ms
    result     TEXT NOT NULL     -- JSON of Comparison
);
CREATE INDEX IF NOT EXISTS comparisons_age ON comparisons (created_at);
