package web

import (
	"idemlab/sim"
	"idemlab/views"
)

// The words of sim's errors live in views, keyed by sim's codes: these say
// an error in a page's language, or in English for the API.

// errorMsg is what a page says of a domain error.
func errorMsg(se *sim.Error) views.Msg { return views.M("err."+se.Key, se.Args...) }

// ruleMsg is what a page says of a refused field.
func ruleMsg(f sim.FieldError) views.Msg {
	if f.Rule == "" {
		return views.M("notice.other", f.Detail)
	}
	return views.M("rule."+f.Rule, f.Args...)
}

// inEnglish is a domain error's message and field errors as the API sends
// them: in English, each field's detail said from its rule.
func inEnglish(se *sim.Error) (string, []sim.FieldError) {
	var fs []sim.FieldError
	for _, f := range se.Fields {
		f.Detail = views.English.RuleText(f.Rule, f.Detail, f.Args...)
		fs = append(fs, f)
	}
	return views.English.ErrorText(se.Key, se.Args...), fs
}
