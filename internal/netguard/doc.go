// Package netguard keeps slow or greedy clients from exhausting the
// server: a listener that caps open connections in total and per client
// address, answering a refused connection with a small 503 instead of
// leaving it in the accept queue; deadlines that require a request body
// and a response to make progress rather than finish within one fixed
// time, so big pushes and long clones still work; and the open-file
// limit those caps are sized from.
package netguard
