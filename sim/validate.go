package sim

import "fmt"

// Limits of a charge request.
const (
	MaxOrderIDLen = 64
	MaxAmount     = 1_000_000_000
	MaxKeyLen     = 255
)

// Validate reports every field of the charge that breaks its rule: an order
// id of 1–64 characters from [A-Za-z0-9._:-], an amount from 1 to 10⁹.
func (c Charge) Validate() error {
	var fs []FieldError
	if d := orderIDProblem(c.OrderID); d != "" {
		fs = append(fs, FieldError{"order_id", d})
	}
	if c.Amount < 1 || c.Amount > MaxAmount {
		fs = append(fs, FieldError{"amount", fmt.Sprintf("must be an integer from 1 to %d", MaxAmount)})
	}
	if len(fs) > 0 {
		return Invalid(fs...)
	}
	return nil
}

func orderIDProblem(id string) string {
	if id == "" || len(id) > MaxOrderIDLen {
		return fmt.Sprintf("must be 1 to %d characters long", MaxOrderIDLen)
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == ':' || r == '-'
		if !ok {
			return "may contain only letters A–Z and a–z, digits and . _ : -"
		}
	}
	return ""
}

// ParseKey reads an Idempotency-Key header value: 1–255 visible ASCII
// characters, or the same as an RFC 8941 quoted string ("abc", with \" and \\
// escapes). It returns the key or a reason it is not one.
func ParseKey(v string) (string, error) {
	if len(v) >= 2 && v[0] == '"' {
		if v[len(v)-1] != '"' {
			return "", Invalid(FieldError{"Idempotency-Key", "a quoted key must end with a double quote"})
		}
		var b []byte
		inner := v[1 : len(v)-1]
		for i := 0; i < len(inner); i++ {
			c := inner[i]
			switch {
			case c == '\\':
				if i+1 >= len(inner) || (inner[i+1] != '"' && inner[i+1] != '\\') {
					return "", Invalid(FieldError{"Idempotency-Key", `in a quoted key, \ may only escape " or \`})
				}
				i++
				b = append(b, inner[i])
			case c == '"':
				return "", Invalid(FieldError{"Idempotency-Key", `a " inside a quoted key must be escaped as \"`})
			case c < 0x20 || c > 0x7e:
				return "", Invalid(FieldError{"Idempotency-Key", "must contain only printable ASCII characters"})
			default:
				b = append(b, c)
			}
		}
		v = string(b)
		if v == "" || len(v) > MaxKeyLen {
			return "", Invalid(FieldError{"Idempotency-Key", fmt.Sprintf("must be 1 to %d characters long", MaxKeyLen)})
		}
		return v, nil
	}
	if v == "" || len(v) > MaxKeyLen {
		return "", Invalid(FieldError{"Idempotency-Key", fmt.Sprintf("must be 1 to %d characters long", MaxKeyLen)})
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return "", Invalid(FieldError{"Idempotency-Key", "must contain only visible ASCII characters (no spaces or control characters)"})
		}
	}
	return v, nil
}
