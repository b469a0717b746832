// Package tlsserver builds the TLS configuration of the venue's listeners
// (the FIX edge, the admin API) from PEM files, so both apply the same
// rules: TLS 1.2 at least (1.3 whenever the client offers it, Go's default
// forward-secret AEAD suites), and with a client CA file, a client
// certificate signed by it required.
//
// Contract: Config reads the files once; an error names what failed (the
// key pair, the client CA file, or a CA file without a certificate) and
// the caller adds its own prefix. No limits of its own.
package tlsserver
