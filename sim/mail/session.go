package mail

import (
	"errors"
	"io"
	"runtime/debug"
	"slices"

	"github.com/emersion/go-smtp"
)

// Replies the server gives for a message it will not deliver. They carry no internal
// detail: the reason goes to the log, not to the peer.
var (
	replyMalformed = &smtp.SMTPError{
		Code:         554,
		EnhancedCode: smtp.EnhancedCode{5, 6, 0},
		Message:      "Malformed message, not delivered",
	}
	replyTryLater = &smtp.SMTPError{
		Code:         451,
		EnhancedCode: smtp.EnhancedCode{4, 3, 0},
		Message:      "Message not delivered, try again later",
	}
	replyRefused = &smtp.SMTPError{
		Code:         554,
		EnhancedCode: smtp.EnhancedCode{5, 6, 0},
		Message:      "Message refused, not delivered",
	}
	replyClosing = &smtp.SMTPError{
		Code:         421,
		EnhancedCode: smtp.EnhancedCode{4, 3, 2},
		Message:      "Server shutting down",
	}
)

// ErrRefused, wrapped by an error of Config.Deliver, says the message will
// never be taken (it names no lab, say): the peer is told 554, not to try
// again later.
var ErrRefused = errors.New("mail: refused")

// session is one SMTP conversation: whether the peer signed in, and the
// envelope of the message in progress.
type session struct {
	server *Server
	authed bool
	from   string
	to     []string
}

// Mail starts a message from the envelope sender from, once the peer has
// signed in.
func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if !s.authed {
		return replyAuthRequired
	}
	s.from = from
	return nil
}

// Rcpt adds a recipient; go-smtp enforces MaxRecipients before calling it.
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

// Data reads the message, parses it and hands it to Deliver.
func (s *session) Data(r io.Reader) error {
	if !s.authed { // go-smtp asks for MAIL first; this is belt and braces
		return replyAuthRequired
	}
	if !s.server.enter() {
		return replyClosing
	}
	defer s.server.active.Done()

	raw, err := io.ReadAll(r)
	if err != nil {
		// smtp.ErrDataTooLarge (552) passes through as it is; anything else means
		// the connection broke and nobody is left to read the reply.
		return err
	}
	msg, err := parse(raw)
	if err != nil {
		s.server.log.Warn("mail: refused message", "from", s.from, "err", err)
		return replyMalformed
	}
	msg.From, msg.To = s.from, slices.Clone(s.to)
	return s.server.handOver(msg)
}

// Reset forgets the message in progress (RSET, a new EHLO, or the end of
// DATA); the sign-in stays, as it does in go-smtp.
func (s *session) Reset() {
	s.from, s.to = "", nil
}

// Logout ends the session; there is nothing to free.
func (s *session) Logout() error {
	return nil
}

// handOver calls Deliver, turning its error or panic into a 451 reply: the peer
// must not count the message as delivered, and the server must keep serving.
func (s *Server) handOver(msg Received) (err error) {
	if s.deliver == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("mail: deliver panicked", "message_id", msg.MessageID,
				"panic", p, "stack", string(debug.Stack()))
			err = replyTryLater
		}
	}()
	if err := s.deliver(s.ctx, msg); err != nil {
		s.log.Warn("mail: deliver failed", "message_id", msg.MessageID, "err", err)
		if errors.Is(err, ErrRefused) {
			return replyRefused
		}
		return replyTryLater
	}
	return nil
}
