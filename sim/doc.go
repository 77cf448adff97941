// Package sim is the lab's vocabulary: settings, outcomes, errors and their
// codes, events, and the plain values every room passes around (payments,
// operations, actions, emails). It does no I/O. Each mechanism is a room of
// its own below it: store, labs, ledger, idempotency, client, notify,
// orders, lesson, scenario, compare, cluster, and house, which wires them.
package sim
