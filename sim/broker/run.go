package broker

import (
	"context"
	"errors"
	"runtime/debug"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

const (
	retryWait = time.Second // before pulling again after the server dropped the consumer
	minPoll   = 10 * time.Millisecond
	maxPoll   = time.Second
)

// A run is one lab's delivery goroutine: it pulls the lab's messages and calls the handler.
type run struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has returned
}

// start runs h over the consumer's messages until the run is stopped or the Broker closes.
func (b *Broker) start(lab string, ackWait time.Duration, cons jetstream.Consumer, h func(context.Context, *Msg)) *run {
	ctx, cancel := context.WithCancel(b.ctx)
	r := &run{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		b.deliver(ctx, lab, ackWait, cons, h)
	}()
	return r
}

// stop cancels the handler's context and waits for the run to return.
func (r *run) stop() {
	r.cancel()
	<-r.done
}

// deliver pulls the lab's messages into h until ctx ends, starting over — with the consumer re-created
// if need be — when the server stops serving it.
func (b *Broker) deliver(ctx context.Context, lab string, ackWait time.Duration, cons jetstream.Consumer, h func(context.Context, *Msg)) {
	for {
		err := b.pull(ctx, lab, cons, h)
		if ctx.Err() != nil {
			return
		}
		if !b.watch.Down() { // a server down is logged once, by its watch
			b.log.Warn("broker: consumer interrupted", "lab", lab, "err", err)
		}
		for {
			if !sleep(ctx, retryWait) {
				return
			}
			cons, err = b.ensureConsumer(ctx, lab, ackWait)
			if err == nil {
				break
			}
			if !b.watch.Down() {
				b.log.Warn("broker: consumer not restored", "lab", lab, "err", err)
			}
		}
	}
}

// pull calls h for each message of one pull subscription, until ctx ends or the subscription fails.
//
// It asks for one message at a time: JetStream starts a message's AckWait when it sends the message,
// so one prefetched behind a slow handler could be redelivered before the handler ever saw it.
//
// Each wait for a message is bounded, short right after a delivery and longer while the lab is idle.
// The iterator asks the server for more only when Next is called, and right after a delivery it can
// take its previous request for one still in flight and ask for nothing; the next call repairs that.
func (b *Broker) pull(ctx context.Context, lab string, cons jetstream.Consumer, h func(context.Context, *Msg)) error {
	it, err := cons.Messages(jetstream.PullMaxMessages(1))
	if err != nil {
		return err
	}
	defer unsubscribe(it)
	poll := minPoll
	for {
		jm, err := next(ctx, it, poll)
		if ctx.Err() != nil {
			return ctx.Err() // a message received just now stays unacked, for the next run
		}
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			poll = min(2*poll, maxPoll)
			continue
		case errors.Is(err, jetstream.ErrNoHeartbeat):
			continue // a slow or reconnecting server: the iterator asks again
		case err != nil:
			return err
		}
		poll = minPoll
		m, err := newMsg(lab, jm)
		if err != nil {
			b.log.Warn("broker: message without metadata", "lab", lab, "err", err)
			continue
		}
		b.handle(ctx, lab, h, m)
	}
}

// next waits up to d for the iterator's next message.
func next(ctx context.Context, it jetstream.MessagesContext, d time.Duration) (jetstream.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return it.Next(jetstream.NextContext(ctx))
}

// unsubscribe ends the iterator's subscription and waits until the server has dropped it, so that a
// message published after Stop returns is not sent to the stopped run (where it would count as
// delivered and come back only after AckWait). Messages already buffered are dropped unacked: the
// server sends them again after AckWait.
func unsubscribe(it jetstream.MessagesContext) {
	it.Drain()
	for {
		if _, err := it.Next(jetstream.NextMaxWait(drainTimeout)); err != nil {
			return
		}
	}
}

// handle calls h, turning a panic into a log line: the message stays unacked and comes back after
// AckWait, at most maxDeliver times, instead of taking the process down.
func (b *Broker) handle(ctx context.Context, lab string, h func(context.Context, *Msg), m *Msg) {
	defer func() {
		if v := recover(); v != nil {
			b.log.Error("broker: handler panicked", "lab", lab, "seq", m.Seq, "panic", v, "stack", string(debug.Stack()))
		}
	}()
	h(ctx, m)
}

// sleep waits for d or until ctx ends, reporting whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
