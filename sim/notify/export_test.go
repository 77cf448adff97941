package notify

import "idemlab/sim/broker"

// Message is a message as the relay publishes it, for the tests that
// publish copies of one by hand.
type Message = message

// Broker is the notifier's broker, for the tests that publish by hand.
func (n *Notifier) Broker() *broker.Broker { return n.queue.broker }
