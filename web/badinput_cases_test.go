package web_test

import (
	"io"
	"net/http"
	"strings"
)

// badKey is the Idempotency-Key that every bad request carries unless its
// case says otherwise. After all cases it must still be free in every lab:
// nothing, not even an idempotency record, is written for a rejected request.
const badKey = "bad-input-key-1"

// The placeholders of a badCase path: {lab} is the lab's API prefix,
// /api/v1/labs/{id}; {op} the id of an operation that exists in that lab.
const (
	unknownLab   = "/api/v1/labs/AAAAAAAAAAAAAAAAAAAAAA" // the shape of a lab id, but no such lab
	malformedLab = "/api/v1/labs/not*a*lab"
)

// badCase is one bad request and the problem it must get.
type badCase struct {
	name    string
	method  string   // default POST
	path    string   // with {lab} and {op} placeholders; default {lab}/charges
	body    string   // sent as is, with Content-Type: application/json unless headers say otherwise
	headers []string // pairs for s.do; nil means Idempotency-Key: badKey. A "" value deletes the header.
	only    string   // run only in the lab with this protection
	// build, when set, makes the request instead of s.do (for what s.do cannot send).
	build func(url string) *http.Request

	status int
	typ    string // problem type, /problems/…
	field  string // for validation errors: a field the errors array must name
}

func key(k string) []string { return []string{"Idempotency-Key", k} }

const validCharge = `{"order_id":"order-42","amount":1500}`

// bigBody is a valid-looking charge of about 70 KiB: over the 64 KiB limit.
func bigBody() string { return `{"order_id":"` + strings.Repeat("a", 70<<10) + `","amount":1500}` }

// chunked builds a POST whose length the client does not know, so it goes
// out with Transfer-Encoding: chunked and no Content-Length.
func chunked(body string, headers ...string) func(url string) *http.Request {
	return func(url string) *http.Request {
		half := len(body) / 2
		req, err := http.NewRequest(http.MethodPost, url, io.MultiReader(strings.NewReader(body[:half]), strings.NewReader(body[half:])))
		if err != nil {
			panic(err)
		}
		req.ContentLength = -1
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		return req
	}
}

const (
	pValidation = "/problems/validation-error"
	pNotFound   = "/problems/not-found"
	pKeyMissing = "/problems/idempotency-key-missing"
	pTooLarge   = "/problems/body-too-large"
	pMediaType  = "/problems/unsupported-media-type"
	pMethod     = "/problems/method-not-allowed"
	pKeyReused  = "/problems/idempotency-key-reused"
	pInFlight   = "/problems/request-in-flight"
)

// badCases is the table; the charge cases also seed FuzzCharge.
var badCases = []badCase{
	// The body's syntax.
	{name: "malformed JSON", body: `{"order_id": "order-42", "amount": 1500,,}`, status: 400, typ: pValidation},
	{name: "truncated JSON", body: `{"order_id": "order-42", "amo`, status: 400, typ: pValidation},
	{name: "JSON array", body: `[{"order_id":"order-42","amount":1500}]`, status: 400, typ: pValidation},
	{name: "JSON string", body: `"order-42"`, status: 400, typ: pValidation},
	{name: "empty body", body: "", headers: []string{"Content-Type", "application/json", "Idempotency-Key", badKey}, status: 400, typ: pValidation},
	{name: "whitespace body", body: " \n\t ", status: 400, typ: pValidation},
	{name: "two objects", body: validCharge + validCharge, status: 400, typ: pValidation},
	{name: "object then garbage", body: validCharge + ` x`, status: 400, typ: pValidation},
	// Types.
	{name: "amount string", body: `{"order_id":"order-42","amount":"1500"}`, status: 400, typ: pValidation, field: "amount"},
	{name: "amount float", body: `{"order_id":"order-42","amount":1500.5}`, status: 400, typ: pValidation, field: "amount"},
	{name: "amount bool", body: `{"order_id":"order-42","amount":true}`, status: 400, typ: pValidation, field: "amount"},
	{name: "amount object", body: `{"order_id":"order-42","amount":{"v":1}}`, status: 400, typ: pValidation, field: "amount"},
	{name: "order_id number", body: `{"order_id":42,"amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	{name: "order_id array", body: `{"order_id":["order-42"],"amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	// Ranges.
	{name: "amount 1e20", body: `{"order_id":"order-42","amount":1e20}`, status: 400, typ: pValidation, field: "amount"},
	{name: "amount 20 digits", body: `{"order_id":"order-42","amount":99999999999999999999}`, status: 400, typ: pValidation, field: "amount"},
	{name: "amount 0", body: `{"order_id":"order-42","amount":0}`, status: 400, typ: pValidation, field: "amount"},
	{name: "amount negative", body: `{"order_id":"order-42","amount":-1500}`, status: 400, typ: pValidation, field: "amount"},
	{name: "amount over max", body: `{"order_id":"order-42","amount":1000000001}`, status: 400, typ: pValidation, field: "amount"},
	{name: "amount int64 min", body: `{"order_id":"order-42","amount":-9223372036854775808}`, status: 400, typ: pValidation, field: "amount"},
	{name: "order_id empty", body: `{"order_id":"","amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	{name: "order_id 65 chars", body: `{"order_id":"` + strings.Repeat("o", 65) + `","amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	{name: "order_id spaces", body: `{"order_id":"order 42","amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	{name: "order_id unicode", body: `{"order_id":"заказ-42","amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	{name: "order_id script", body: `{"order_id":"<script>alert(1)</script>","amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	{name: "order_id NUL", body: `{"order_id":"order\u0000","amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	// Presence.
	{name: "missing order_id", body: `{"amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	{name: "missing amount", body: `{"order_id":"order-42"}`, status: 400, typ: pValidation, field: "amount"},
	{name: "empty object", body: `{}`, status: 400, typ: pValidation, field: "amount"},
	{name: "null values", body: `{"order_id":null,"amount":null}`, status: 400, typ: pValidation, field: "order_id"},
	{name: "null body", body: `null`, status: 400, typ: pValidation, field: "order_id"},
	{name: "unknown field", body: `{"order_id":"order-42","amount":1500,"currency":"RUB"}`, status: 400, typ: pValidation, field: "currency"},
	// JSON that parsers read differently: one plain value per field, names
	// exactly as documented, UTF-8, numbers a JavaScript program reads alike.
	{name: "amount twice", body: `{"order_id":"order-42","amount":1500,"amount":1}`, status: 400, typ: pValidation, field: "amount"},
	{name: "amount twice, same value", body: `{"order_id":"order-42","amount":1500,"amount":1500}`, status: 400, typ: pValidation, field: "amount"},
	{name: "amount twice, escaped", body: `{"order_id":"order-42","amount":1500,"\u0061mount":1}`, status: 400, typ: pValidation, field: "amount"},
	{name: "order_id twice, first invalid", body: `{"order_id":"order 42","order_id":"order-42","amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	{name: "Amount", body: `{"order_id":"order-42","Amount":1500}`, status: 400, typ: pValidation, field: "Amount"},
	{name: "ORDER_ID", body: `{"ORDER_ID":"order-42","amount":1500}`, status: 400, typ: pValidation, field: "ORDER_ID"},
	{name: "amount and AMOUNT", body: `{"order_id":"order-42","amount":1500,"AMOUNT":1}`, status: 400, typ: pValidation, field: "AMOUNT"},
	{name: "order_id invalid UTF-8", body: "{\"order_id\":\"order-\xff\",\"amount\":1500}", status: 400, typ: pValidation, field: "order_id"},
	{name: "order_id half a surrogate pair", body: `{"order_id":"order-\ud800","amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	{name: "name invalid UTF-8", body: "{\"order_id\":\"order-42\",\"amount\":1500,\"\xff\":1}", status: 400, typ: pValidation},
	{name: "operation fate twice", path: "{lab}/operations", body: `{"order_id":"order-42","amount":1500,"fate":"ok","fate":"response-lost"}`, status: 400, typ: pValidation, field: "fate"},
	{name: "operation Fate", path: "{lab}/operations", body: `{"order_id":"order-42","amount":1500,"Fate":"ok"}`, status: 400, typ: pValidation, field: "Fate"},
	{name: "race parallel twice", path: "{lab}/operations/{op}/race", body: `{"parallel":2,"parallel":64}`, status: 400, typ: pValidation, field: "parallel"},
	{name: "retry with_key twice", path: "{lab}/operations/{op}/retry", body: `{"with_key":true,"with_key":false}`, status: 400, typ: pValidation, field: "with_key"},
	{name: "lesson twice", path: "{lab}/lesson", body: `{"lesson":1,"lesson":2}`, status: 400, typ: pValidation, field: "lesson"},
	{name: "lesson step At", path: "{lab}/lesson/step", body: `{"At":0}`, status: 400, typ: pValidation, field: "At"},
	// The Idempotency-Key header.
	{name: "key empty", build: func(url string) *http.Request {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(validCharge))
		req.Header.Set("Content-Type", "application/json")
		req.Header["Idempotency-Key"] = []string{""}
		return req
	}, status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key 256 chars", body: validCharge, headers: key(strings.Repeat("k", 256)), status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key quoted 256 chars", body: validCharge, headers: key(`"` + strings.Repeat("k", 256) + `"`), status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key control char", body: validCharge, headers: key("ab\tcd"), status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key space", body: validCharge, headers: key("ab cd"), status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key non-ASCII", body: validCharge, headers: key("ключ-42"), status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key quoted unterminated", body: validCharge, headers: key(`"abc`), status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key quoted empty", body: validCharge, headers: key(`""`), status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key quoted bad escape", body: validCharge, headers: key(`"a\b"`), status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key quoted inner quote", body: validCharge, headers: key(`"a"b"`), status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key twice", body: validCharge, headers: []string{"Idempotency-Key", "k-1", "Idempotency-Key", "k-2"}, status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key twice same", body: validCharge, headers: []string{"Idempotency-Key", "k-1", "Idempotency-Key", "k-1"}, status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key bad and body bad", body: `{"order_id":"order-42","amount":0}`, headers: key("ab cd"), status: 400, typ: pValidation, field: "Idempotency-Key"},
	{name: "key missing", only: "replay", body: validCharge, headers: []string{}, status: 400, typ: pKeyMissing},
	// Media type and size.
	{name: "text/plain", body: validCharge, headers: []string{"Content-Type", "", "Content-Type", "text/plain", "Idempotency-Key", badKey}, status: 415, typ: pMediaType},
	{name: "form", body: "order_id=order-42&amount=1500", headers: []string{"Content-Type", "", "Content-Type", "application/x-www-form-urlencoded", "Idempotency-Key", badKey}, status: 415, typ: pMediaType},
	{name: "no content type", body: validCharge, headers: []string{"Content-Type", "", "Idempotency-Key", badKey}, status: 415, typ: pMediaType},
	{name: "70 KiB with length", body: bigBody(), status: 413, typ: pTooLarge},
	{name: "70 KiB chunked", build: chunked(bigBody(), "Idempotency-Key", badKey), status: 413, typ: pTooLarge},
	{name: "70 KiB chunked operation", path: "{lab}/operations", build: chunked(bigBody(), "Idempotency-Key", badKey), status: 413, typ: pTooLarge},
	// Labs and operations that do not exist.
	{name: "unknown lab", path: unknownLab + "/charges", body: validCharge, status: 404, typ: pNotFound},
	{name: "malformed lab", path: malformedLab + "/charges", body: validCharge, status: 404, typ: pNotFound},
	{name: "unknown lab settings", method: "GET", path: unknownLab + "/settings", headers: []string{}, status: 404, typ: pNotFound},
	{name: "unknown lab payments", method: "GET", path: unknownLab + "/payments", headers: []string{}, status: 404, typ: pNotFound},
	{name: "unknown payment", method: "GET", path: "{lab}/payments/999999", headers: []string{}, status: 404, typ: pNotFound},
	{name: "payment id not a number", method: "GET", path: "{lab}/payments/abc", headers: []string{}, status: 404, typ: pNotFound},
	{name: "unknown operation", method: "GET", path: "{lab}/operations/op-0000000000000000", headers: []string{}, status: 404, typ: pNotFound},
	{name: "unknown operation retry", path: "{lab}/operations/op-0000000000000000/retry", body: `{"with_key":true}`, status: 404, typ: pNotFound},
	{name: "unknown operation race", path: "{lab}/operations/op-0000000000000000/race", body: `{"parallel":2}`, status: 404, typ: pNotFound},
	{name: "unknown route", method: "GET", path: "{lab}/nothing-here", headers: []string{}, status: 404, typ: pNotFound},
	// Operations.
	{name: "race parallel 1", path: "{lab}/operations/{op}/race", body: `{"parallel":1}`, status: 400, typ: pValidation, field: "parallel"},
	{name: "race parallel 65", path: "{lab}/operations/{op}/race", body: `{"parallel":65}`, status: 400, typ: pValidation, field: "parallel"},
	{name: "race parallel missing", path: "{lab}/operations/{op}/race", body: `{}`, status: 400, typ: pValidation, field: "parallel"},
	{name: "race parallel string", path: "{lab}/operations/{op}/race", body: `{"parallel":"2"}`, status: 400, typ: pValidation, field: "parallel"},
	{name: "retry unknown fate", path: "{lab}/operations/{op}/retry", body: `{"fate":"lost"}`, status: 400, typ: pValidation, field: "fate"},
	{name: "retry with_key string", path: "{lab}/operations/{op}/retry", body: `{"with_key":"yes"}`, status: 400, typ: pValidation, field: "with_key"},
	{name: "operation amount 0", path: "{lab}/operations", body: `{"order_id":"order-42","amount":0}`, status: 400, typ: pValidation, field: "amount"},
	{name: "operation unknown fate", path: "{lab}/operations", body: `{"order_id":"order-42","amount":1500,"fate":"lost"}`, status: 400, typ: pValidation, field: "fate"},
	{name: "operation order_id number", path: "{lab}/operations", body: `{"order_id":42,"amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	{name: "operation amount string", path: "{lab}/operations", body: `{"order_id":"order-42","amount":"1500"}`, status: 400, typ: pValidation, field: "amount"},
	{name: "operation fate number", path: "{lab}/operations", body: `{"order_id":"order-42","amount":1500,"fate":1}`, status: 400, typ: pValidation, field: "fate"},
	{name: "operation bad key", path: "{lab}/operations", body: `{"order_id":"order-42","amount":1500}`, headers: key("ab cd"), status: 400, typ: pValidation, field: "Idempotency-Key"},
	// Settings.
	{name: "settings unknown field", method: "PATCH", path: "{lab}/settings", body: `{"protection":"none","colour":"red"}`, status: 400, typ: pValidation, field: "colour"},
	{name: "settings unknown protection", method: "PATCH", path: "{lab}/settings", body: `{"protection":"magic"}`, status: 400, typ: pValidation, field: "protection"},
	{name: "settings unknown key strategy", method: "PATCH", path: "{lab}/settings", body: `{"key_strategy":"random"}`, status: 400, typ: pValidation, field: "key_strategy"},
	{name: "settings client_timeout_ms 10", method: "PATCH", path: "{lab}/settings", body: `{"client_timeout_ms":10}`, status: 400, typ: pValidation, field: "client_timeout_ms"},
	{name: "settings max_attempts 0", method: "PATCH", path: "{lab}/settings", body: `{"retry":{"max_attempts":0}}`, status: 400, typ: pValidation, field: "retry.max_attempts"},
	{name: "settings cap below base", method: "PATCH", path: "{lab}/settings", body: `{"retry":{"base_ms":500,"cap_ms":100}}`, status: 400, typ: pValidation, field: "retry.cap_ms"},
	{name: "settings unknown nested field", method: "PATCH", path: "{lab}/settings", body: `{"retry":{"max_attempts":3,"colour":"red"}}`, status: 400, typ: pValidation, field: "retry.colour"},
	{name: "settings retry not an object", method: "PATCH", path: "{lab}/settings", body: `{"retry":5}`, status: 400, typ: pValidation, field: "retry"},
	{name: "settings key_ttl_s 0", method: "PATCH", path: "{lab}/settings", body: `{"key_ttl_s":0}`, status: 400, typ: pValidation, field: "key_ttl_s"},
	{name: "settings seed negative", method: "PATCH", path: "{lab}/settings", body: `{"seed":-1}`, status: 400, typ: pValidation, field: "seed"},
	{name: "settings one good one bad", method: "PATCH", path: "{lab}/settings", body: `{"protection":"none","server_delay_ms":-5}`, status: 400, typ: pValidation, field: "server_delay_ms"},
	{name: "settings protection twice", method: "PATCH", path: "{lab}/settings", body: `{"protection":"none","protection":"replay"}`, status: 400, typ: pValidation, field: "protection"},
	{name: "settings Protection", method: "PATCH", path: "{lab}/settings", body: `{"Protection":"none"}`, status: 400, typ: pValidation, field: "Protection"},
	{name: "settings key_strategy with a Kelvin sign", method: "PATCH", path: "{lab}/settings", body: `{"\u212aey_strategy":"none"}`, status: 400, typ: pValidation, field: "\u212aey_strategy"},
	{name: "settings nested twice", method: "PATCH", path: "{lab}/settings", body: `{"retry":{"max_attempts":3,"max_attempts":4}}`, status: 400, typ: pValidation, field: "retry.max_attempts"},
	{name: "settings nested Max_Attempts", method: "PATCH", path: "{lab}/settings", body: `{"retry":{"Max_Attempts":3}}`, status: 400, typ: pValidation, field: "retry.Max_Attempts"},
	{name: "settings retry twice", method: "PATCH", path: "{lab}/settings", body: `{"retry":{"max_attempts":3},"retry":{"max_attempts":4}}`, status: 400, typ: pValidation, field: "retry"},
	{name: "settings seed beyond 2^53", method: "PATCH", path: "{lab}/settings", body: `{"seed":9007199254740993}`, status: 400, typ: pValidation, field: "seed"},
	{name: "settings unknown notify", method: "PATCH", path: "{lab}/settings", body: `{"notify":"sms"}`, status: 400, typ: pValidation, field: "notify"},
	{name: "settings unknown delivery", method: "PATCH", path: "{lab}/settings", body: `{"delivery":"lost"}`, status: 400, typ: pValidation, field: "delivery"},
	{name: "settings unknown consumer_dedup", method: "PATCH", path: "{lab}/settings", body: `{"consumer_dedup":"hash"}`, status: 400, typ: pValidation, field: "consumer_dedup"},
	{name: "settings publish_dedup string", method: "PATCH", path: "{lab}/settings", body: `{"publish_dedup":"yes"}`, status: 400, typ: pValidation, field: "publish_dedup"},
	{name: "settings ack_wait_ms 99", method: "PATCH", path: "{lab}/settings", body: `{"ack_wait_ms":99}`, status: 400, typ: pValidation, field: "ack_wait_ms"},
	{name: "settings ack_wait_ms 60001", method: "PATCH", path: "{lab}/settings", body: `{"ack_wait_ms":60001}`, status: 400, typ: pValidation, field: "ack_wait_ms"},
	{name: "settings language de", method: "PATCH", path: "{lab}/settings", body: `{"language":"de"}`, status: 400, typ: pValidation, field: "language"},
	{name: "order put without amount", method: "PUT", path: "{lab}/orders/order-42", body: `{}`, status: 400, typ: pValidation, field: "amount"},
	{name: "order put amount 0", method: "PUT", path: "{lab}/orders/order-42", body: `{"amount":0}`, status: 400, typ: pValidation, field: "amount"},
	{name: "order put amount string", method: "PUT", path: "{lab}/orders/order-42", body: `{"amount":"1500"}`, status: 400, typ: pValidation, field: "amount"},
	{name: "order put unknown field", method: "PUT", path: "{lab}/orders/order-42", body: `{"amount":1500,"colour":"red"}`, status: 400, typ: pValidation, field: "colour"},
	{name: "order put bad id", method: "PUT", path: "{lab}/orders/order%2042", body: `{"amount":1500}`, status: 400, typ: pValidation, field: "order_id"},
	{name: "order put text/plain", method: "PUT", path: "{lab}/orders/order-42", body: `{"amount":1500}`, headers: []string{"Content-Type", "", "Content-Type", "text/plain"}, status: 415, typ: pMediaType},
	{name: "order delete bad id", method: "DELETE", path: "{lab}/orders/%3Cscript%3E", headers: []string{}, status: 400, typ: pValidation, field: "order_id"},
	{name: "order delete none", method: "DELETE", path: "{lab}/orders/order-404", headers: []string{}, status: 404, typ: pNotFound},
	{name: "orders of an unknown lab", method: "GET", path: unknownLab + "/orders", headers: []string{}, status: 404, typ: pNotFound},
	{name: "order put to an unknown lab", method: "PUT", path: unknownLab + "/orders/order-42", body: `{"amount":1500}`, status: 404, typ: pNotFound},
	{name: "emails of an unknown lab", method: "GET", path: unknownLab + "/emails", headers: []string{}, status: 404, typ: pNotFound},
	{name: "emails limit 0", method: "GET", path: "{lab}/emails?limit=0", headers: []string{}, status: 400, typ: pValidation, field: "limit"},
	{name: "messages of an unknown lab", method: "GET", path: unknownLab + "/messages", headers: []string{}, status: 404, typ: pNotFound},
	{name: "messages limit abc", method: "GET", path: "{lab}/messages?limit=abc", headers: []string{}, status: 400, typ: pValidation, field: "limit"},
	{name: "settings text/plain", method: "PATCH", path: "{lab}/settings", body: `{"protection":"none"}`, headers: []string{"Content-Type", "", "Content-Type", "text/plain"}, status: 415, typ: pMediaType},
	// Methods and queries.
	{name: "GET charges", method: "GET", path: "{lab}/charges", headers: []string{}, status: 405, typ: pMethod},
	{name: "DELETE settings", method: "DELETE", path: "{lab}/settings", headers: []string{}, status: 405, typ: pMethod},
	{name: "PUT payments", method: "PUT", path: "{lab}/payments", body: `{}`, status: 405, typ: pMethod},
	{name: "payments limit 0", method: "GET", path: "{lab}/payments?limit=0", headers: []string{}, status: 400, typ: pValidation, field: "limit"},
	{name: "payments limit abc", method: "GET", path: "{lab}/payments?limit=abc", headers: []string{}, status: 400, typ: pValidation, field: "limit"},
	{name: "payments limit 1001", method: "GET", path: "{lab}/payments?limit=1001", headers: []string{}, status: 400, typ: pValidation, field: "limit"},
	{name: "payments offset negative", method: "GET", path: "{lab}/payments?offset=-1", headers: []string{}, status: 400, typ: pValidation, field: "offset"},
	{name: "operations limit 0", method: "GET", path: "{lab}/operations?limit=0", headers: []string{}, status: 400, typ: pValidation, field: "limit"},
}
