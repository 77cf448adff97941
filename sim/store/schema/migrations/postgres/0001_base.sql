-- The lab's database on PostgreSQL, first numbered migration: the tables,
-- counts and triggers of SQLite's 0001 in PostgreSQL's own SQL, every time
-- in unix milliseconds. A database from before the numbered migrations
-- (which applied its schema at every start, with times as text) is brought
-- to this shape by legacy.go first; every statement is idempotent.

CREATE TABLE IF NOT EXISTS labs (
    id          TEXT PRIMARY KEY,
    settings    TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    kind        TEXT NOT NULL DEFAULT 'private'
                CHECK (kind IN ('demo', 'private', 'compare', 'building', 'doomed')),
    touched_at  BIGINT NOT NULL DEFAULT 0,
    rev         BIGINT NOT NULL DEFAULT 0,
    clock_ms    BIGINT NOT NULL DEFAULT 0,
    gen         BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS labs_idle ON labs (touched_at) WHERE kind <> 'demo';

CREATE TABLE IF NOT EXISTS lab_counts (
    lab_id      TEXT PRIMARY KEY REFERENCES labs (id) ON DELETE CASCADE,
    payments    BIGINT NOT NULL DEFAULT 0,
    total       BIGINT NOT NULL DEFAULT 0,
    doubled     BIGINT NOT NULL DEFAULT 0,
    overcharged BIGINT NOT NULL DEFAULT 0,
    action_seq  BIGINT NOT NULL DEFAULT 0,
    base_seq    BIGINT NOT NULL DEFAULT 0,
    op_seq      BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS payments (
    lab_id          TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    n               BIGINT NOT NULL,
    order_id        TEXT NOT NULL,
    amount          BIGINT NOT NULL CHECK (amount > 0),
    idempotency_key TEXT,
    dedup_key       TEXT,
    direct          BOOLEAN NOT NULL DEFAULT false,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (lab_id, n),
    UNIQUE (lab_id, dedup_key)
);
CREATE INDEX IF NOT EXISTS payments_lab_key ON payments (lab_id, idempotency_key);

CREATE TABLE IF NOT EXISTS order_stats (
    lab_id       TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    order_id     TEXT NOT NULL,
    charges      BIGINT NOT NULL DEFAULT 0,
    purchases    BIGINT NOT NULL DEFAULT 0,
    total        BIGINT NOT NULL DEFAULT 0,
    first_n      BIGINT,
    first_amount BIGINT,
    told_done    BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (lab_id, order_id)
);
CREATE INDEX IF NOT EXISTS order_stats_doubled ON order_stats (lab_id, first_n) WHERE charges > 1;
CREATE INDEX IF NOT EXISTS order_stats_lost ON order_stats (lab_id, order_id) WHERE told_done > 0 AND charges = 0;

CREATE TABLE IF NOT EXISTS idempotency_records (
    lab_id       TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('in-flight', 'done')),
    token        TEXT NOT NULL,
    status       BIGINT,
    location     TEXT,
    content_type TEXT,
    body         BYTEA,
    locked_until BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (lab_id, scope, key)
);
CREATE INDEX IF NOT EXISTS idempotency_records_expiry ON idempotency_records (expires_at);
CREATE INDEX IF NOT EXISTS idempotency_records_lab_age ON idempotency_records (lab_id, scope, created_at);

CREATE TABLE IF NOT EXISTS operations (
    lab_id       TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    id           TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    order_id     TEXT NOT NULL,
    amount       BIGINT NOT NULL,
    method       TEXT NOT NULL DEFAULT 'POST',
    key_strategy TEXT NOT NULL,
    key          TEXT,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (lab_id, id)
);
CREATE INDEX IF NOT EXISTS operations_lab_seq ON operations (lab_id, seq);
CREATE INDEX IF NOT EXISTS operations_lab_order ON operations (lab_id, order_id, seq);

CREATE TABLE IF NOT EXISTS attempts (
    lab_id      TEXT NOT NULL,
    op_id       TEXT NOT NULL,
    n           BIGINT NOT NULL,
    key         TEXT,
    fate        TEXT NOT NULL,
    status      BIGINT NOT NULL DEFAULT 0,
    error       TEXT,
    outcome     TEXT NOT NULL,
    deliveries  TEXT NOT NULL DEFAULT '[]',
    started_at  BIGINT NOT NULL,
    finished_at BIGINT,
    version     BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (lab_id, op_id, n),
    FOREIGN KEY (lab_id, op_id) REFERENCES operations (lab_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS attempts_unfinished ON attempts (lab_id) WHERE finished_at IS NULL;

CREATE TABLE IF NOT EXISTS lab_actions (
    lab_id TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    seq    BIGINT NOT NULL,
    action TEXT NOT NULL,
    PRIMARY KEY (lab_id, seq)
);

CREATE TABLE IF NOT EXISTS lab_lessons (
    lab_id TEXT PRIMARY KEY REFERENCES labs (id) ON DELETE CASCADE,
    lesson BIGINT NOT NULL,
    ready  BOOLEAN NOT NULL,
    next   BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS health (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    at BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS comparisons (
    id         TEXT PRIMARY KEY,
    created_at BIGINT NOT NULL,
    result     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS comparisons_age ON comparisons (created_at);

-- The counts, kept in the transaction that changes what they count (as
-- SQLite's triggers do).
CREATE OR REPLACE FUNCTION payments_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE c BIGINT; p BIGINT;
BEGIN
    INSERT INTO order_stats (lab_id, order_id, charges, total, first_n, first_amount)
    VALUES (NEW.lab_id, NEW.order_id, 1, NEW.amount, NEW.n, NEW.amount)
    ON CONFLICT (lab_id, order_id) DO UPDATE SET
        charges = order_stats.charges + 1, total = order_stats.total + excluded.total,
        first_n = COALESCE(order_stats.first_n, excluded.first_n),
        first_amount = COALESCE(order_stats.first_amount, excluded.first_amount)
    RETURNING charges, purchases INTO c, p;
    UPDATE lab_counts SET
        payments = payments + 1,
        total = total + NEW.amount,
        doubled = doubled + (c = 2)::int,
        overcharged = overcharged + (c > 1 AND c > p)::int - (c > 2 AND c - 1 > p)::int
    WHERE lab_id = NEW.lab_id;
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER payments_count AFTER INSERT ON payments FOR EACH ROW EXECUTE FUNCTION payments_count();

CREATE OR REPLACE FUNCTION operations_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE c BIGINT; p BIGINT;
BEGIN
    INSERT INTO order_stats (lab_id, order_id, purchases) VALUES (NEW.lab_id, NEW.order_id, 1)
    ON CONFLICT (lab_id, order_id) DO UPDATE SET purchases = order_stats.purchases + 1
    RETURNING charges, purchases INTO c, p;
    UPDATE lab_counts SET
        overcharged = overcharged + (c > 1 AND c > p)::int - (c > 1 AND c > p - 1)::int
    WHERE lab_id = NEW.lab_id;
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER operations_count AFTER INSERT ON operations FOR EACH ROW EXECUTE FUNCTION operations_count();

CREATE OR REPLACE FUNCTION attempts_told_done() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE order_stats SET told_done = told_done + 1
    WHERE lab_id = NEW.lab_id AND order_id = (SELECT order_id FROM operations WHERE lab_id = NEW.lab_id AND id = NEW.op_id);
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER attempts_told_done AFTER UPDATE OF outcome ON attempts FOR EACH ROW
WHEN (NEW.outcome IN ('duplicate', 'replayed') AND OLD.outcome NOT IN ('duplicate', 'replayed'))
EXECUTE FUNCTION attempts_told_done();
