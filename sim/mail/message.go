package mail

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/quotedprintable"
	netmail "net/mail"
	"net/textproto"
	"slices"
	"strings"
	"time"
)

// Message is one email as the lab sends it.
type Message struct {
	From, To  string            // bare addresses, e.g. "shop@idemlab.test"
	Subject   string            // UTF-8; encoded as an RFC 2047 word when not ASCII
	Body      string            // UTF-8 plain text, sent quoted-printable
	MessageID string            // the Message-ID without angle brackets; "" for none
	Headers   map[string]string // extra headers sent as they are, e.g. "X-Idemlab-Order"
}

// Received is one message the server accepted.
type Received struct {
	From      string            // envelope sender (MAIL FROM)
	To        []string          // envelope recipients (RCPT TO), in order
	Subject   string            // decoded (RFC 2047) to UTF-8
	MessageID string            // without angle brackets
	Headers   map[string]string // every X-Idemlab-* header, canonical names
	Body      string            // decoded text, line breaks as "\n", without the final one
	Size      int               // bytes of DATA
}

// headerPrefix marks the headers the lab uses to tag its mail; Received keeps only these.
const headerPrefix = "X-Idemlab-"

// reserved lists the headers compose writes itself; Message.Headers may not override them.
var reserved = []string{
	"Content-Transfer-Encoding", "Content-Type", "Date", "From",
	"Message-Id", "Mime-Version", "Subject", "To",
}

// compose renders m as an RFC 5322 message with CRLF line endings.
// The body is quoted-printable so that no line exceeds SMTP's limit, and it always ends
// with one extra line break, which parse removes: a body with or without a final
// newline comes back exactly as it was sent.
func (m Message) compose(now time.Time) ([]byte, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	header := func(name, value string) { fmt.Fprintf(&b, "%s: %s\r\n", name, value) }
	header("From", "<"+m.From+">")
	header("To", "<"+m.To+">")
	header("Date", now.Format(time.RFC1123Z))
	header("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	if m.MessageID != "" {
		header("Message-Id", "<"+m.MessageID+">")
	}
	for _, name := range slices.Sorted(maps.Keys(m.Headers)) {
		header(textproto.CanonicalMIMEHeaderKey(name), m.Headers[name])
	}
	header("Mime-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")

	qp := quotedprintable.NewWriter(&b)
	io.WriteString(qp, m.Body)
	qp.Close()
	b.WriteString("\r\n")
	return b.Bytes(), nil
}

// validate refuses a message whose fields would change the meaning of the header block.
func (m Message) validate() error {
	for _, addr := range []string{m.From, m.To} {
		a, err := netmail.ParseAddress(addr)
		if err != nil || a.Address != addr || a.Name != "" {
			return fmt.Errorf("mail: %q is not a bare address", addr)
		}
	}
	if !printable(m.MessageID) || strings.ContainsAny(m.MessageID, "<> ") {
		return fmt.Errorf("mail: bad Message-ID %q", m.MessageID)
	}
	for name, value := range m.Headers {
		canon := textproto.CanonicalMIMEHeaderKey(name)
		if name == "" || strings.ContainsAny(name, ": ") || !printable(name) || slices.Contains(reserved, canon) {
			return fmt.Errorf("mail: bad header name %q", name)
		}
		if !printable(value) {
			return fmt.Errorf("mail: header %s: value must be printable ASCII", canon)
		}
	}
	return nil
}

// printable reports whether s is ASCII without control characters.
func printable(s string) bool {
	for i := range len(s) {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// errMalformed reports a message whose header or body cannot be read.
var errMalformed = errors.New("malformed message")

// parse reads raw DATA into a Received; the envelope fields are left for the caller.
func parse(raw []byte) (Received, error) {
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Received{}, fmt.Errorf("%w: %v", errMalformed, err)
	}
	body, err := decodeBody(msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
	if err != nil {
		return Received{}, fmt.Errorf("%w: body: %v", errMalformed, err)
	}
	r := Received{
		Subject:   decodeWords(msg.Header.Get("Subject")),
		MessageID: strings.Trim(msg.Header.Get("Message-Id"), "<>"),
		Headers:   make(map[string]string),
		Body:      body,
		Size:      len(raw),
	}
	for name, values := range msg.Header {
		if strings.HasPrefix(name, headerPrefix) && len(values) > 0 {
			r.Headers[name] = values[0]
		}
	}
	return r, nil
}

// decodeWords decodes RFC 2047 encoded words. A subject in a charset the decoder
// does not know is kept as it arrived rather than refused: it is still readable.
func decodeWords(s string) string {
	decoded, err := new(mime.WordDecoder).DecodeHeader(s)
	if err != nil {
		return s
	}
	return decoded
}

// decodeBody undoes the transfer encoding and normalises line breaks to "\n",
// dropping the one that ends the last line.
func decodeBody(encoding string, r io.Reader) (string, error) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, r) // skips the line breaks itself
	case "", "7bit", "8bit", "binary":
	default:
		return "", fmt.Errorf("unknown transfer encoding %q", encoding)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	return strings.TrimSuffix(text, "\n"), nil
}
