package mail

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Send delivers m over plain SMTP (no TLS) to the server, signing in with its
// credentials when it has some (AUTH PLAIN, to a loopback address only); ctx
// bounds the whole exchange (dial, AUTH, MAIL, RCPT, DATA, QUIT). A refusal by
// the server is returned as an error that wraps *smtp.SMTPError (errors.As works).
//
// Once the server has accepted the message, Send reports success even if QUIT then
// fails or ctx ends: the message is delivered, and an error would invite a caller
// to send it twice.
func Send(ctx context.Context, to Dest, m Message) error {
	data, err := m.compose(time.Now())
	if err != nil {
		return err
	}
	auth, err := to.plainAuth()
	if err != nil {
		return err
	}
	addr := to.Addr
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("mail: send to %s: %w", addr, err)
	}
	// go-smtp sets and clears deadlines on the connection around every command, so
	// a deadline of ours would not last; closing the connection when ctx ends does.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	c := smtp.NewClient(conn)
	defer c.Close()
	if err := transmit(c, auth, m, data); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("mail: send to %s: %w", addr, context.Cause(ctx))
		}
		return fmt.Errorf("mail: send to %s: %w", addr, err)
	}
	c.Quit()
	return nil
}

// transmit signs in (when auth is not nil) and runs one mail transaction up
// to the server's reply to the message.
func transmit(c *smtp.Client, auth sasl.Client, m Message, data []byte) error {
	if auth != nil {
		if err := c.Auth(auth); err != nil {
			return err
		}
	}
	// Declaring the size lets a server refuse an oversized message before it is sent.
	if err := c.Mail(m.From, &smtp.MailOptions{Size: int64(len(data))}); err != nil {
		return err
	}
	if err := c.Rcpt(m.To, nil); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
