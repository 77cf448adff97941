-- The sixteenth numbered migration on SQLite (PostgreSQL's 0016 changes
-- nothing: its payments are counted by statement, migration 6): a new
-- payment's lab counts go up without reading its order's row again. The
-- counting trigger wrote the order's row, then read it twice more to move
-- the lab's "doubled" and "overcharged"; those two move only when an
-- order's charges do, so a trigger on that update moves them, from the
-- row's old and new counts, and a payment of a new order (an insert, by
-- far the most of them) only adds itself to the lab's payments and total.
-- The counts are those the old trigger kept: "doubled" rises when an
-- order's charges go from below 2 to 2 or more; "overcharged" moves by
-- f(new) - f(old), f(c) = c > 1 AND c > purchases (migration 6 on
-- PostgreSQL).
DROP TRIGGER IF EXISTS payments_count;
CREATE TRIGGER IF NOT EXISTS payments_count AFTER INSERT ON payments BEGIN
    INSERT INTO order_stats (lab_id, order_id, charges, total, first_n, first_amount)
    VALUES (NEW.lab_id, NEW.order_id, 1, NEW.amount, NEW.n, NEW.amount)
    ON CONFLICT (lab_id, order_id) DO UPDATE SET
        charges = charges + 1, total = total + excluded.total,
        first_n = COALESCE(first_n, excluded.first_n), first_amount = COALESCE(first_amount, excluded.first_amount);
    UPDATE lab_counts SET payments = payments + 1, total = total + NEW.amount WHERE lab_id = NEW.lab_id;
END;
CREATE TRIGGER IF NOT EXISTS order_stats_charged AFTER UPDATE OF charges ON order_stats
WHEN NEW.charges <> OLD.charges BEGIN
    UPDATE lab_counts SET
        doubled = doubled + (OLD.charges < 2 AND NEW.charges >= 2),
        overcharged = overcharged + (NEW.charges > 1 AND NEW.charges > NEW.purchases)
                                  - (OLD.charges > 1 AND OLD.charges > OLD.purchases)
    WHERE lab_id = NEW.lab_id;
END;
