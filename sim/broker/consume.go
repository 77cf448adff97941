package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

const (
	maxDeliver    = 20               // deliveries of one message before the broker gives up on it (a poisoned message)
	maxAckPending = 256              // unacked messages a lab's consumer may hold before delivery pauses
	opTimeout     = 10 * time.Second // for Consume to create or update the durable
)

// A slot serializes Consume, Stop and Remove of one lab, so that at most one run delivers the lab's
// messages and a restart waits for the previous handler to return.
type slot struct {
	mu   sync.Mutex
	run  *run // the lab's running consumer, nil when stopped
	gone bool // the slot has left Broker.slots; its lab needs a fresh one
}

// acquire returns the lab's slot, locked.
func (b *Broker) acquire(lab string) (*slot, error) {
	for {
		b.mu.Lock()
		if b.shut {
			b.mu.Unlock()
			return nil, ErrClosed
		}
		s := b.slots[lab]
		if s == nil {
			s = new(slot)
			b.slots[lab] = s
		}
		b.mu.Unlock()

		s.mu.Lock()
		if !s.gone {
			return s, nil
		}
		s.mu.Unlock()
	}
}

// release unlocks the lab's slot, dropping it from Broker.slots when nothing runs there.
func (b *Broker) release(lab string, s *slot) {
	if s.run == nil && !s.gone {
		s.gone = true
		b.mu.Lock()
		delete(b.slots, lab)
		b.mu.Unlock()
	}
	s.mu.Unlock()
}

// halt stops the slot's run, if any, and waits for its handler to return. The caller holds s.mu.
func (b *Broker) halt(s *slot) {
	if s.run == nil {
		return
	}
	s.run.stop()
	s.run = nil
	b.running.Add(-1)
}

// Consume starts (or restarts, with a new ackWait) the lab's durable consumer and calls h for each
// delivery, one at a time per lab, from a goroutine the Broker owns. The consumer acks explicitly,
// delivers everything in the stream, lets up to 256 messages wait for an ack and gives up on a message
// after 20 deliveries, so a poisoned message cannot loop forever. Calling Consume again for the same
// lab replaces the handler and ackWait without losing messages: it returns once the previous handler
// has.
//
// h gets a context that ends when the consumer is stopped or the Broker closes. A panicking h is
// logged and its message left unacked. h must not call Consume, Stop or Remove for its own lab, nor
// Close: they wait for h to return.
func (b *Broker) Consume(lab string, ackWait time.Duration, h func(ctx context.Context, m *Msg)) error {
	if err := checkLab(lab); err != nil {
		return err
	}
	if ackWait <= 0 {
		return fmt.Errorf("broker: consume lab %s: ackWait %v is not positive", lab, ackWait)
	}
	s, err := b.acquire(lab)
	if err != nil {
		return err
	}
	defer b.release(lab, s)

	// Update the durable first: should that fail, the previous run goes on.
	ctx, cancel := context.WithTimeout(b.ctx, opTimeout)
	defer cancel()
	cons, err := b.ensureConsumer(ctx, lab, ackWait)
	if err != nil {
		return err
	}
	b.halt(s)
	s.run = b.start(lab, ackWait, cons, h)
	b.running.Add(1)
	return nil
}

// ensureConsumer creates the lab's durable or brings it to ackWait, re-creating the stream first if
// the server has lost it (an external server restarted without its store).
func (b *Broker) ensureConsumer(ctx context.Context, lab string, ackWait time.Duration) (jetstream.Consumer, error) {
	cfg := jetstream.ConsumerConfig{
		Durable:       durable(lab),
		FilterSubject: Subject(lab), // one subject: nats-server 2.9 knows no FilterSubjects
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxDeliver:    maxDeliver,
		MaxAckPending: maxAckPending,
	}
	if err := b.up(ctx); err != nil {
		return nil, fmt.Errorf("broker: consumer for lab %s: %w", lab, err)
	}
	cons, err := b.js.CreateOrUpdateConsumer(ctx, b.stream.Name, cfg)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if err = b.ensureStream(ctx); err == nil {
			cons, err = b.js.CreateOrUpdateConsumer(ctx, b.stream.Name, cfg)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("broker: consumer for lab %s: %w", lab, err)
	}
	return cons, nil
}

// Stop stops consuming for the lab (the durable and its messages stay, for a later Consume). It returns
// once the lab's handler has.
func (b *Broker) Stop(lab string) {
	s, err := b.acquire(lab)
	if err != nil {
		return // closed: nothing runs
	}
	b.halt(s)
	b.release(lab, s)
}

// Remove stops consuming, deletes the lab's durable consumer and purges the lab's subject from the
// stream. The lab's message ids stay in the duplicate window: publishing one again within it is still
// reported as a duplicate.
func (b *Broker) Remove(ctx context.Context, lab string) error {
	if err := checkLab(lab); err != nil {
		return err
	}
	s, err := b.acquire(lab)
	if err != nil {
		return err
	}
	defer b.release(lab, s)
	b.halt(s)

	err = b.js.DeleteConsumer(ctx, b.stream.Name, durable(lab))
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("broker: remove lab %s: %w", lab, err)
	}
	stream, err := b.js.Stream(ctx, b.stream.Name)
	if err == nil {
		err = stream.Purge(ctx, jetstream.WithPurgeSubject(Subject(lab)))
	}
	if err != nil {
		return fmt.Errorf("broker: purge lab %s: %w", lab, err)
	}
	return nil
}

// Consuming reports how many labs have a consumer running (for a bound check / tests).
func (b *Broker) Consuming() int {
	return int(b.running.Load())
}
