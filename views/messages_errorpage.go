package views

// errorPageMessages are the words of the error pages, the answer a browser gets
// in place of a problem's JSON. Each problem type has a lead: what happened
// and what to do, for a person rather than a program.
var errorPageMessages = map[string]message{
	"error.title":    {"Error %d", "Ошибка %d"},
	"error.home":     {"Back to the lab", "Вернуться в лабораторию"},
	"error.explain":  {"What this error means", "Что означает эта ошибка"},
	"error.ways":     {"Where next", "Куда дальше"},
	"error.retry":    {"Try again in %s.", "Повторите через %s."},
	"error.seconds":  {"second|seconds", "секунду|секунды|секунд"},
	"error.minutes":  {"minute|minutes", "минуту|минуты|минут"},
	"error.fields":   {"Fields:", "Поля:"},
	"error.nothing":  {"Nothing was changed.", "Ничего не изменилось."},
	"error.lead.lab": {"There is no lab at this address. A private lab is removed when nobody has used it for a long while, or the address was cut short when it was copied.", "По этому адресу нет лаборатории. Личная лаборатория удаляется, если ею долго никто не пользовался, — или адрес скопирован не целиком."},
	"error.lead.scenario": {"This scenario link is damaged or incomplete: copy it whole, or ask for it again. A link is rebuilt in full or not at all, so no lab was made.",
		"Ссылка на сценарий повреждена или неполна: скопируйте её целиком или попросите снова. Сценарий восстанавливается целиком или никак, поэтому лаборатория не создана."},
	"error.lead.validation-error":        {"The request is not valid, so nothing was changed. If it came from a page of the lab, reload the page and try again.", "Запрос составлен неверно, поэтому ничего не изменилось. Если он отправлен со страницы лаборатории, обновите страницу и попробуйте снова."},
	"error.lead.idempotency-key-missing": {"The charge needs an idempotency key under this protection, and none came. Nothing was charged.", "При этой защите для списания нужен ключ идемпотентности, а его нет. Ничего не списано."},
	"error.lead.idempotency-key-reused":  {"This idempotency key was first used with a different request. Nothing was charged.", "Этот ключ идемпотентности впервые пришёл с другим запросом. Ничего не списано."},
	"error.lead.serialization-failure":   {"Another request changed what this one read at the same moment; retry it.", "Другой запрос в тот же момент изменил то, что прочитал этот; повторите его."},
	"error.lead.request-in-flight":       {"The first request with this key is still being processed.", "Первый запрос с этим ключом ещё обрабатывается."},
	"error.lead.not-found":               {"There is nothing at this address. Check that it was copied whole.", "По этому адресу ничего нет. Проверьте, что он скопирован целиком."},
	"error.lead.method-not-allowed":      {"This address exists, but not for this kind of request. Open the lab and use its buttons.", "Этот адрес есть, но не для такого запроса. Откройте лабораторию и воспользуйтесь её кнопками."},
	"error.lead.body-too-large":          {"The request is larger than the lab accepts (64 KiB). Nothing was changed.", "Запрос больше, чем принимает лаборатория (64 КиБ). Ничего не изменилось."},
	"error.lead.unsupported-media-type":  {"The request is not in a form the lab reads. Nothing was changed.", "Запрос пришёл в виде, которого лаборатория не читает. Ничего не изменилось."},
	"error.lead.cross-site-request":      {"A page of another site tried to make your browser change something in the lab. Nothing was changed. To act in the lab, use the lab's own page.", "Страница другого сайта попыталась через ваш браузер что-то изменить в лаборатории. Ничего не изменилось. Чтобы действовать в лаборатории, пользуйтесь её собственной страницей."},
	"error.lead.vote-closed":             {"The vote on this question is closed: the teacher revealed the answer.", "Голосование по этому вопросу закрыто: учитель показал ответ."},
	"error.lead.forbidden":               {"This is not allowed. Nothing was changed.", "Так делать нельзя. Ничего не изменилось."},
	"error.lead.rate-limited":            {"This address has asked for this too often in a short time, or holds its share of the server, and the lab is shared with others. Nothing was done: wait a little and try again.", "С этого адреса это запрашивали слишком часто или он уже занял свою долю сервера, а лабораторией пользуются и другие. Ничего не сделано: подождите немного и попробуйте снова."},
	"error.lead.server-busy":             {"The server is at one of its limits just now. Nothing was done: wait a little and try again.", "Сервер сейчас упёрся в один из своих пределов. Ничего не сделано: подождите немного и попробуйте снова."},
	"error.lead.internal-error":          {"Something went wrong inside the lab. It has been logged. Try again in a moment.", "Внутри лаборатории что-то пошло не так; это записано в журнал. Попробуйте ещё раз чуть позже."},
	"error.lead.other":                   {"The lab could not answer this request.", "Лаборатория не смогла ответить на этот запрос."},
}
