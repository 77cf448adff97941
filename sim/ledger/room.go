package ledger

import "idemlab/sim/labs"

// Room is the ledger's part in a lab's life: its payments, their counts
// and each order's.
func (g *Ledger) Room() labs.Room {
	return labs.Tables{
		Store: g.Store,
		Resets: []string{
			`DELETE FROM order_stats WHERE lab_id = ?1`,
			`DELETE FROM payments WHERE lab_id = ?1`,
			`UPDATE lab_counts SET payments = 0, total = 0, doubled = 0, overcharged = 0 WHERE lab_id = ?1`,
		},
		Purges: []string{
			`DELETE FROM payments WHERE (lab_id, n) IN (SELECT lab_id, n FROM payments WHERE lab_id = ?1 LIMIT ?2)`,
			`DELETE FROM order_stats WHERE (lab_id, order_id) IN (SELECT lab_id, order_id FROM order_stats WHERE lab_id = ?1 LIMIT ?2)`,
		},
	}
}
