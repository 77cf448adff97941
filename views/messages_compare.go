package views

// compareMessages are the words of the side-by-side comparison's links and
// of the page at the Compare button's address.
var compareMessages = map[string]message{
	"compare.cell.link": {"Open a new lab of your own with this cell's settings and script",
		"Открыть новую лабораторию с настройками и сценарием этой ячейки — только вашу"},
	"compare.start.lead": {"One fault script runs in 30 fresh labs, one per key source × protection, and two purchases through the queue in 9 more, one per consumer deduplication × delivery fate; the page shows what each ended with and gets an address of its own to share. Each cell opens a new lab of your own that replays it.",
		"Один сценарий сбоев запускается в 30 новых лабораториях — по одной на каждый источник ключа × защиту, — и две покупки через очередь ещё в девяти — по одной на дедупликацию у консьюмера × судьбу доставки. Страница показывает, чем закончилась каждая, и получает свой адрес, чтобы им поделиться. Каждая ячейка открывает вашу собственную новую лабораторию, которая её повторяет."},
}
