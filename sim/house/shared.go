package house

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"idemlab/sim"
	"idemlab/sim/store"
)

// privateParts are the parts a process may keep to itself, in the order
// the refusal names them: what each keeps from the other processes on the
// database, and the flag that shares it instead (SPEC, "Shared parts are
// shared").
var privateParts = []struct{ part, name, flag, example, why string }{
	{sim.PartKV, "its Redis", "-redis", "redis://host:6379/0",
		"set-nx needs a shared Redis (a key taken through one process must stop a retry through another)"},
	{sim.PartBroker, "its NATS", "-nats", "nats://host:4222",
		"the queue needs a shared NATS (a message one process left unacknowledged must come back through another)"},
}

// embedded names the parts this house would run inside the process: the
// key-value store without a Redis to use, the broker without a NATS.
func embedded(cfg Config) []string {
	var parts []string
	if cfg.KV && cfg.Redis == "" {
		parts = append(parts, sim.PartKV)
	}
	if cfg.Notify.WithQueue && cfg.Notify.NATS == "" {
		parts = append(parts, sim.PartBroker)
	}
	return parts
}

// join joins the processes on the database with the parts this house
// would keep to itself (store.Join), and turns a refusal into a message
// that names the flags to start with.
func join(ctx context.Context, cfg Config) error {
	err := cfg.Store.Join(ctx, embedded(cfg))
	var crowd *store.Crowded
	if !errors.As(err, &crowd) {
		return err
	}
	var needs, flags []string
	for _, p := range privateParts {
		if slices.Contains(crowd.Mine, p.part) || slices.Contains(crowd.Theirs, p.part) {
			needs, flags = append(needs, p.why), append(flags, p.flag+" "+p.example)
		}
	}
	return fmt.Errorf("another lab process runs on this database (%s): %s. Start every process on this database with %s "+
		"(this one would keep %s to itself; that one keeps %s)", crowd.Peer, strings.Join(needs, "; "), strings.Join(flags, " "),
		named(crowd.Mine), named(crowd.Theirs))
}

// named lists parts for the refusal's words.
func named(parts []string) string {
	var names []string
	for _, p := range privateParts {
		if slices.Contains(parts, p.part) {
			names = append(names, p.name)
		}
	}
	if len(names) == 0 {
		return "nothing"
	}
	return strings.Join(names, " and ")
}
