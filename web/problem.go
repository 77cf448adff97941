package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/views"
)

// problemType is one kind of error answer (RFC 9457): its type URI is
// /problems/{Slug}, a page of this server that explains it.
type problemType struct {
	api.ProblemType        // the contract's: slug, status, English title
	Explain         string // a few sentences for the problem's page
	// The page in Russian; the JSON stays English, for programs.
	TitleRU, ExplainRU string
}

// The problem types of the API, one per way a request can fail. Those a
// charge can end in take their status from the charge endpoint's contract
// (sim.StatusOf): one table says what each outcome answers.
var (
	probValidation = problemType{api.ProblemValidation,
		"A field of the request is missing, of the wrong type or out of its range. The `errors` member lists every field and what is wrong with it. Nothing was written: fix the request and send it again.",
		"Запрос составлен неверно", "Поле запроса отсутствует, имеет неверный тип или выходит за допустимые границы. В поле `errors` перечислены все такие поля и что с каждым не так. Ничего не записано: исправьте запрос и отправьте его снова."}
	probKeyMissing = problemType{api.ProblemKeyMissing,
		"Under the replay protection the charge endpoint only accepts requests that carry an `Idempotency-Key` header. Without a key the server cannot tell a retry from a new purchase, so it refuses rather than risk charging twice. Generate a key once per operation (a UUID) and send it with every retry.",
		"Нужен заголовок Idempotency-Key", "При защите replay эндпоинт списания принимает только запросы с заголовком `Idempotency-Key`. Без ключа сервер не отличит повтор от новой покупки, поэтому отказывает, а не рискует списать дважды. Генерируйте ключ один раз на операцию (UUID) и отправляйте его с каждым повтором."}
	probKeyReused = problemType{api.ProblemKeyReused,
		"This key was first used with a different request body. A key names one operation: the server keeps the first request's fingerprint and refuses any other body under the same key, as Stripe and the IETF Idempotency-Key draft do. Use a new key for a new operation.",
		"Ключ уже использован с другим запросом", "Этот ключ впервые пришёл с другим телом запроса. Ключ обозначает одну операцию: сервер хранит отпечаток первого запроса и отклоняет любое другое тело с тем же ключом — так делают Stripe и черновик IETF Idempotency-Key. Для новой операции нужен новый ключ."}
	probConflict = problemType{api.ProblemConflict,
		"Another request changed what this one had read, at the same moment, and the database (PostgreSQL, at the SERIALIZABLE isolation level) could not put the two one after the other: it failed this one's transaction (SQLSTATE 40001) rather than let both charge. Nothing was written. Retry after the number of seconds in the `Retry-After` header: the retry sees what the other request committed.",
		"Транзакция проиграла гонку: повторите", "Другой запрос в тот же момент изменил то, что прочитал этот, и база (PostgreSQL на уровне изоляции SERIALIZABLE) не смогла выстроить их один за другим: она отменила транзакцию этого запроса (SQLSTATE 40001), а не дала списать обоим. Ничего не записано. Повторите через столько секунд, сколько указано в заголовке `Retry-After`: повтор увидит то, что зафиксировал другой запрос."}
	probInFlight = problemType{api.ProblemInFlight,
		"The first request with this key is still being processed. Retry after the number of seconds in the `Retry-After` header: you will then get its stored answer. If the first request crashed, its claim expires after the lab's lock timeout and the key can be used again.",
		"Запрос с этим ключом ещё выполняется", "Первый запрос с этим ключом ещё обрабатывается. Повторите через столько секунд, сколько указано в заголовке `Retry-After`: тогда придёт его сохранённый ответ. Если первый запрос упал, его захват истечёт через таймаут блокировки лаборатории, и ключ снова можно будет использовать."}
	probNotFound = problemType{api.ProblemNotFound,
		"There is no such lab, operation, payment or page. Lab ids are long random strings: check that the address was copied whole.",
		"Не найдено", "Такой лаборатории, операции, платежа или страницы нет. Идентификаторы лабораторий — длинные случайные строки: проверьте, что адрес скопирован целиком."}
	probMethod = problemType{api.ProblemMethod,
		"This address exists but does not accept this HTTP method. The `Allow` header lists the methods it does accept.",
		"Метод не разрешён", "Этот адрес существует, но не принимает такой HTTP-метод. Заголовок `Allow` перечисляет разрешённые методы."}
	probTooLarge = problemType{api.ProblemTooLarge,
		"Request bodies are limited to 64 KiB. A charge request is a few dozen bytes: a larger body is a mistake or an attack.",
		"Слишком большое тело запроса", "Тело запроса ограничено 64 КиБ. Запрос на списание занимает несколько десятков байт: тело больше — ошибка или атака."}
	probMediaType = problemType{api.ProblemMediaType,
		"The API reads JSON only: send the body with the header `Content-Type: application/json`.",
		"Неподдерживаемый тип содержимого", "API принимает только JSON: отправляйте тело с заголовком `Content-Type: application/json`."}
	probCrossSite = problemType{api.ProblemCrossSite,
		"A page of another site asked your browser to change something in the lab. The lab's forms and its API take changes only from the lab's own pages and from programs (`curl`), so nobody can reset or charge in your lab behind your back. The browser tells where a request comes from (the `Sec-Fetch-Site` and `Origin` headers); a page on another port of the same host counts as another site.",
		"Запрос с другого сайта", "Страница другого сайта попросила ваш браузер что-то изменить в лаборатории. Формы лаборатории и её API принимают изменения только со страниц самой лаборатории и от программ (`curl`), чтобы никто не мог сбросить вашу лабораторию или списать деньги у вас за спиной. Откуда пришёл запрос, сообщает браузер (заголовки `Sec-Fetch-Site` и `Origin`); страница на другом порту того же хоста считается другим сайтом."}
	probForbidden = problemType{api.ProblemForbidden,
		"The request is understood, and refused: what it asks is not allowed. The shared lab `demo`, for one, cannot be deleted, since the whole class uses it. Create a private lab to have one of your own.",
		"Запрещено", "Запрос понят, но выполнить его нельзя. Например, общую лабораторию `demo` нельзя удалить: ею пользуется весь класс. Создайте личную лабораторию, чтобы распоряжаться ею самому."}
	probRateLimited = problemType{api.ProblemRateLimit,
		"This address has asked for too much of one costly thing in a short time: new labs, side-by-side comparisons or scenario links. Each is limited per client address, so that one person's script cannot crowd out the rest of the class. The `limit` member names the limit reached. Nothing was done: try again after the number of seconds in the `Retry-After` header.",
		"Слишком много запросов", "С этого адреса за короткое время пришло слишком много дорогих запросов одного рода: новые лаборатории, сравнения или ссылки на сценарии. Каждый такой запрос ограничен для одного адреса клиента, чтобы скрипт одного человека не мешал остальному классу. Поле `limit` называет сработавшее ограничение. Ничего не сделано: повторите через столько секунд, сколько указано в заголовке `Retry-After`."}
	probBusy = problemType{api.ProblemBusy,
		"A limit of the whole server is reached: how many labs it holds (`max-labs`), how many simulated requests may be in flight across all labs (`max-inflight`) how many pages may follow their labs live (`max-streams`) or how many requests it works on at once (`max-requests`). The `limit` member names it. Nothing was done: try again after the number of seconds in the `Retry-After` header. Idle labs are removed in time, and requests in flight finish.",
		"Сервер занят", "Достигнут предел всего сервера: сколько лабораторий он хранит (`max-labs`), сколько имитированных запросов может выполняться сразу во всех лабораториях (`max-inflight`) сколько страниц может следить за своими лабораториями вживую (`max-streams`) или сколько запросов он обрабатывает одновременно (`max-requests`). Поле `limit` называет его. Ничего не сделано: повторите через столько секунд, сколько указано в заголовке `Retry-After`. Заброшенные лаборатории со временем удаляются, а выполняющиеся запросы завершаются."}
	probInternal = problemType{api.ProblemInternal,
		"Something went wrong inside the lab. It has been logged. The request may be retried; with an Idempotency-Key that is always safe.",
		"Внутренняя ошибка сервера", "Внутри лаборатории что-то пошло не так; это записано в журнал. Запрос можно повторить — с Idempotency-Key это всегда безопасно."}
)

// problemTypes lists every problem type, for the explanation pages.
func problemTypes() []problemType {
	return []problemType{probValidation, probKeyMissing, probKeyReused, probInFlight, probConflict, probNotFound, probMethod, probTooLarge, probMediaType, probCrossSite, probForbidden, probRateLimited, probBusy, probInternal}
}

// Problem is an RFC 9457 problem details object.
type Problem struct {
	Type     string           `json:"type"`
	Title    string           `json:"title"`
	Status   int              `json:"status"`
	Detail   string           `json:"detail,omitempty"`
	Instance string           `json:"instance,omitempty"`
	Errors   []sim.FieldError `json:"errors,omitempty"`
	// Limit names the limit reached, for 429 and 503: max-labs,
	// max-inflight, max-streams, max-requests, lab-rate, compare-rate, scenario-rate.
	Limit string `json:"limit,omitempty"`

	retryAfter int // seconds, for 409, 429 and 503: the Retry-After header
	// said is the detail as words of views, and saidFields each error's,
	// for a page in another language than the JSON's English.
	said       views.Msg
	saidFields []views.Msg
}

// Error makes Problem an error that handlers can return.
func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail) }

func newProblem(t problemType, detail string) *Problem {
	return &Problem{Type: t.URI(), Title: t.Title, Status: t.Status, Detail: detail}
}

// problemFor maps any error to the problem the client sees: the one place
// where domain errors become HTTP statuses. Internal details never leak.
func problemFor(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var se *sim.Error
	if errors.As(err, &se) {
		var q *Problem
		msg, fields := inEnglish(se)
		switch se.Code {
		case sim.EInvalid:
			q = newProblem(probValidation, msg)
			q.Errors = fields
		case sim.ENotFound:
			q = newProblem(probNotFound, msg)
		case sim.EKeyMissing:
			q = newProblem(probKeyMissing, msg)
		case sim.EKeyReused:
			q = newProblem(probKeyReused, msg)
		case sim.EInFlight:
			q = newProblem(probInFlight, msg)
			q.retryAfter = retrySeconds(se.RetryAfter)
		case sim.EConflict:
			q = newProblem(probConflict, msg)
			q.retryAfter = retrySeconds(se.RetryAfter)
		case sim.EForbidden:
			q = newProblem(probForbidden, msg)
		case sim.EBusy:
			q = newProblem(probBusy, msg)
			q.Limit = se.Limit
			q.retryAfter = retrySeconds(se.RetryAfter)
		default:
			return newProblem(probInternal, "")
		}
		q.said = errorMsg(se)
		for _, f := range se.Fields {
			q.saidFields = append(q.saidFields, ruleMsg(f))
		}
		return q
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return newProblem(probNotFound, "There is nothing at this address.")
		case http.StatusMethodNotAllowed:
			return newProblem(probMethod, "")
		case http.StatusRequestEntityTooLarge:
			return newProblem(probTooLarge, "")
		case http.StatusUnsupportedMediaType:
			return newProblem(probMediaType, "")
		}
		if he.Code >= 400 && he.Code < 500 {
			return &Problem{Type: "about:blank", Title: http.StatusText(he.Code), Status: he.Code}
		}
	}
	return newProblem(probInternal, "")
}

// maxEcho is how many characters of the request a problem repeats at most:
// a 64 KiB scenario code or lab id is not sent back whole.
const maxEcho = 200

// clipped is p for the answer to the request at path: its instance the
// path, and each string that may repeat the request (detail, instance,
// the errors' fields and details) cut to maxEcho characters. p itself,
// and the errors it shares with a domain error, are not changed.
func (p *Problem) clipped(path string) *Problem {
	q := *p
	q.Detail, q.Instance = clip(p.Detail), clip(path)
	if p.Errors != nil {
		q.Errors = make([]sim.FieldError, len(p.Errors))
		for i, f := range p.Errors {
			q.Errors[i] = sim.FieldError{Field: clip(f.Field), Detail: clip(f.Detail)}
		}
	}
	return &q
}

// clip cuts s to maxEcho characters, the last an ellipsis when cut; bytes
// that are not UTF-8 count one each.
func clip(s string) string { return clipTo(s, maxEcho) }

// clipTo cuts s to most characters, the last an ellipsis when cut.
func clipTo(s string, most int) string {
	if len(s) <= most || utf8.RuneCountInString(s) <= most {
		return s
	}
	n := 0
	for i := range s {
		if n == most-1 {
			return strings.ToValidUTF8(s[:i], "\uFFFD") + "…"
		}
		n++
	}
	return s
}

// retrySeconds is a Retry-After of d: whole seconds, rounded up, at least 1
// (0 would invite a retry at once).
func retrySeconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

// handleError is Echo's error handler: every error becomes a problem+json
// answer, or its page for a browser (wantsPage), logged when it is the
// server's fault.
func handleError(log func(c echo.Context, err error)) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		if c.Request().Context().Err() != nil && errors.Is(err, context.Canceled) {
			return // the client has gone: there is nobody to answer, and nothing went wrong
		}
		p := problemFor(err)
		if p.Status >= 500 && p.Status != http.StatusServiceUnavailable { // a busy server is not a fault
			log(c, err)
		}
		p = p.clipped(c.Request().URL.Path)
		h := c.Response().Header()
		if p.retryAfter > 0 {
			h.Set("Retry-After", strconv.Itoa(p.retryAfter))
		}
		addVary(h, "Accept")
		if wantsPage(c.Request()) && errorPage(c, p) == nil {
			return
		}
		if c.Request().Header.Get("HX-Request") == "true" && errorNotice(c, p) == nil {
			return
		}
		h.Set(echo.HeaderContentType, "application/problem+json")
		if c.Request().Method == http.MethodHead {
			c.NoContent(p.Status)
			return
		}
		c.JSON(p.Status, p)
	}
}
