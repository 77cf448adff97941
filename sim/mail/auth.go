package mail

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"net"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// The embedded mailbox takes mail only from this process: every start makes
// credentials of its own, kept in memory, and a peer must sign in with them
// (AUTH PLAIN) before MAIL. Another user of the machine can reach the
// loopback port but cannot deliver. AUTH PLAIN goes without TLS because it
// never leaves the machine: Send gives credentials to loopback addresses
// only, where no other local user can read the traffic.

// Dest is a server to send to: its address and, for a server that asks for
// them (the lab's own mailbox), the credentials to sign in with. With no
// Username, Send signs in with none: an external server such as a
// teacher's Mailpit.
type Dest struct {
	Addr               string // "host:port"
	Username, Password string
}

// String names the server by its address only, so that a Dest printed in a
// log or an error never shows its password.
func (d Dest) String() string { return d.Addr }

// plainAuth is the sign-in Send gives a Dest, or nil for none. Credentials
// go in plain text, so only to a loopback address.
func (d Dest) plainAuth() (sasl.Client, error) {
	if d.Username == "" {
		return nil, nil
	}
	if err := loopback(d.Addr); err != nil {
		return nil, fmt.Errorf("mail: send to %s: credentials go in plain text: %w", d.Addr, err)
	}
	return sasl.NewPlainClient("", d.Username, d.Password), nil
}

// loopback refuses an address ("host:port") off this machine's loopback.
func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address", addr)
	}
	return nil
}

// replyAuthRequired answers MAIL before a successful AUTH (RFC 4954).
var replyAuthRequired = &smtp.SMTPError{
	Code:         530,
	EnhancedCode: smtp.EnhancedCode{5, 7, 0},
	Message:      "Authentication required",
}

// newSecret returns n random bytes as text, for a credential.
func newSecret(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return fmt.Sprintf("%x", b)
}

// Dest is where this process sends to the server: its address and the
// credentials of this start. Only the process that started the server
// knows them.
func (s *Server) Dest() Dest {
	return Dest{Addr: s.Addr(), Username: s.user, Password: s.pass}
}

// AuthMechanisms offers AUTH PLAIN.
func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

// Auth checks a sign-in against the server's credentials, in constant time.
func (s *session) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		okUser := subtle.ConstantTimeCompare([]byte(username), []byte(s.server.user))
		okPass := subtle.ConstantTimeCompare([]byte(password), []byte(s.server.pass))
		if okUser&okPass != 1 || (identity != "" && identity != username) {
			s.server.log.Warn("mail: refused a sign-in")
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}), nil
}
