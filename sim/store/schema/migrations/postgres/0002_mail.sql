-- The second numbered migration on PostgreSQL: past the ledger, as
-- SQLite's 0002. Idempotent, like 0001.

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
    created_at BIGINT NOT NULL,
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
    at         BIGINT NOT NULL,
    PRIMARY KEY (lab_id, message_id, n),
    FOREIGN KEY (lab_id, message_id) REFERENCES messages (lab_id, id) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS processed_messages (
    lab_id TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    at     BIGINT NOT NULL,
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
    created_at BIGINT NOT NULL,
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
    received_at BIGINT NOT NULL,
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
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (lab_id, order_id)
);

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
