package web

import (
	"idemlab/sim"
	"idemlab/views"
)

// diagramOf is the sequence diagram's view of an operation; nil, before the
// lab's first operation, gives the empty diagram.
func diagramOf(op *sim.Operation) views.Diagram {
	if op == nil {
		return views.Diagram{}
	}
	d := views.Diagram{
		OperationID: op.ID,
		OrderID:     op.OrderID,
		Amount:      op.Amount,
		Method:      op.Method,
		KeyStrategy: string(op.KeyStrategy),
		Attempts:    make([]views.DiagramAttempt, 0, len(op.Attempts)),
	}
	for _, a := range op.Attempts {
		da := views.DiagramAttempt{
			N:          a.N,
			HasKey:     a.Key != nil,
			Fate:       string(a.Fate),
			Status:     a.Status,
			Outcome:    string(a.Outcome),
			Deliveries: make([]views.DiagramDelivery, 0, len(a.Deliveries)),
		}
		if a.Key != nil {
			da.Key = *a.Key
		}
		if a.Error != nil {
			da.Error = *a.Error
		}
		for _, dv := range a.Deliveries {
			da.Deliveries = append(da.Deliveries, views.DiagramDelivery{Copy: dv.Copy, Status: dv.Status, Outcome: string(dv.Outcome)})
		}
		d.Attempts = append(d.Attempts, da)
	}
	return d
}
