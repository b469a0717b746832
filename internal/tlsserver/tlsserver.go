package tlsserver

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// Config returns a server configuration presenting the key pair of
// certFile and keyFile. With clientCAFile, clients must present a
// certificate that one of its CAs signed.
func Config(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("key pair: %w", err)
	}
	// TLS 1.3 is negotiated whenever the client offers it; 1.2 remains for
	// older FIX engines, with Go's default (forward-secret, AEAD) suites.
	t := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		pem, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client CA %s: no certificate", clientCAFile)
		}
		t.ClientCAs = pool
		t.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return t, nil
}
