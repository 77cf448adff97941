-- The second numbered migration: past the ledger (version 3 of the old
-- numbering), the email a charge sends, the broker's messages and the
-- consumer's memory, and the orders of the methods' lesson. Idempotent,
-- like 0001, so that it may run over a file that has these already.
--
-- messages is the queue's transactional outbox: a charge under notify
-- "queue" writes its message here in the payment's own transaction, and the
-- relay publishes it to the broker after the commit (published counts the
-- copies it sent). A crash between commit and publish loses nothing: the
-- relay publishes it on the next start.
CREATE TABLE IF NOT EXISTS messages (
    lab_id     TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    id         TEXT NOT NULL,              -- the message id: random, global (the broker's Nats-Msg-Id)
    seq        INTEGER NOT NULL,           -- its number in the lab: its payment's
    order_id   TEXT NOT NULL,
    payment_n  INTEGER NOT NULL,
    amount     INTEGER NOT NULL,
    fate       TEXT NOT NULL,              -- the delivery fate when it was written
    msg_dedup  INTEGER NOT NULL,           -- 1: published with Nats-Msg-Id
    published  INTEGER NOT NULL DEFAULT 0, -- copies the relay has published
    created_at INTEGER NOT NULL,
    PRIMARY KEY (lab_id, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS messages_lab_seq ON messages (lab_id, seq);
CREATE INDEX IF NOT EXISTS messages_unpublished ON messages (created_at) WHERE published = 0;
CREATE INDEX IF NOT EXISTS messages_age ON messages (created_at);

-- message_deliveries is each delivery of a message to the consumer, and
-- what the consumer made of it: sent, skipped (recognised as done), crashed.
CREATE TABLE IF NOT EXISTS message_deliveries (
    lab_id     TEXT NOT NULL,
    message_id TEXT NOT NULL,
    n          INTEGER NOT NULL,           -- 1, 2, … over every copy of the message
    stream_seq INTEGER NOT NULL,           -- the broker's sequence of the copy
    delivered  INTEGER NOT NULL,           -- the broker's delivery count of the copy
    fate       TEXT NOT NULL,
    outcome    TEXT NOT NULL CHECK (outcome IN ('sent', 'skipped', 'crashed')),
    at         INTEGER NOT NULL,
    PRIMARY KEY (lab_id, message_id, n),
    FOREIGN KEY (lab_id, message_id) REFERENCES messages (lab_id, id) ON DELETE CASCADE
) WITHOUT ROWID;

-- processed_messages is the consumer's memory: under consumer_dedup
-- "message-id" the message id, under "natural" the order ("order:<id>").
-- Its row and the email's outbox row commit together.
CREATE TABLE IF NOT EXISTS processed_messages (
    lab_id TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    at     INTEGER NOT NULL,
    PRIMARY KEY (lab_id, key)
) WITHOUT ROWID;

-- email_outbox is each email the lab's server has decided to send, born
-- claimed by the one who wrote it (the handler, the consumer), who sends
-- it after the commit; the lab's mailbox marks it sent as it receives it.
-- The mailer sends what a crash or a refusal left unsent.
CREATE TABLE IF NOT EXISTS email_outbox (
    lab_id     TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    id         TEXT NOT NULL,              -- the email's Message-ID: random, global
    order_id   TEXT NOT NULL,
    amount     INTEGER NOT NULL,
    payment_n  INTEGER NOT NULL,           -- the payment it tells of
    message_id TEXT,                       -- the broker message that asked for it; NULL: the handler's own
    claimed_at INTEGER NOT NULL DEFAULT 0, -- unix ms: a sender holds it (claimTime)
    sent       INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (lab_id, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS email_outbox_unsent ON email_outbox (created_at) WHERE sent = 0;
CREATE INDEX IF NOT EXISTS email_outbox_payment ON email_outbox (lab_id, payment_n) WHERE message_id IS NULL;

-- emails is what the lab's mailbox received over SMTP.
CREATE TABLE IF NOT EXISTS emails (
    lab_id      TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    n           INTEGER NOT NULL,          -- from 1 in the lab
    email_id    TEXT NOT NULL,             -- its Message-ID
    to_addr     TEXT NOT NULL,
    subject     TEXT NOT NULL,
    order_id    TEXT NOT NULL,
    message_id  TEXT,                      -- the broker message behind it, if any
    received_at INTEGER NOT NULL,
    PRIMARY KEY (lab_id, n)
) WITHOUT ROWID;

-- mail_counts and email_stats are kept like lab_counts and order_stats:
-- the mailbox's size and its orders with more than one email.
CREATE TABLE IF NOT EXISTS mail_counts (
    lab_id      TEXT PRIMARY KEY REFERENCES labs (id) ON DELETE CASCADE,
    emails      INTEGER NOT NULL DEFAULT 0,
    doubled     INTEGER NOT NULL DEFAULT 0  -- orders with more than one email
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS email_stats (
    lab_id   TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    order_id TEXT NOT NULL,
    emails   INTEGER NOT NULL DEFAULT 0,
    first_n  INTEGER NOT NULL,
    PRIMARY KEY (lab_id, order_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS email_stats_doubled ON email_stats (lab_id, first_n) WHERE emails > 1;

CREATE TRIGGER IF NOT EXISTS emails_count AFTER INSERT ON emails BEGIN
    INSERT INTO email_stats (lab_id, order_id, emails, first_n) VALUES (NEW.lab_id, NEW.order_id, 1, NEW.n)
    ON CONFLICT (lab_id, order_id) DO UPDATE SET emails = emails + 1;
    INSERT INTO mail_counts (lab_id) VALUES (NEW.lab_id) ON CONFLICT (lab_id) DO NOTHING;
    UPDATE mail_counts SET
        emails = emails + 1,
        doubled = doubled + (SELECT emails = 2 FROM email_stats WHERE lab_id = NEW.lab_id AND order_id = NEW.order_id)
    WHERE lab_id = NEW.lab_id;
END;

-- orders is the lab's order resource, for the HTTP methods' lesson: PUT
-- sets an order (the same state however often it is sent), DELETE removes
-- it (the answer differs the second time, the state does not).
CREATE TABLE IF NOT EXISTS orders (
    lab_id     TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    order_id   TEXT NOT NULL,
    amount     INTEGER NOT NULL CHECK (amount > 0),
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (lab_id, order_id)
) WITHOUT ROWID;
