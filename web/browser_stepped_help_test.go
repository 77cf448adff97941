package web_test

// logFirstScreen logs what of the stepped race a projector's window leaves
// out, and how large the diagram draws a statement's words.
func (l *labTab) logFirstScreen(when string) {
	l.t.Helper()
	l.t.Logf("%s: %q; %s", when, l.offScreen(), eval[string](l, `(() => {
		const out = [...document.querySelectorAll('#stepped, [data-testid="step-racer"], [data-testid="stepped-abort"], [data-testid="diagram-steps"]')]
			.filter(el => { const r = el.getBoundingClientRect(); return r.top < 0 || r.bottom > innerHeight || r.right > innerWidth; })
			.map(el => (el.dataset.testid ?? el.id) + " off-screen");
		const svg = document.querySelector('[data-testid="sequence-diagram"] svg'), label = svg?.querySelector('[data-testid="diagram-steps"] .sd-label');
		out.push("diagram at " + (svg?.getScreenCTM()?.a ?? 0).toFixed(2) + "× its size, a statement's words " + (label?.getBoundingClientRect().height ?? 0).toFixed(1) + " px high");
		return out.join("; ");
	})()`))
}

// orderCharges counts a ledger's payments by order.
func orderCharges(led ledger) map[string]int64 {
	got := map[string]int64{}
	for _, p := range led.Payments {
		got[p.OrderID]++
	}
	return got
}
