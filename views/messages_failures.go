package views

// failureMessages are the words of the failures told truthfully: a part the
// lab depends on that does not answer (the database, Redis, the broker), a
// set-nx key given back after its charge did not happen, a clock at its
// limit. Each says what happened to the money, and what a retry will do.
var failureMessages = map[string]message{
	"rule.clock-limit": {"cannot move the clock further: it is at its limit, %d years ahead (reset the lab to start it over)",
		"часы дальше не двигаются: они на пределе, на %d лет впереди (сбросьте лабораторию, чтобы начать заново)"},

	// The answers (problem details) of a charge that met a part down.
	"err.db-down": {"The database does not answer: nothing was charged. Try again when it is back (the Retry-After header says when to look); a retry with the same key charges once.",
		"База данных не отвечает: ничего не списано. Повторите, когда она вернётся (заголовок Retry-After подскажет, когда); повтор с тем же ключом спишет один раз."},
	"err.db-unavailable": {"The database does not answer just now: nothing was changed. Try again when it is back (the Retry-After header says when to look).",
		"База данных сейчас не отвечает: ничего не изменено. Повторите, когда она вернётся (заголовок Retry-After подскажет, когда)."},
	"err.db-unknown": {"The database stopped answering while the payment was being committed: whether it was written is not known. Look at the payments before paying again.",
		"База данных перестала отвечать, когда платёж фиксировался: записан ли он, неизвестно. Посмотрите платежи, прежде чем платить снова."},
	"err.kv-unknown": {"Redis did not answer in time: nothing was charged. The key this request may have taken is given back as soon as Redis answers, before any retry with it: try again when it is back.",
		"Redis не ответил вовремя: ничего не списано. Ключ, который этот запрос мог занять, будет возвращён, как только Redis ответит, раньше любого повтора с ним: повторите, когда он вернётся."},
	"err.kv-owed-full": {"Redis has not answered for a while, and the server already owes it as many keys to give back as it may remember: nothing was charged, and no key was taken. Try again when Redis is back.",
		"Redis давно не отвечает, а сервер уже должен вернуть ему столько ключей, сколько может запомнить: ничего не списано, ключ не занят. Повторите, когда Redis вернётся."},

	// The problem types' pages, and the error pages' leads.
	"problem.database-unavailable.title": {"The database does not answer", "База данных не отвечает"},
	"problem.database-unavailable.explain": {"The lab's database (SQLite, or PostgreSQL with `-db`) could not take the write just now: it is stopped, unreachable, locked by another program or out of space. The `detail` says what became of the charge: nothing was charged, or, when the database stopped answering in the middle of its COMMIT, that it is not known. Under `set-nx` the key the request took in Redis is given back, so a retry after the database is back charges once. Retry after the number of seconds in the `Retry-After` header; the lab recovers by itself, with no restart.",
		"База данных лаборатории (SQLite или PostgreSQL с `-db`) сейчас не смогла принять запись: она остановлена, недоступна, заблокирована другой программой или переполнена. В `detail` сказано, что стало со списанием: ничего не списано или, если база перестала отвечать посреди COMMIT, что это неизвестно. При `set-nx` ключ, занятый запросом в Redis, возвращается, так что повтор после возвращения базы спишет один раз. Повторите через столько секунд, сколько указано в заголовке `Retry-After`; лаборатория восстановится сама, без перезапуска."},
	"problem.redis-unavailable.title": {"Redis does not answer", "Redis не отвечает"},
	"problem.redis-unavailable.explain": {"Protection `set-nx` keeps its keys in Redis (embedded, or the one `-redis` names), and Redis did not answer in time. Nothing was charged. A `SET NX` that Redis did not answer may still land when Redis goes on, so the server owes that key back: it deletes it (only while it holds this request's value) as soon as Redis answers, and before any retry with the key, so that the retry charges instead of being told \"duplicate\". Retry after the number of seconds in the `Retry-After` header; the lab recovers by itself, with no restart.",
		"Защита `set-nx` хранит ключи в Redis (встроенном или указанном в `-redis`), и Redis не ответил вовремя. Ничего не списано. `SET NX`, на который Redis не ответил, ещё может выполниться, когда Redis продолжит работу, поэтому сервер должен вернуть этот ключ: он удалит его (только пока в нём значение этого запроса), как только Redis ответит, и раньше любого повтора с этим ключом, чтобы повтор списал деньги, а не получил «дубликат». Повторите через столько секунд, сколько указано в заголовке `Retry-After`; лаборатория восстановится сама, без перезапуска."},
	"problem.broker-unavailable.title": {"The message broker does not answer", "Брокер сообщений не отвечает"},
	"problem.broker-unavailable.explain": {"The message broker of notify `queue` (NATS, embedded, or the one `-nats` names) does not answer. Charges go on: each message waits in the outbox, in the payment's own transaction, and is published once the broker is back. Retry after the number of seconds in the `Retry-After` header.",
		"Брокер сообщений для уведомлений через очередь (`notify` = `queue`; NATS, встроенный или указанный в `-nats`) не отвечает. Списания продолжаются: каждое сообщение ждёт в таблице исходящих (`messages`), записанное в транзакции самого платежа, и будет опубликовано, когда брокер вернётся. Повторите через столько секунд, сколько указано в заголовке `Retry-After`."},
	"error.lead.database-unavailable": {"The lab's database does not answer just now. Nothing was charged: try again in a few seconds.",
		"База данных лаборатории сейчас не отвечает. Ничего не списано: попробуйте снова через несколько секунд."},
	"error.lead.redis-unavailable": {"Redis, where protection set-nx keeps its keys, does not answer just now. Nothing was charged: try again in a few seconds.",
		"Redis, где защита set-nx хранит ключи, сейчас не отвечает. Ничего не списано: попробуйте снова через несколько секунд."},
	"error.lead.broker-unavailable": {"The message broker does not answer just now. Try again in a few seconds.",
		"Брокер сообщений сейчас не отвечает. Попробуйте снова через несколько секунд."},

	"problem.outcome-unknown.title": {"Whether the request was done is not known", "Выполнен ли запрос, неизвестно"},
	"problem.outcome-unknown.explain": {"A part the lab depends on stopped answering in the middle of the work: the database, while the payment was being committed. The payment may have been written, or not: the server cannot know, and says so rather than guess. Look at the payments (`GET …/payments`) before paying again. Under `set-nx` the key stays taken, since a payment may carry it.",
		"Часть, от которой зависит лаборатория, перестала отвечать посреди работы: база данных, пока платёж фиксировался. Платёж мог записаться, а мог и нет: сервер не может этого знать и говорит об этом, а не гадает. Посмотрите платежи (`GET …/payments`), прежде чем платить снова. При `set-nx` ключ остаётся занят: его может нести платёж."},
	"error.lead.outcome-unknown": {"The database stopped answering in the middle of the payment: whether it was written is not known. Look at the payments before paying again.",
		"База данных перестала отвечать посреди платежа: записан ли он, неизвестно. Посмотрите платежи, прежде чем платить снова."},
	"log.did.unavailable":    {"could not reach the database or Redis: answered 503, nothing charged", "не достучался до базы данных или Redis: ответил 503, ничего не списано"},
	"log.charge.unavailable": {"%s: the database or Redis does not answer: 503, nothing was charged.", "%s: база данных или Redis не отвечает — 503, ничего не списано."},

	// The event log: what became of a set-nx key whose charge did not happen.
	"log.give-back.given": {"%s: the charge did not happen after its SET NX, so the server gave the key back (DEL, while it held this request's value): a retry with it charges.",
		"%s: списание не состоялось после SET NX, поэтому сервер вернул ключ (удалил его, пока в нём было значение этого запроса): повтор с ним спишет."},
	"log.give-back.owed": {"%s: Redis did not answer, so the key this request took, or may yet take, is owed back: the server deletes it as soon as Redis answers, before any retry with it. Nothing was charged.",
		"%s: Redis не ответил, поэтому ключ, который этот запрос занял или ещё может занять, нужно вернуть: сервер удалит его, как только Redis ответит, раньше любого повтора с ним. Ничего не списано."},
	"log.give-back.given-later": {"Redis answers again: %s, owed back, is free; a retry with it charges.",
		"Redis снова отвечает: %s, который нужно было вернуть, свободен; повтор с ним спишет."},
}
