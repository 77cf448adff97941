package views

// errorMessages say why the lab refused a request: err.<key> for a domain
// error of sim (sim.Error.Key), rule.<rule> for a field that broke a rule
// (sim.FieldError.Rule). The API says them in English; a page, in its
// reader's language.
var errorMessages = map[string]message{
	"err.invalid":          {"The request is not valid.", "Запрос составлен неверно."},
	"err.no-lab":           {"There is no lab %q.", "Лаборатории %q нет."},
	"err.no-operation":     {"There is no operation %q in this lab.", "В этой лаборатории нет операции %q."},
	"err.no-operation-yet": {"This lab has no operation yet.", "В этой лаборатории ещё нет ни одной операции."},
	"err.no-order":         {"There is no order %q.", "Заказа %q нет."},
	"err.no-comparison":    {"There is no comparison %q: comparisons are kept as long as their labs.", "Сравнения %q нет: сравнения хранятся, пока живут их лаборатории."},
	"err.no-payment":       {"There is no payment %d in this lab.", "В этой лаборатории нет платежа №%d."},
	"err.key-missing":      {"This endpoint requires an Idempotency-Key header under the replay protection.", "При защите replay этот эндпоинт требует заголовок Idempotency-Key."},
	"err.key-reused":       {"The key %q was first used with a different request; a key belongs to one request.", "Ключ %q впервые пришёл с другим запросом; ключ принадлежит одному запросу."},
	"err.conflict":         {"Another request with key %q changed what this one read at the same moment: the database failed this one's transaction (40001). Retry.", "Другой запрос с ключом %q в тот же момент изменил то, что прочитал этот: база отменила его транзакцию (40001). Повторите."},
	"err.in-flight":        {"The first request with key %q is still being processed.", "Первый запрос с ключом %q ещё выполняется."},
	"err.claim-lost":       {"The claim on key %q expired and another request took it over.", "Захват ключа %q истёк, и его перехватил другой запрос."},
	"err.demo-delete":      {"The shared lab %q cannot be deleted; reset it instead.", "Общую лабораторию %q удалить нельзя; её можно сбросить."},
	"err.kv-down":          {"The key-value store (Redis) of protection set-nx does not answer: nothing was charged. Try again when it is back.", "Хранилище ключей (Redis) защиты set-nx не отвечает: ничего не списано. Повторите, когда оно вернётся."},
	"err.max-labs":         {"The server holds as many labs as it may (%d); a lab unused for %d h is removed.", "На сервере уже столько лабораторий, сколько он может держать (%d); лаборатория, которой не пользуются %d ч, удаляется."},
	"err.max-inflight":     {"The server has as many simulated requests in flight as it may (%d); try again in a moment.", "У сервера уже столько имитируемых запросов в пути, сколько он допускает (%d); повторите через мгновение."},
	"err.max-inflight-lab": {"This lab has as many simulated requests in flight as one lab may (%d); try again in a moment.", "У этой лаборатории уже столько имитируемых запросов в пути, сколько допускается одной лаборатории (%d); повторите через мгновение."},
	"err.storm-running":    {"A storm runs in this lab (%s): one at a time; wait for its end.", "В этой лаборатории уже идёт шторм (%s): по одному; дождитесь его конца."},
	"err.no-storm":         {"This lab has no storm %q.", "В этой лаборатории нет шторма %q."},
	"err.storms":           {"As many storms as this server holds run at once (%d): try again in a moment.", "На сервере уже идёт столько штормов, сколько он держит (%d): повторите чуть позже."},
	"err.capacity":         {"The lab's server takes %d charges a second (capacity_rps), and this one came past them: nothing was charged; try again after Retry-After.", "Сервер лаборатории принимает %d списаний в секунду (capacity_rps), и это пришло сверх них: ничего не списано; повторите после Retry-After."},
	"err.max-requests":     {"The server is working on as many requests as it may (%d); try again in a moment.", "Сервер уже обрабатывает столько запросов, сколько может (%d); повторите через мгновение."},
	"err.max-streams":      {"The server has as many live pages open as it may (%d); the page will try again.", "На сервере открыто столько живых страниц, сколько он допускает (%d); страница попробует снова."},

	"rule.required":         {"is required", "обязательно"},
	"rule.one-of":           {"must be one of %s", "должно быть одним из: %s"},
	"rule.postgres-only":    {"needs the lab on PostgreSQL (-db postgres://…)", "нужна лаборатория на PostgreSQL (-db postgres://…)"},
	"rule.range":            {"must be an integer from %d to %d", "должно быть целым числом от %d до %d"},
	"rule.range-decimal":    {"must be a number from %g to %g", "должно быть числом от %g до %g"},
	"rule.not-below":        {"must not be less than %s", "не должно быть меньше, чем %s"},
	"rule.length":           {"must be %d to %d characters long", "должно быть длиной от %d до %d символов"},
	"rule.order-chars":      {"may contain only letters A–Z and a–z, digits and . _ : -", "может содержать только латинские буквы, цифры и . _ : -"},
	"rule.key-visible":      {"must contain only visible ASCII characters (no spaces or control characters)", "должен состоять только из видимых символов ASCII (без пробелов и управляющих символов)"},
	"rule.key-printable":    {"must contain only printable ASCII characters", "должен состоять только из печатных символов ASCII"},
	"rule.key-quote-end":    {"a quoted key must end with a double quote", "ключ в кавычках должен заканчиваться двойной кавычкой"},
	"rule.key-escape":       {`in a quoted key, \ may only escape " or \`, `в ключе в кавычках \ может экранировать только " или \`},
	"rule.key-inner-quote":  {`a " inside a quoted key must be escaped as \"`, `" внутри ключа в кавычках нужно экранировать как \"`},
	"rule.once":             {"must be sent once", "должен быть отправлен один раз"},
	"rule.whole":            {"must be a whole number", "должно быть целым числом"},
	"rule.number":           {"must be a number", "должно быть числом"},
	"rule.unreadable":       {"could not be read", "не удалось прочитать"},
	"rule.step-at":          {"is required: the number of the step to take, from 0", "обязательно: номер шага, начиная с 0"},
	"rule.lesson-open":      {"must be chosen first", "сначала нужно выбрать урок"},
	"rule.lesson-setup":     {"must be set up first", "сначала урок нужно подготовить"},
	"rule.lesson-number":    {"must be a lesson from 1 to %d", "должно быть номером урока от 1 до %d"},
	"rule.scenario-code":    {"is not a scenario code", "это не код сценария"},
	"rule.scenario-damaged": {"is damaged or too large", "повреждён или слишком велик"},
	"rule.scenario-long":    {"has more than %d actions", "содержит больше %d действий"},
	"rule.action":           {"%q is not an action", "%q — не действие"},
	"rule.no-operation":     {"names operation %d, which the scenario has not made", "ссылается на операцию %d, которой сценарий ещё не создал"},
}

// ErrorText is a domain error's message in l.
func (l Lang) ErrorText(key string, args ...any) string { return l.T("err."+key, args...) }

// RuleText is why a field was refused, in l: the rule it broke, or, for a
// refusal that names no rule, its detail as given.
func (l Lang) RuleText(rule, detail string, args ...any) string {
	if rule == "" {
		return detail
	}
	return l.T("rule."+rule, args...)
}
