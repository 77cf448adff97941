package web

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
	"idemlab/views"
)

// The machine values that the diagram turns into words through a catalog
// key: the key's prefix and every value it may be followed by.
var dgOutcomes = []sim.Outcome{sim.OutcomeNotReached, sim.OutcomePending, sim.OutcomeCharged, sim.OutcomeDuplicate,
	sim.OutcomeReplayed, sim.OutcomeInFlight, sim.OutcomeConflict, sim.OutcomeMismatch, sim.OutcomeRejected, sim.OutcomeFailed,
	sim.OutcomeCreated, sim.OutcomeUpdated, sim.OutcomeDeleted, sim.OutcomeAbsent, sim.OutcomeDropped, sim.OutcomeUnavailable}

func dgDynamicKeys() map[string][]string {
	var fates, outcomes, strategies []string
	for _, f := range sim.Fates {
		fates = append(fates, string(f))
	}
	for _, o := range dgOutcomes {
		outcomes = append(outcomes, string(o))
	}
	for _, s := range sim.KeyStrategies {
		strategies = append(strategies, string(s))
	}
	lanes := []string{"client", "network", "server", "database", "broker", "consumer", "mail"}
	for _, l := range lanes[:7] {
		lanes = append(lanes, l+".full")
	}
	return map[string][]string{
		"diagram.fate.":     fates,
		"diagram.box.":      outcomes,
		"diagram.did.":      outcomes,
		"diagram.strategy.": strategies,
		"diagram.lane.":     lanes,
		"diagram.caption.":  {"PUT", "DELETE", "empty"},
	}
}

// dgVerb matches a fmt verb, such as %d, %[1]s or %.2f.
var dgVerb = regexp.MustCompile(`%(\[\d+\])?[-+# 0]*\d*(\.\d+)?[a-zA-Z%]`)

// TestDiagramCatalog checks the diagram's catalog whole: every key the
// diagram's code names, literally or as a prefix and a machine value, is
// there with words in both languages and the same fmt verbs in each; no
// other catalog shadows it; and no key is left over.
func TestDiagramCatalog(t *testing.T) {
	t.Parallel()
	catalog := views.DiagramMessages()
	if len(catalog) == 0 {
		t.Fatal("empty catalog")
	}
	verbs := func(s string) []string {
		var out []string
		for _, v := range dgVerb.FindAllString(s, -1) {
			out = append(out, v[len(v)-1:])
		}
		slices.Sort(out)
		return out
	}
	for _, key := range views.DiagramKeys() {
		m := catalog[key]
		en, ru := m[0], m[1]
		if !strings.HasPrefix(key, "diagram.") {
			t.Errorf("%s: not in the diagram. namespace", key)
		}
		if strings.TrimSpace(en) == "" || strings.TrimSpace(ru) == "" {
			t.Errorf("%s: empty words: en %q, ru %q", key, en, ru)
		}
		enForms, ruForms := strings.Split(en, "|"), strings.Split(ru, "|")
		if len(enForms) > 1 && (len(enForms) != 2 || len(ruForms) != 3) {
			t.Errorf("%s: counted word with %d English and %d Russian forms, want 2 and 3", key, len(enForms), len(ruForms))
		}
		for _, f := range ruForms {
			if !cmp.Equal(verbs(enForms[0]), verbs(f)) {
				t.Errorf("%s: fmt verbs differ: en %q %v, ru %q %v", key, enForms[0], verbs(enForms[0]), f, verbs(f))
			}
		}
		if got := views.Russian.T(key); got != ru {
			t.Errorf("%s: another catalog shadows it: T gives %q, the diagram's is %q", key, got, ru)
		}
		if strings.Count(en, "\n") > 2 || strings.Count(ru, "\n") > 2 {
			t.Errorf("%s: more than three lines", key)
		}
	}

	// The keys the code names.
	used := map[string]bool{}
	dynamic := dgDynamicKeys()
	literal := regexp.MustCompile(`"(diagram\.[a-z0-9.-]*)"`)
	for _, file := range []string{"../views/diagram.templ", "../views/diagram_layout.go", "../views/diagram_queue.go", "../views/messages_diagram.go"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if filepath.Base(file) == "messages_diagram.go" {
			// Only what follows the catalog: its own keys do not count.
			_, src, _ = strings.Cut(src, "\n}\n")
		}
		for _, m := range literal.FindAllStringSubmatch(src, -1) {
			key := m[1]
			if strings.HasSuffix(key, ".") {
				values, ok := dynamic[key]
				if !ok {
					t.Errorf("%s names the prefix %q: tell dgDynamicKeys what follows it", file, key)
				}
				for _, v := range values {
					used[key+v] = true
				}
				continue
			}
			used[key] = true
		}
	}
	for key := range used {
		if _, ok := catalog[key]; !ok {
			t.Errorf("key %q is used but not in the catalog", key)
		}
	}
	for key := range catalog {
		if !used[key] {
			t.Errorf("key %q is in the catalog but not used", key)
		}
	}
}
