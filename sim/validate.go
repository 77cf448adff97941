package sim

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
	if f, bad := orderIDProblem(c.OrderID); bad {
		fs = append(fs, f)
	}
	if c.Amount < 1 || c.Amount > MaxAmount {
		fs = append(fs, Broke("amount", "range", 1, MaxAmount))
	}
	if len(fs) > 0 {
		return Invalid(fs...)
	}
	return nil
}

func orderIDProblem(id string) (FieldError, bool) {
	if id == "" || len(id) > MaxOrderIDLen {
		return Broke("order_id", "length", 1, MaxOrderIDLen), true
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == ':' || r == '-'
		if !ok {
			return Broke("order_id", "order-chars"), true
		}
	}
	return FieldError{}, false
}

// ParseKey reads an Idempotency-Key header value: 1–255 visible ASCII
// characters, or the same as an RFC 8941 quoted string ("abc", with \" and \\
// escapes). It returns the key or a reason it is not one.
func ParseKey(v string) (string, error) {
	if len(v) >= 2 && v[0] == '"' {
		if v[len(v)-1] != '"' {
			return "", Invalid(Broke("Idempotency-Key", "key-quote-end"))
		}
		var b []byte
		inner := v[1 : len(v)-1]
		for i := 0; i < len(inner); i++ {
			c := inner[i]
			switch {
			case c == '\\':
				if i+1 >= len(inner) || (inner[i+1] != '"' && inner[i+1] != '\\') {
					return "", Invalid(Broke("Idempotency-Key", "key-escape"))
				}
				i++
				b = append(b, inner[i])
			case c == '"':
				return "", Invalid(Broke("Idempotency-Key", "key-inner-quote"))
			case c < 0x20 || c > 0x7e:
				return "", Invalid(Broke("Idempotency-Key", "key-printable"))
			default:
				b = append(b, c)
			}
		}
		v = string(b)
		if v == "" || len(v) > MaxKeyLen {
			return "", Invalid(Broke("Idempotency-Key", "length", 1, MaxKeyLen))
		}
		return v, nil
	}
	if v == "" || len(v) > MaxKeyLen {
		return "", Invalid(Broke("Idempotency-Key", "length", 1, MaxKeyLen))
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return "", Invalid(Broke("Idempotency-Key", "key-visible"))
		}
	}
	return v, nil
}
