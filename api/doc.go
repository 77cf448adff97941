// Package api is the HTTP contract both sides of the lab speak: the
// routes, the headers, the problem types, and which status answers which
// outcome. The web layer serves it; the simulated client and the replay
// guard read and write answers by it; nothing else needs net/http.
package api
