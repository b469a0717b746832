// Package httpdrain stops an http.Server once every connection it accepted
// has been answered, which http.Server.Shutdown does not do: a request it
// reads after Shutdown began is dropped, its connection closed without an
// answer (the client sees EOF). A cluster node stops its admin and status
// servers this way when it hands their sockets on (server/handoff.go).
//
// Contract: Track before the server serves; Drain after its listener is
// closed, on a server that does not keep connections alive, so that each
// connection closes once its call is answered.
// Limits: Drain waits until the deadline it is given at most, then closes
// the server and whatever connections are still open (a client that
// connected and sent nothing is cut then); it polls every millisecond.
package httpdrain
