package views

import "strings"

// The queue's part of the sequence diagram: when the operation's payment
// sent a message through the broker, the drawing goes on under its
// attempts with four more lanes, from right to left as the message goes —
// the database (its outbox), the broker, the consumer, the mailbox — and a
// row for the publishing and for every delivery with what the consumer made
// of it.

// DiagramMessage is a message of the operation's payment: how many copies
// the relay published, and each delivery to the consumer.
type DiagramMessage struct {
	Published  int
	Deliveries []DiagramMessageDelivery
}

// DiagramMessageDelivery is one delivery and its outcome: sent, skipped,
// crashed.
type DiagramMessageDelivery struct {
	N       int
	Outcome string
}

// The queue's lanes, right to left in the order the message travels: the
// database lane stands under the attempts' database lane.
var sdQueueLanes = [...]struct {
	key  string
	x, w float64
}{
	{"mail", sdClient, 80},
	{"consumer", sdNetwork, 96},
	{"broker", sdServer, 80},
	{"database", sdDatabase, 88},
}

const (
	sdMail, sdConsumer, sdBroker, sdOutbox = sdClient, sdNetwork, sdServer, sdDatabase
)

// queueLanes names the queue's lanes, their heads at y.
func (p sdPainter) queueLanes(y float64) []sdLane {
	out := make([]sdLane, len(sdQueueLanes))
	for i, k := range sdQueueLanes {
		name := p.t("diagram.lane." + k.key)
		out[i] = sdLane{Name: name, Full: p.t("diagram.lane." + k.key + ".full"), Class: "sd-lane", X: k.x, Y: y,
			W: min(max(k.w, sdTextWidth(name, sdLaneFont)+16), 104)}
		if sdTextWidth(name, sdLaneFont)+8 > out[i].W {
			out[i].Class = "sd-lane sd-lane-small"
		}
	}
	return out
}

// queue draws the messages from y down and returns the groups and where
// the drawing ends.
func (p sdPainter) queue(ms []DiagramMessage, y float64) ([]sdGroup, float64) {
	var gs []sdGroup
	add := func(g sdGroup) { gs = append(gs, g) }
	for _, m := range ms {
		// The relay publishes: outbox → broker, once or twice.
		for c := range max(m.Published, 0) {
			y += 36
			words := p.t("diagram.queue.publish")
			if c > 0 {
				words = p.t("diagram.queue.again")
			}
			add(sdGroup{Class: "sd-publish", Mark: "publish", Shapes: []sdShape{
				line(sdOutbox, y, sdBroker+7, y, "sd-arrow"), head(sdOutbox, y, sdBroker+7, y, "sd-head"),
				text(mid(sdBroker, sdOutbox), y-9, "middle", "sd-key", words),
			}})
		}
		if m.Published == 0 {
			y += 30
			add(sdGroup{Class: "sd-note", Shapes: []sdShape{text(sdOutbox-8, y, "end", "sd-note", p.t("diagram.queue.unpublished"))}})
		}
		for _, d := range m.Deliveries {
			y += 42
			add(sdGroup{Class: "sd-delivery", Mark: "delivery", Shapes: []sdShape{
				line(sdBroker, y, sdConsumer+7, y, "sd-arrow"), head(sdBroker, y, sdConsumer+7, y, "sd-head"),
				text(mid(sdConsumer, sdBroker), y-9, "middle", "sd-key", p.t("diagram.queue.delivery", d.N)),
			}})
			switch d.Outcome {
			case "skipped":
				y += 14
				lines := p.lines("diagram.queue.skipped")
				h := float64(len(lines))*19 + 12
				add(sdGroup{Class: "sd-work sd-outcome-skipped", Mark: "skipped", Shapes: []sdShape{
					rect(sdConsumer-48, y, 96, h, "sd-box sd-server-box"),
					text(sdConsumer, y+20, "middle", "sd-server-label", lines...),
				}})
				y += h
			default: // sent, crashed: the email goes out
				y += 30
				add(sdGroup{Class: "sd-email", Mark: "email", Shapes: []sdShape{
					line(sdConsumer, y, sdMail+7, y, "sd-arrow"), head(sdConsumer, y, sdMail+7, y, "sd-head"),
					text(mid(sdMail, sdConsumer), y-9, "middle", "sd-label", p.t("diagram.queue.email")),
				}})
			}
			y += 32
			if d.Outcome == "crashed" {
				add(sdGroup{Class: "sd-lost", Mark: "no-ack", Shapes: []sdShape{
					line(sdConsumer-10, y-10, sdConsumer+10, y+10, "sd-cross"),
					line(sdConsumer-10, y+10, sdConsumer+10, y-10, "sd-cross"),
					sdLabelText(sdConsumer+16, y+6, "start", "sd-label sd-lost-label", p.t("diagram.queue.crashed"), sdOutbox-sdConsumer-24, true),
				}})
				continue
			}
			add(sdGroup{Class: "sd-response", Mark: "ack", Shapes: []sdShape{
				line(sdConsumer, y, sdBroker-7, y, "sd-arrow sd-back"), head(sdConsumer, y, sdBroker-7, y, "sd-head"),
				text(mid(sdConsumer, sdBroker), y-9, "middle", "sd-status", "ack"),
			}})
		}
	}
	return gs, y + 20
}

// queueSays tells the queue's part in words, for screen readers.
func (p sdPainter) queueSays(ms []DiagramMessage) string {
	var parts []string
	for _, m := range ms {
		for _, d := range m.Deliveries {
			parts = append(parts, p.t("delivery."+d.Outcome, d.N))
		}
		if len(parts) == 0 {
			parts = append(parts, p.t("diagram.queue.unpublished"))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return p.t("diagram.queue.says", strings.Join(parts, "; "))
}
