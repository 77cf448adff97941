package views

// An attempt's copies: those the network passed on to the server, and what
// the server answered to each.

// copiesOf lists the copies the network passed to the server, a pending
// placeholder for a copy whose answer is not known yet.
func copiesOf(a DiagramAttempt) []DiagramDelivery {
	n := 1
	switch a.Fate {
	case "request-lost":
		return nil
	case "duplicate":
		n = 2
	}
	got := deliveriesOf(a)
	out := make([]DiagramDelivery, 0, n)
	for c := 1; c <= n; c++ {
		d := DiagramDelivery{Copy: c, Outcome: "pending"}
		for _, x := range got {
			if x.Copy == c {
				d = x
			}
		}
		out = append(out, d)
	}
	if a.Outcome == "not-reached" && len(got) == 0 {
		return nil // lost before the server, whatever the network was set to
	}
	if len(out) == 1 && out[0].Outcome == "not-reached" {
		return nil
	}
	return out
}

// deliveriesOf is what the server answered to each copy; an attempt that
// recorded no copies but an outcome stands for its single copy.
func deliveriesOf(a DiagramAttempt) []DiagramDelivery {
	if len(a.Deliveries) > 0 {
		return a.Deliveries
	}
	switch a.Outcome {
	case "", "pending", "not-reached":
		return nil
	}
	return []DiagramDelivery{{Copy: 1, Status: a.Status, Outcome: a.Outcome}}
}

// dropped reports whether the server died with the request: the client's
// missing answer is its doing, not a timeout's.
func dropped(copies []DiagramDelivery) bool {
	return len(copies) > 0 && copies[0].Outcome == "dropped"
}
