-- The lab's database on PostgreSQL: the tables, counts and triggers of
-- schema.sql (version 4) in PostgreSQL's own SQL. Every statement is
-- idempotent; migratePG applies it under an advisory lock at every start.

CREATE TABLE IF NOT EXISTS labs (
    id          TEXT PRIMARY KEY,
    settings    TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    kind        TEXT NOT NULL DEFAULT 'private'
                CHECK (kind IN ('demo', 'private', 'compare', 'building', 'doomed')),
    touched_at  BIGINT NOT NULL DEFAULT 0,
    rev         BIGINT NOT NULL DEFAULT 0,
    clock_ms    BIGINT NOT NULL DEFAULT 0
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
    created_at      TEXT NOT NULL,
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
    created_at   TEXT NOT NULL,
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
    created_at   TEXT NOT NULL,
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
    started_at  TEXT NOT NULL,
    finished_at TEXT,
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

CREATE TABLE IF NOT EXISTS messages (
    lab_id     TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    id         TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    order_id   TEXT NOT NULL,
    payment_n  BIGINT NOT NULL,
    amount     BIGINT NOT NULL,
    fate       TEXT NOT NULL,
    msg_dedup  BOOLEAN NOT NULL,
    published  BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    PRIMARY KEY (lab_id, id)
);
CREATE INDEX IF NOT EXISTS messages_lab_seq ON messages (lab_id, seq);
CREATE INDEX IF NOT EXISTS messages_unpublished ON messages (created_at) WHERE published = 0;
CREATE INDEX IF NOT EXISTS messages_age ON messages (created_at);

CREATE TABLE IF NOT EXISTS message_deliveries (
    lab_id     TEXT NOT NULL,
    message_id TEXT NOT NULL,
    n          BIGINT NOT NULL,
    stream_seq BIGINT NOT NULL,
    delivered  BIGINT NOT NULL,
    fate       TEXT NOT NULL,
    outcome    TEXT NOT NULL CHECK (outcome IN ('sent', 'skipped', 'crashed')),
    at         TEXT NOT NULL,
    PRIMARY KEY (lab_id, message_id, n),
    FOREIGN KEY (lab_id, message_id) REFERENCES messages (lab_id, id) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS processed_messages (
    lab_id TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    at     TEXT NOT NULL,
    PRIMARY KEY (lab_id, key)
);

CREATE TABLE IF NOT EXISTS email_outbox (
    lab_id     TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    id         TEXT NOT NULL,
    order_id   TEXT NOT NULL,
    amount     BIGINT NOT NULL,
    payment_n  BIGINT NOT NULL,
    message_id TEXT,
    claimed_at BIGINT NOT NULL DEFAULT 0,
    sent       BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    PRIMARY KEY (lab_id, id)
);
CREATE INDEX IF NOT EXISTS email_outbox_unsent ON email_outbox (created_at) WHERE sent = 0;
CREATE INDEX IF NOT EXISTS email_outbox_payment ON email_outbox (lab_id, payment_n) WHERE message_id IS NULL;

CREATE TABLE IF NOT EXISTS emails (
    lab_id      TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    n           BIGINT NOT NULL,
    email_id    TEXT NOT NULL,
    to_addr     TEXT NOT NULL,
    subject     TEXT NOT NULL,
    order_id    TEXT NOT NULL,
    message_id  TEXT,
    received_at TEXT NOT NULL,
    PRIMARY KEY (lab_id, n)
);

CREATE TABLE IF NOT EXISTS mail_counts (
    lab_id      TEXT PRIMARY KEY REFERENCES labs (id) ON DELETE CASCADE,
    emails      BIGINT NOT NULL DEFAULT 0,
    doubled     BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS email_stats (
    lab_id   TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    order_id TEXT NOT NULL,
    emails   BIGINT NOT NULL DEFAULT 0,
    first_n  BIGINT NOT NULL,
    PRIMARY KEY (lab_id, order_id)
);
CREATE INDEX IF NOT EXISTS email_stats_doubled ON email_stats (lab_id, first_n) WHERE emails > 1;

CREATE TABLE IF NOT EXISTS orders (
    lab_id     TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    order_id   TEXT NOT NULL,
    amount     BIGINT NOT NULL CHECK (amount > 0),
    updated_at TEXT NOT NULL,
    PRIMARY KEY (lab_id, order_id)
);

-- The counts, kept in the transaction that changes what they count (as
-- schema.sql's triggers do).
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

CREATE OR REPLACE FUNCTION emails_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE n BIGINT;
BEGIN
    INSERT INTO email_stats (lab_id, order_id, emails, first_n) VALUES (NEW.lab_id, NEW.order_id, 1, NEW.n)
    ON CONFLICT (lab_id, order_id) DO UPDATE SET emails = email_stats.emails + 1
    RETURNING emails INTO n;
    INSERT INTO mail_counts (lab_id) VALUES (NEW.lab_id) ON CONFLICT (lab_id) DO NOTHING;
    UPDATE mail_counts SET emails = emails + 1, doubled = doubled + (n = 2)::int WHERE lab_id = NEW.lab_id;
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER emails_count AFTER INSERT ON emails FOR EACH ROW EXECUTE FUNCTION emails_count();
