package views

// mailMessages are the words of the lab's mail and queue, in English and
// Russian.
var mailMessages = map[string]message{
	"email.subject": {"Your order is placed", "Ваш заказ оформлен"},
	"email.body":    {"Order %s is placed and paid: %s. Thank you for your purchase.", "Заказ %s оформлен и оплачен: %s. Спасибо за покупку."},

	// settings
	"settings.notify":                {"Email", "Письмо"},
	"opt.notify.off":                 {"off — no email", "нет — без письма"},
	"opt.notify.direct":              {"direct — the handler sends it", "сразу — шлёт обработчик"},
	"opt.notify.queue":               {"queue — the consumer sends it", "очередь — шлёт консьюмер"},
	"settings.queue":                 {"Broker and consumer", "Брокер и консьюмер"},
	"settings.delivery":              {"Broker, next messages", "Брокер, следующие сообщения"},
	"opt.delivery.ok":                {"ok — delivered, acknowledged", "ok — доставлено, подтверждено"},
	"opt.delivery.crash-before-ack":  {"crash before the ack — comes again", "падение до ack — придёт снова"},
	"opt.delivery.duplicate-publish": {"published twice — the producer's retry", "опубликовано дважды — повтор продюсера"},
	"settings.consumer-dedup":        {"Consumer deduplication", "Дедупликация у консьюмера"},
	"opt.dedup.none":                 {"none — every delivery sends", "нет — каждая доставка шлёт"},
	"opt.dedup.message-id":           {"message id — processed-messages row", "по id сообщения — таблица обработанных"},
	"opt.dedup.natural":              {"the order — one email per order", "по заказу — одно письмо на заказ"},
	"settings.dedup.trade":           {"What each trades away: none sends an email per delivery, and the broker delivers at least once; the message id holds only if a retry of the producer keeps the id; the order also silences a second, real purchase of the same order.", "Чем платит каждый: «нет» — письмо на каждую доставку, а брокер доставляет хотя бы раз; id сообщения спасает, только если повтор продюсера сохраняет id; заказ глушит и вторую, настоящую покупку того же заказа."},
	"settings.publish-dedup":         {"The broker drops a repeated Nats-Msg-Id", "Брокер отбрасывает повтор Nats-Msg-Id"},
	"settings.language":              {"The emails' language", "Язык писем"},
	"opt.language.ru":                {"Russian", "русский"},
	"opt.language.en":                {"English", "английский"},
	"settings.ack-wait":              {"Ack wait, ms", "Ожидание ack, мс"},

	// the panels
	"dock.mailbox":                {"Mail", "Почта"},
	"dock.queue":                  {"Queue", "Очередь"},
	"mail.title":                  {"Mailbox", "Почтовый ящик"},
	"mail.count":                  {"email|emails", "письмо|письма|писем"},
	"mail.empty":                  {"No emails yet: choose an Email other than “off” and charge.", "Писем пока нет: выберите «Письмо» и сделайте списание."},
	"mail.caption":                {"Received over SMTP, newest first", "Получены по SMTP, новые сверху"},
	"mail.subject":                {"Subject", "Тема"},
	"mail.order":                  {"Order", "Заказ"},
	"mail.message":                {"Message", "Сообщение"},
	"mail.time":                   {"Time", "Время"},
	"mail.direct":                 {"from the handler", "от обработчика"},
	"mail.repeat":                 {"⚠ email %d", "⚠ письмо %d"},
	"mail.alert.title":            {"The same email, twice.", "Одно письмо — дважды."},
	"mail.alert.line":             {"got %d “order placed” emails.", "получил %d письма «заказ оформлен»."},
	"mail.alert.more":             {"…and %d more %s with more than one email.", "…и ещё %d %s с несколькими письмами."},
	"queue.title":                 {"Queue", "Очередь"},
	"queue.empty":                 {"No messages yet: choose Email “queue” and charge.", "Сообщений пока нет: выберите «Письмо» — «очередь» и сделайте списание."},
	"queue.caption":               {"Messages and their deliveries, newest first", "Сообщения и их доставки, новые сверху"},
	"queue.message":               {"Message", "Сообщение"},
	"queue.order":                 {"Order", "Заказ"},
	"queue.published":             {"Published", "Опубликовано"},
	"queue.deliveries":            {"Deliveries", "Доставки"},
	"queue.waiting":               {"waiting for the consumer…", "ждёт консьюмера…"},
	"compare.mail.title":          {"The email: consumer deduplication × delivery fate", "Письмо: дедупликация у консьюмера × судьба доставки"},
	"compare.mail.script":         {"Nine more labs, notify “queue”: the customer buys order-42 twice, each purchase charged once. A correct consumer sends 2 emails, one per purchase.", "Ещё девять лабораторий, письмо через очередь: покупатель дважды покупает order-42, каждая покупка списана один раз. Правильный консьюмер отправляет 2 письма — по одному на покупку."},
	"compare.mail.caption":        {"Emails in each lab's mailbox; a cell opens a new lab of your own that replays it.", "Письма в ящике каждой лаборатории; ячейка открывает вашу новую лабораторию, которая её повторяет."},
	"compare.dedup-fate":          {"dedup ↓ / delivery →", "дедупликация ↓ / доставка →"},
	"compare.mail.cause.right":    {"✓ an email per purchase", "✓ по письму на покупку"},
	"compare.mail.cause.double":   {"⚠ an email sent twice", "⚠ письмо отправлено дважды"},
	"compare.mail.cause.silenced": {"✗ the second purchase got no email", "✗ вторая покупка без письма"},
	"report.emails":               {"The mailbox: %s.", "Почтовый ящик: %s."},
	"dock.orders":                 {"Orders", "Заказы"},
	"orders.title":                {"Orders (PUT, DELETE)", "Заказы (PUT, DELETE)"},
	"orders.caption":              {"The order resource: PUT sets an order, DELETE removes it", "Ресурс заказов: PUT задаёт заказ, DELETE удаляет"},
	"orders.empty":                {"No orders: send a PUT.", "Заказов нет: отправьте PUT."},
	"charge.method":               {"Method", "Метод"},
	"opt.method.POST":             {"POST — charge", "POST — списание"},
	"opt.method.PUT":              {"PUT — set the order", "PUT — задать заказ"},
	"opt.method.DELETE":           {"DELETE — remove it", "DELETE — удалить"},
	"charge.button.POST":          {"Charge", "Списать"},
	"charge.button.PUT":           {"Send PUT", "Отправить PUT"},
	"charge.button.DELETE":        {"Send DELETE", "Отправить DELETE"},
	"who.consumer":                {"consumer", "консьюмер"},
	"who.mail":                    {"mail", "почта"},
	"log.delivery.sent":           {"Delivery %d of the message for %s: sent the email, then acknowledged.", "Доставка %d сообщения о %s: письмо отправлено, затем ack."},
	"log.delivery.skipped":        {"Delivery %d of the message for %s: recognised as done, no email; acknowledged.", "Доставка %d сообщения о %s: узнано как сделанное, письма нет; ack."},
	"log.delivery.crashed":        {"Delivery %d of the message for %s: sent the email, then died before the ack; the broker will deliver it again.", "Доставка %d сообщения о %s: письмо отправлено, затем падение до ack; брокер доставит снова."},
	"log.email":                   {"The mailbox received «%s» about %s.", "В ящик пришло «%s» о %s."},
	"delivery.sent":               {"✓ %d: sent the email", "✓ %d: письмо отправлено"},
	"delivery.skipped":            {"↷ %d: skipped, done before", "↷ %d: пропущено, уже сделано"},
	"delivery.crashed":            {"✗ %d: crashed before the ack", "✗ %d: упал до ack"},
}

// Email is the "order placed" email in the language named (ru or en): its
// subject and its body, for the lab's server to send.
func Email(lang, orderID string, amount int64) (subject, body string) {
	l := Lang(lang)
	if l != English {
		l = Russian
	}
	return l.T("email.subject"), l.T("email.body", orderID, l.Money(amount))
}
