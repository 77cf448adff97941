package views

// keysMessages are the words of where the keys live: the server's fault,
// the lab's clock, the keys panel and the lost charge, in English and
// Russian.
var keysMessages = map[string]message{
	// the controls
	"settings.fault":               {"Server", "Сервер"},
	"opt.fault.none":               {"no fault", "без сбоев"},
	"opt.fault.crash-after-guard":  {"dies after taking the guard", "падает, взяв защиту"},
	"settings.ttl":                 {"Key TTL, s", "Срок жизни ключа, с"},
	"settings.lock":                {"Lock timeout, ms", "Таймаут блокировки, мс"},
	"clock.label":                  {"Lab clock", "Часы лаборатории"},
	"clock.ahead":                  {"Lab clock (+%s)", "Часы лаборатории (+%s)"},
	"clock.button":                 {"Advance", "Перевести"},
	"opt.clock.10":                 {"+10 s", "+10 с"},
	"opt.clock.60":                 {"+1 min", "+1 мин"},
	"opt.clock.120":                {"+2 min", "+2 мин"},
	"opt.clock.3600":               {"+1 hour", "+1 час"},
	"opt.clock.86400":              {"+1 day", "+1 день"},
	"log.clock":                    {"The lab's clock moved forward: keys and records expire by it.", "Часы лаборатории переведены вперёд: ключи и записи истекают по ним."},
	"settings.isolation":           {"Isolation", "Изоляция"},
	"opt.isolation.read-committed": {"READ COMMITTED", "READ COMMITTED"},
	"opt.isolation.serializable":   {"SERIALIZABLE", "SERIALIZABLE"},
	"log.setting.isolation":        {"isolation", "изоляция"},
	"log.setting.fault":            {"server", "сервер"},

	// the keys panel
	"stored.title":           {"Where the keys live", "Где живут ключи"},
	"stored.empty":           {"No keys yet: charge with a key under unique, on-conflict, replay or set-nx.", "Ключей пока нет: сделайте списание с ключом под unique, on-conflict, replay или set-nx."},
	"stored.caption":         {"Idempotency keys and the time they have left on the lab's clock, the most first", "Ключи идемпотентности и сколько им осталось по часам лаборатории, больше всего — сверху"},
	"stored.key":             {"Key", "Ключ"},
	"stored.where":           {"Where", "Где"},
	"stored.state":           {"State", "Состояние"},
	"stored.ttl":             {"Time left", "Осталось"},
	"stored.store.sqlite":    {"SQLite", "SQLite"},
	"stored.store.postgres":  {"PostgreSQL", "PostgreSQL"},
	"stored.store.redis":     {"Redis", "Redis"},
	"stored.state.in-flight": {"in flight (locked %s)", "в работе (блокировка %s)"},
	"stored.state.done":      {"answer stored", "ответ сохранён"},
	"stored.state.expired":   {"expired", "истёк"},
	"stored.state.unique":    {"UNIQUE column", "столбец UNIQUE"},
	"stored.state.set":       {"SET NX", "SET NX"},
	"stored.forever":         {"for ever", "навсегда"},
	"stored.kv-down":         {"Redis does not answer: its keys are not shown.", "Redis не отвечает: его ключи не показаны."},
	"time.units":             {"d h min s", "д ч мин с"},

	// the lost charge
	"lost.title": {"Told “paid”, never charged.", "Сказали «оплачено», но не списали."},
	"lost.line":  {"The server answered “already done”, and the ledger holds no payment.", "Сервер ответил «уже выполнено», а в журнале нет ни одного платежа."},
	"lost.more":  {"and %d more %s", "и ещё %d %s"},

	// the outcome "dropped"
	"log.did.dropped":    {"died before answering: the connection dropped", "упал, не ответив: соединение оборвалось"},
	"log.charge.dropped": {"%s: the server takes its guard, then dies before the COMMIT: the connection drops, no answer.", "%s: сервер берёт защиту и падает до COMMIT — соединение обрывается, ответа нет."},
}
