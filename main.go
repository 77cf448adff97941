// Command idemlab runs the Idempotency Lab: a payment server with a real
// SQLite ledger, a simulated network and a retrying client, for learning why a
// retried request must not charge a customer twice.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "idemlab:", err)
		os.Exit(1)
	}
}
