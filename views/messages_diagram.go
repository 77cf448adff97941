package views

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// diagramMessages are the words of the sequence diagram, in English and in
// the Russian of the article (списание, повтор, ключ идемпотентности, ответ
// потерялся). Formats take fmt verbs; "\n" breaks the lines of a label drawn
// in a box; a counted word holds its forms split by "|", each with its %d:
// one|many in English, one|few|many in Russian. Keys built from a machine
// value (diagram.fate.<fate>, diagram.box.<outcome>, diagram.did.<outcome>,
// diagram.strategy.<strategy>) fall back to the value itself when missing.
var diagramMessages = map[string]message{
	// The caption and the SVG's title and description.
	"diagram.caption.empty":  {"Sequence diagram", "Диаграмма последовательности"},
	"diagram.caption":        {"Charge %[1]s %[2]s", "Списание %[2]s за заказ %[1]s"},
	"diagram.caption.PUT":    {"PUT order %[1]s, %[2]s", "PUT заказа %[1]s, %[2]s"},
	"diagram.caption.DELETE": {"DELETE order %[1]s%.0[2]s", "DELETE заказа %[1]s%.0[2]s"},
	"diagram.meta.strategy":  {"key strategy:", "ключ идемпотентности:"},
	"diagram.title":          {"Sequence diagram of the charge of %[1]s, %[2]s", "Диаграмма последовательности: списание %[2]s за заказ %[1]s"},
	"diagram.title.empty":    {"Sequence diagram: no operation yet", "Диаграмма последовательности: операций ещё нет"},
	"diagram.desc":           {"%[1]s across the lanes client, network, server and database; %[2]s committed.", "Дорожки: клиент, сеть, сервер и база данных. %[1]s; записано в базу: %[2]s."},
	"diagram.desc.empty":     {"Four empty lanes: client, network, server, database.", "Четыре пустые дорожки: клиент, сеть, сервер, база данных."},
	"diagram.desc.list":      {"The list below tells each attempt in words.", "Ниже каждая попытка описана словами."},
	"diagram.note.last":      {"Showing the last %d of %s.", "Показаны последние %d из %s."},
	"diagram.empty":          {"No operation yet: fire a charge.", "Операций ещё нет: сделайте списание."},
	"diagram.legend":         {"Solid arrow: request · dashed arrow: answer · ✕: lost by the network · COMMIT: a payment written", "Сплошная стрелка — запрос · пунктирная — ответ · ✕ — потеряно сетью · COMMIT — платёж записан"},

	// Counted words.
	"diagram.n.attempts":    {"%d attempt|%d attempts", "%d попытка|%d попытки|%d попыток"},
	"diagram.n.of-attempts": {"%d attempt|%d attempts", "%d попытки|%d попыток|%d попыток"}, // after «из»
	"diagram.n.charges":     {"%d charge|%d charges", "%d списание|%d списания|%d списаний"},

	// The lanes. The database's head is too narrow for «база данных».
	"diagram.lane.client":        {"client", "клиент"},
	"diagram.lane.client.full":   {"client", "клиент"},
	"diagram.lane.network":       {"network", "сеть"},
	"diagram.lane.network.full":  {"network", "сеть"},
	"diagram.lane.server":        {"server", "сервер"},
	"diagram.lane.server.full":   {"server", "сервер"},
	"diagram.lane.database":      {"database", "БД"},
	"diagram.lane.database.full": {"database", "база данных"},
	"diagram.lane.broker":        {"broker", "брокер"},
	"diagram.lane.broker.full":   {"broker", "брокер"},
	"diagram.lane.consumer":      {"consumer", "консьюмер"},
	"diagram.lane.consumer.full": {"consumer", "консьюмер"},
	"diagram.lane.mail":          {"mail", "почта"},
	"diagram.lane.mail.full":     {"mailbox", "почтовый ящик"},
	"diagram.queue.title":        {"After the commit: the queue", "После COMMIT: очередь"},
	"diagram.queue.says":         {"After the commit, the message through the broker: %s.", "После COMMIT сообщение через брокер: %s."},
	"diagram.queue.publish":      {"publish", "публикация"},
	"diagram.queue.again":        {"publish again", "ещё раз"},
	"diagram.queue.unpublished":  {"in the outbox, not yet published", "в исходящих, ещё не опубликовано"},
	"diagram.queue.delivery":     {"delivery %d", "доставка %d"},
	"diagram.queue.skipped":      {"done before\n→ skip", "уже сделано\n→ пропуск"},
	"diagram.queue.email":        {"✉ email", "✉ письмо"},
	"diagram.queue.crashed":      {"died before the ack", "упал до ack"},

	// Key strategies, in the caption.
	"diagram.strategy.none":             {"none", "нет"},
	"diagram.strategy.uuid":             {"one UUID per operation", "один UUID на операцию"},
	"diagram.strategy.uuid-per-request": {"a new UUID per request", "новый UUID на каждый запрос"},
	"diagram.strategy.natural":          {"the order id", "номер заказа"},
	"diagram.strategy.hash":             {"hash of the body", "хэш тела запроса"},

	// An attempt's heading: what the network did to it.
	"diagram.attempt.title":      {"Attempt %d · %s", "Попытка %d · %s"},
	"diagram.fate.ok":            {"ok", "без сбоев"},
	"diagram.fate.request-lost":  {"request lost", "запрос потерялся"},
	"diagram.fate.response-lost": {"response lost", "ответ потерялся"},
	"diagram.fate.slow":          {"slow", "медленная сеть"},
	"diagram.fate.duplicate":     {"duplicate", "двойная доставка"},

	// Words on the arrows and beside them.
	"diagram.key":              {"key %s", "ключ %s"},
	"diagram.key.none":         {"no key", "без ключа"},
	"diagram.tip.key":          {"Idempotency-Key: %s", "Ключ идемпотентности: %s"},
	"diagram.tip.no-key":       {"Request without an Idempotency-Key", "Запрос без ключа идемпотентности"},
	"diagram.lost.request":     {"request lost", "запрос потерялся"},
	"diagram.lost.not-reached": {"not reached", "не дошёл"},
	"diagram.lost.answer":      {"answer lost", "ответ потерялся"},
	"diagram.note.twice":       {"sent twice", "две копии"},
	"diagram.note.unused":      {"not used", "не нужен"},
	"diagram.note.late":        {"too late", "опоздал"},
	"diagram.no-answer":        {"no answer", "нет ответа"},
	"diagram.timeout":          {"timeout", "таймаут"},
	"diagram.status.answer":    {"answer", "ответ"},

	// The server's boxes: what it did with one copy.
	"diagram.box.charged":     {"COMMIT", "COMMIT"},
	"diagram.box.duplicate":   {"key seen\n→ duplicate", "ключ уже был\n→ дубликат"},
	"diagram.box.replayed":    {"replay\nstored answer", "повтор\nсохранённого\nответа"},
	"diagram.box.conflict":    {"409\n40001", "409\n40001"},
	"diagram.box.in-flight":   {"409\nin flight", "409\nещё в работе"},
	"diagram.box.mismatch":    {"422 key reused\nother body", "422 тот же ключ,\nдругое тело"},
	"diagram.box.rejected":    {"400\nrejected", "400\nотклонён"},
	"diagram.box.failed":      {"server failed", "ошибка\nсервера"},
	"diagram.box.not-reached": {"unreachable", "недоступен"},
	"diagram.box.pending":     {"working…", "в работе…"},
	"diagram.box.created":     {"created", "создан"},
	"diagram.box.updated":     {"same state\nagain", "то же\nсостояние"},
	"diagram.box.deleted":     {"deleted", "удалён"},
	"diagram.box.dropped":     {"✕ died\nbefore COMMIT", "✕ упал\nдо COMMIT"},
	"diagram.box.absent":      {"404\nno order", "404\nзаказа нет"},
	"diagram.box.unavailable": {"503 a part down\nnothing charged", "503 часть не отвечает\nничего не списано"},

	// The text equivalent: one sentence an attempt.
	"diagram.say.attempt":      {"Attempt %d, %s: ", "Попытка %d, %s: "},
	"diagram.say.request-lost": {"the network lost the request, so the server never saw it", "сеть потеряла запрос, и сервер его не увидел"},
	"diagram.say.not-reached":  {"the request did not reach the server", "запрос не дошёл до сервера"},
	"diagram.say.twice":        {"the network delivered it twice: ", "сеть доставила запрос дважды: "},
	"diagram.say.copy":         {"with copy %d the server %s", "получив копию %d, сервер %s"},
	"diagram.say.reached":      {"reached the server, which %s", "запрос дошёл до сервера, и тот %s"},
	"diagram.say.got":          {"; the client got %d.", "; клиент получил %d."},
	"diagram.say.answer-lost":  {"; the network lost the answer, so the client got no answer.", "; сеть потеряла ответ, и клиент ничего не получил."},
	"diagram.say.timed-out":    {"; the client timed out before the answer came.", "; клиент не дождался ответа: истёк таймаут."},
	"diagram.say.no-answer":    {"; the client got no answer.", "; клиент не получил ответа."},
	"diagram.say.waiting":      {"; the client is still waiting.", "; клиент всё ещё ждёт."},

	// What the server did, to end a sentence whose subject is the server.
	"diagram.did.charged":     {"charged the order (COMMIT)", "списал деньги (COMMIT)"},
	"diagram.did.duplicate":   {"found the key already used (duplicate)", "увидел, что ключ уже использован (дубликат)"},
	"diagram.did.replayed":    {"replayed the stored answer of the first request", "повторил сохранённый ответ первого запроса"},
	"diagram.did.conflict":    {"lost the race to another transaction: the database failed it (40001, 409)", "проиграл гонку другой транзакции: база её отменила (40001, 409)"},
	"diagram.did.in-flight":   {"found the first request with this key still in flight (409)", "увидел, что первый запрос с этим ключом ещё выполняется (409)"},
	"diagram.did.mismatch":    {"refused the key, reused with a different body (422)", "отказал: ключ пришёл повторно с другим телом запроса (422)"},
	"diagram.did.rejected":    {"rejected the request (400)", "отклонил запрос (400)"},
	"diagram.did.failed":      {"failed", "ответил ошибкой"},
	"diagram.did.not-reached": {"could not be reached", "оказался недоступен"},
	"diagram.did.pending":     {"is still working", "ещё работает"},
	"diagram.did.dropped":     {"took its guard and died before the COMMIT: the connection dropped", "взял защиту и упал до COMMIT: соединение оборвалось"},
	"diagram.did.created":     {"created the order (201)", "создал заказ (201)"},
	"diagram.did.updated":     {"set the order to the same state again (200)", "снова задал заказу то же состояние (200)"},
	"diagram.did.deleted":     {"removed the order (204)", "удалил заказ (204)"},
	"diagram.did.absent":      {"found no order to remove (404)", "не нашёл заказа для удаления (404)"},
	"diagram.did.unavailable": {"could not reach the database or Redis: answered 503, nothing charged (under set-nx it gave back the key it took, so a retry charges)",
		"не достучался до базы данных или Redis: ответил 503, ничего не списано (при set-nx он вернул занятый ключ, так что повтор спишет)"},
}

// DiagramMessages is the diagram's catalog, key by key: the English and the
// Russian format. For tests, which check it whole.
func DiagramMessages() map[string][2]string {
	out := make(map[string][2]string, len(diagramMessages))
	for k, m := range diagramMessages {
		out[k] = [2]string{m.en, m.ru}
	}
	return out
}

// DiagramKeys are the catalog's keys, sorted.
func DiagramKeys() []string { return slices.Sorted(maps.Keys(diagramMessages)) }

// DiagramCount is n with the form of the counted word key that n takes in
// l: DiagramCount(Russian, "diagram.n.attempts", 5) is «5 попыток».
func DiagramCount(l Lang, key string, n int) string { return sdPainter{l}.count(key, n) }

// The painter's words, chosen from the catalog in its language: the
// machine values in words, what the server did, an attempt in a sentence.

// t is the message key in the painter's language.
func (p sdPainter) t(key string, args ...any) string { return p.l.T(key, args...) }

// word is a machine value (a fate, an outcome, a key strategy) in words:
// the catalog's prefix+value, or the value itself when the catalog has no
// words for it.
func (p sdPainter) word(prefix, value string) string {
	if _, ok := diagramMessages[prefix+value]; !ok {
		return value
	}
	return p.t(prefix + value)
}

// lines is the message key cut at its line breaks, for a label of a few
// short lines.
func (p sdPainter) lines(key string, args ...any) []string {
	return strings.Split(p.t(key, args...), "\n")
}

// count is n with the form of the counted word that n takes: the message
// holds the forms split by "|", each with a %d, one|many in English and
// one|few|many in Russian (1 попытка, 2 попытки, 5 попыток).
func (p sdPainter) count(key string, n int) string {
	return fmt.Sprintf(pluralForm(p.l, p.t(key), int64(n)), n)
}

// around fills the message key with a marked first argument and the rest,
// and cuts it at the mark: the words before and after the first argument,
// which the template writes in its own element.
func (p sdPainter) around(key string, args ...any) (before, after string) {
	const mark = "\x00"
	args = slices.Clone(args)
	args[0] = mark
	before, after, _ = strings.Cut(p.t(key, args...), mark)
	return before, after
}

// serverDid names what the server did, in a box of a few short lines; the
// catalog's words break the lines.
func (p sdPainter) serverDid(outcome string) []string {
	if _, ok := diagramMessages["diagram.box."+outcome]; !ok {
		return []string{outcome}
	}
	return p.lines("diagram.box." + outcome)
}

// sentence tells an attempt in plain words.
func (p sdPainter) sentence(a DiagramAttempt) string {
	var b strings.Builder
	b.WriteString(p.t("diagram.say.attempt", a.N, p.keyLabel(a)))
	copies := copiesOf(a)
	switch {
	case len(copies) == 0 && a.Fate == "request-lost":
		b.WriteString(p.t("diagram.say.request-lost"))
	case len(copies) == 0:
		b.WriteString(p.t("diagram.say.not-reached"))
	case len(copies) == 2:
		b.WriteString(p.t("diagram.say.twice"))
		for i, c := range copies {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(p.t("diagram.say.copy", c.Copy, p.serverSaid(c.Outcome)))
		}
	default:
		b.WriteString(p.t("diagram.say.reached", p.serverSaid(copies[0].Outcome)))
	}
	switch {
	case a.Status != 0:
		b.WriteString(p.t("diagram.say.got", a.Status))
	case a.Fate == "response-lost" && len(copies) > 0 && copies[0].Outcome != "pending":
		b.WriteString(p.t("diagram.say.answer-lost"))
	case a.Fate == "slow" || a.Error != "":
		if a.Fate == "slow" || strings.Contains(a.Error, "timeout") || strings.Contains(a.Error, "timed out") {
			b.WriteString(p.t("diagram.say.timed-out"))
		} else {
			b.WriteString(p.t("diagram.say.no-answer"))
		}
	default:
		b.WriteString(p.t("diagram.say.waiting"))
	}
	return b.String()
}

// serverSaid is what the server did, as the end of a sentence whose
// subject is the server.
func (p sdPainter) serverSaid(outcome string) string {
	return p.word("diagram.did.", outcome)
}

// keyLabel shortens a key to what fits on an arrow: 8 characters and "…".
func (p sdPainter) keyLabel(a DiagramAttempt) string {
	if !a.HasKey {
		return p.t("diagram.key.none")
	}
	k := []rune(a.Key)
	if len(k) > 8 {
		return p.t("diagram.key", string(k[:8])+"…")
	}
	return p.t("diagram.key", a.Key)
}

func (p sdPainter) keyTip(a DiagramAttempt) string {
	if !a.HasKey {
		return p.t("diagram.tip.no-key")
	}
	return p.t("diagram.tip.key", a.Key)
}

func (p sdPainter) statusLabel(status int) string {
	if status == 0 {
		return p.t("diagram.status.answer")
	}
	return strconv.Itoa(status)
}
