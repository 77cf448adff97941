package views

// shareMessages are the words of the fair shares (what one client address
// may hold of the server's limits) and of a lab removed under its open
// pages.
var shareMessages = map[string]message{
	"err.streams-per-address": {"This address has as many live pages open as one address may (%d, a quarter of the server's); close some, and the page will try again.",
		"С этого адреса открыто столько живых страниц, сколько допускается одному адресу (%d, четверть от серверного предела); закройте лишние, и страница попробует снова."},
	"err.inflight-per-address": {"This address has as many simulated requests in flight as one address may (%d, a quarter of the server's); try again in a moment.",
		"У этого адреса уже столько имитируемых запросов в пути, сколько допускается одному адресу (%d, четверть от серверного предела); повторите через мгновение."},
	"err.labs-per-address": {"This address holds as many labs as one address may (%d); delete those you no longer need, or wait: a lab unused for %d h is removed.",
		"У этого адреса уже столько лабораторий, сколько допускается одному адресу (%d); удалите ненужные или подождите: лаборатория, которой не пользуются %d ч, удаляется."},

	"live.gone": {"○ The lab was deleted", "○ Лаборатория удалена"},
	"notice.lab-gone": {"This lab was deleted: nothing here can be changed any more, and the page no longer updates.",
		"Эта лаборатория удалена: здесь больше ничего нельзя изменить, и страница больше не обновляется."},
	"notice.lab-gone.new": {"Open the shared lab, or make a new one", "Открыть общую лабораторию или создать новую"},
}
