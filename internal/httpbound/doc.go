// Package httpbound bounds the connections an http.Server holds open.
// http.Server takes every connection it is offered and keeps one that has
// sent no request until its ReadHeaderTimeout, and one kept alive between
// requests until its IdleTimeout: whoever can reach the listener holds a
// goroutine, its buffers and a descriptor per connection it opens, as many
// as it opens, and a process out of descriptors cannot open a journal
// segment either.
//
// Bound keeps at most a given number open: at the bound, a new connection
// closes the one that has waited longest for a request (accepted and sent
// none yet, or idle between requests); when every one is serving a
// request, the new one is closed at once. Below the bound nothing changes.
//
// Limits: a closed connection gets no answer (the server has read nothing
// from it); a request that is being read counts as waiting until its
// headers are in.
package httpbound
