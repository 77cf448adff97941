package store

import "context"

// sqlBury takes away the rows of the processes whose lease ended a whole
// lease (?2 ms) ago: dead. A row held by a writing transaction of its
// process (hold_lease's shared lock) is left for the next time: that write
// may commit. Only a dead process's lock is tried (OFFSET 0 keeps the
// lease's test first), and it is held until the burial commits.
const sqlBury = `DELETE FROM processes WHERE id IN (
    SELECT id FROM (SELECT id FROM processes WHERE id <> ?1 AND lease_until <= db_ms() - ?2 OFFSET 0) AS dead
    WHERE pg_try_advisory_xact_lock(1, hashtext(id)))
RETURNING name`

// sqlAlone waits, on PostgreSQL, until the other writing transactions of
// process ?1 have ended: their lease step's lock (hold_lease), taken alone.
const sqlAlone = `SELECT pg_advisory_xact_lock(1, hashtext(?))`

// MendDead takes away the rows of the dead processes and mends the work of
// every process with no row (Mending), in one transaction: a process
// renewing its lease finds its row gone, and knows it. Nothing without a
// mender.
func (s *Store) MendDead(ctx context.Context) error {
	fn := s.mender.get()
	if fn == nil {
		return nil
	}
	var dead []string
	err := s.Write(ctx, func(tx *Tx) error {
		dead = dead[:0]
		if s.Postgres() {
			rows, err := tx.Query(sqlBury, s.m.ID(), s.m.Lease().Milliseconds())
			if err != nil {
				return err
			}
			for rows.Next() {
				var name string
				if err := rows.Scan(&name); err != nil {
					rows.Close()
					return err
				}
				dead = append(dead, name)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return fn(tx)
	})
	if err == nil && len(dead) > 0 {
		s.m.Log().Info("processes dead (their leases ended): their work mended", "processes", dead)
	}
	return err
}

// leave ends the membership: no more renewals, and the row goes, with what
// mending the process's own work left over (a lease that was lost leaves
// the row to the others, who mend it once dead).
func (s *Store) leave() {
	m := s.m
	if !m.Stop() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.Lease())
	defer cancel()
	fn := s.mender.get()
	err := s.Write(ctx, func(tx *Tx) error {
		if s.Postgres() {
			if _, err := tx.Exec(sqlAlone, m.ID()); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(`DELETE FROM processes WHERE id = ?`, m.ID()); err != nil || fn == nil {
			return err
		}
		return fn(tx)
	})
	if err != nil {
		m.Log().Warn("leave the database: the lease ends by itself", "err", err)
	}
}
