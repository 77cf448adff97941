package sim

import "time"

// Addresses of the lab's mail.
const (
	ShopAddress     = "shop@idemlab.test"
	CustomerAddress = "customer@idemlab.test"
)

// Email is one email the lab's mailbox received.
type Email struct {
	N          int64     `json:"id"`
	To         string    `json:"to"`
	Subject    string    `json:"subject"`
	OrderID    string    `json:"order_id"`
	MessageID  *string   `json:"message_id"`
	ReceivedAt time.Time `json:"received_at"`
}

// Mailbox is what a lab's mailbox holds: the newest emails, how many in
// all, and the orders that got more than one.
type Mailbox struct {
	Emails  []Email
	Count   int64
	Doubled []OrderEmails // at most 10
	More    int64         // orders doubled beyond those
}

// OrderEmails is an order and how many emails it got.
type OrderEmails struct {
	OrderID string `json:"order_id"`
	Emails  int64  `json:"emails"`
}

// The outcomes of one delivery of a message to the consumer.
const (
	DeliverySent    = "sent"    // the consumer sent the email
	DeliverySkipped = "skipped" // it recognised the work as done
	DeliveryCrashed = "crashed" // it did the work and died before its ack: it will come again
)

// Message is one message of the queue as the lab's API shows it: how many
// copies were published and every delivery of them to the consumer.
type Message struct {
	ID         string            `json:"id"`
	OrderID    string            `json:"order_id"`
	Published  int               `json:"published"`
	Fate       MessageFate       `json:"fate"`
	Deliveries []MessageDelivery `json:"deliveries"`
	CreatedAt  time.Time         `json:"created_at"`
}

// MessageDelivery is one delivery of a message to the consumer, and what
// the consumer made of it: DeliverySent, DeliverySkipped, DeliveryCrashed.
type MessageDelivery struct {
	N       int         `json:"n"`
	Fate    MessageFate `json:"fate"`
	Outcome string      `json:"outcome"`
}
