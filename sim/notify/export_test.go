package notify

import (
	"idemlab/sim/broker"
	"idemlab/sim/mail"
)

// Message is a message as the relay publishes it, for the tests that
// publish copies of one by hand.
type Message = message

// Broker is the notifier's broker, for the tests that publish by hand.
func (n *Notifier) Broker() *broker.Broker { return n.queue.broker }

// OwnMailbox is the lab's own mailbox, for the tests that knock on it as
// another local user would, or send it mail as the process does.
func (n *Notifier) OwnMailbox() *mail.Server { return n.mail.server }
