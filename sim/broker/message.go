package broker

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// maxLab bounds a lab id; ids are 22 base64url characters in practice.
const maxLab = 64

// Subject is the subject of a lab's messages: "idemlab.<lab>.payments".
func Subject(lab string) string {
	return "idemlab." + lab + ".payments"
}

// durable is the name of a lab's consumer. A valid lab id is also a valid consumer name: base64url has
// none of the characters NATS forbids there ('.', '*', '>', separators, white space).
func durable(lab string) string {
	return "lab_" + lab
}

// checkLab accepts the lab ids the broker can turn into a subject token and a consumer name: 1 to 64
// base64url characters.
func checkLab(lab string) error {
	if lab == "" || len(lab) > maxLab {
		return fmt.Errorf("broker: invalid lab id %q", lab)
	}
	for _, c := range []byte(lab) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return fmt.Errorf("broker: invalid lab id %q", lab)
		}
	}
	return nil
}

// Publish publishes data on the lab's subject and waits for the stream's ack. With msgID != "" it sets
// Nats-Msg-Id, so a second publish of the same id within the window is dropped by the broker
// (duplicate == true, and seq is the sequence of the message first published). Returns the stream
// sequence.
//
// JetStream deduplicates across the whole stream, so the header carries the lab too ("<lab>:<msgID>"):
// two labs using the same key stay apart.
func (b *Broker) Publish(ctx context.Context, lab string, data []byte, msgID string) (seq uint64, duplicate bool, err error) {
	if err := checkLab(lab); err != nil {
		return 0, false, err
	}
	if b.ctx.Err() != nil {
		return 0, false, ErrClosed
	}
	if err := b.up(ctx); err != nil {
		return 0, false, err
	}
	opts := []jetstream.PublishOpt{jetstream.WithExpectStream(b.stream.Name)}
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(lab+":"+msgID))
	}
	ack, err := b.js.Publish(ctx, Subject(lab), data, opts...)
	if err != nil {
		return 0, false, fmt.Errorf("broker: publish to lab %s: %w", lab, err)
	}
	return ack.Sequence, ack.Duplicate, nil
}

// Msg is one delivery of a message to a lab's consumer.
type Msg struct {
	Data      []byte
	Seq       uint64 // the stream sequence: the message's identity across redeliveries
	Delivered uint64 // 1 for the first delivery, 2 for the first redelivery, …
	MsgID     string // the msgID it was published with (Nats-Msg-Id without the lab), "" when none

	msg jetstream.Msg
}

// newMsg reads a delivery of the lab's from its JetStream metadata and headers.
func newMsg(lab string, jm jetstream.Msg) (*Msg, error) {
	md, err := jm.Metadata()
	if err != nil {
		return nil, err
	}
	id := jm.Headers().Get(jetstream.MsgIDHeader)
	if after, ok := strings.CutPrefix(id, lab+":"); ok {
		id = after
	}
	return &Msg{
		Data:      jm.Data(),
		Seq:       md.Sequence.Stream,
		Delivered: md.NumDelivered,
		MsgID:     id,
		msg:       jm,
	}, nil
}

// Ack acknowledges the message and waits for the server to confirm (DoubleAck).
//
// Withholding Ack — simply returning without it — makes the broker redeliver the message after the
// consumer's AckWait; that is the point.
func (m *Msg) Ack(ctx context.Context) error {
	if m.msg == nil {
		return errors.New("broker: ack of a message not delivered by a broker")
	}
	if err := m.msg.DoubleAck(ctx); err != nil {
		return fmt.Errorf("broker: ack seq %d: %w", m.Seq, err)
	}
	return nil
}
