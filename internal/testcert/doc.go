// Package testcert makes short-lived certificates for the TLS tests of the
// FIX edge and the admin API: a CA, and key pairs it signs for a server on
// 127.0.0.1 or for a client named by its certificate's common name.
//
// Keys are ECDSA P-256; every certificate is valid from an hour before it is
// made to an hour after, and serial numbers count up within a test binary.
// Failures end the test (testing.TB). It is for tests only: nothing here is
// fit to secure a real listener.
package testcert
