package edge

import (
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"net/netip"
	"slices"
)

// LogonRequest is what an Authenticator decides on.
type LogonRequest struct {
	Key SessionKey
	// Password is the Logon's Password (554), nil when absent. It is only
	// valid during the call: the edge removes it before QuickFIX/Go sees
	// the Logon.
	Password []byte
	// NewPassword is the Logon's NewPassword (925), nil when absent, valid
	// during the call only, as Password.
	NewPassword []byte
	// Source is the client's address.
	Source netip.Addr
	// Certificate is the client's verified TLS certificate (the leaf of the
	// first verified chain), nil without mutual TLS.
	Certificate *x509.Certificate
}

// Authenticator decides whether a Logon may reach QuickFIX/Go. It is
// called from the connection's own goroutine, concurrently for different
// connections. A non-nil error refuses the Logon: the client receives a
// Logout whose text does not say why (the error is logged instead).
type Authenticator interface {
	Authenticate(req *LogonRequest) error
}

// AuthenticatorFunc adapts a function to Authenticator.
type AuthenticatorFunc func(req *LogonRequest) error

// Authenticate calls f.
func (f AuthenticatorFunc) Authenticate(req *LogonRequest) error { return f(req) }

// Errors returned by Credentials.
var (
	ErrUnknownCompID       = errors.New("edge: unknown CompID")
	ErrWrongVenueCompID    = errors.New("edge: wrong TargetCompID for this CompID")
	ErrBadPassword         = errors.New("edge: wrong or missing password")
	ErrSourceNotAllowed    = errors.New("edge: source address not allowed for this CompID")
	ErrCertificateRequired = errors.New("edge: client certificate required for this CompID")
	ErrCertificateMismatch = errors.New("edge: client certificate not bound to this CompID")
)

// Told is a refusal an Authenticator may return once the credentials
// passed: its Text goes to the client in the Logout (58), where any other
// refusal says only "Logon refused". Only a client that proved who it is
// learns why (doc.go, "What a connection goes through"), such as that its session is disabled.
type Told struct{ Text string }

func (t *Told) Error() string { return "edge: " + t.Text }

// Credential is what a client CompID must prove.
type Credential struct {
	// Password, when not empty, must equal the Logon's Password (554).
	// An empty Password accepts any Logon without one or with any.
	Password string
	// VenueCompID, when not empty, is the TargetCompID the client must use.
	VenueCompID string
	// Sources, when not empty, are the addresses the client may connect from.
	Sources []netip.Prefix
	// CertificateNames are the names (subject CN or DNS SAN) of client
	// certificates bound to this CompID; empty means the CompID itself.
	// Whenever a client presents a certificate it must carry one of them,
	// so that one client's certificate never logs on as another.
	CertificateNames []string
	// RequireCertificate refuses the Logon without a client certificate.
	RequireCertificate bool
}

// Credentials is an Authenticator from a table of client CompIDs.
type Credentials map[string]Credential

// NewPasswordRefused is the Told that Credentials answers a Logon asking
// to change its password with: the table is the venue's configuration,
// which a Logon does not change. Taking the Logon and keeping the old
// password would leave the client believing it changed (FIX 4.4 has no
// field in the Logon's answer to say it did not).
const NewPasswordRefused = "NewPassword (925) is not supported: passwords are set in the venue's configuration; log on without 925"

// Authenticate checks req against the CompID's Credential. A Logon with a
// NewPassword whose credentials pass is refused with NewPasswordRefused.
func (c Credentials) Authenticate(req *LogonRequest) error {
	if err := c.check(req); err != nil {
		return err
	}
	if len(req.NewPassword) > 0 {
		return &Told{Text: NewPasswordRefused}
	}
	return nil
}

func (c Credentials) check(req *LogonRequest) error {
	cred, ok := c[req.Key.ClientCompID]
	if !ok {
		return ErrUnknownCompID
	}
	if cred.VenueCompID != "" && cred.VenueCompID != req.Key.VenueCompID {
		return ErrWrongVenueCompID
	}
	if cred.Password != "" && subtle.ConstantTimeCompare([]byte(cred.Password), req.Password) != 1 {
		return ErrBadPassword
	}
	if len(cred.Sources) > 0 && !slices.ContainsFunc(cred.Sources, func(p netip.Prefix) bool {
		return p.Contains(req.Source.Unmap())
	}) {
		return ErrSourceNotAllowed
	}
	if req.Certificate == nil {
		if cred.RequireCertificate {
			return ErrCertificateRequired
		}
		return nil
	}
	names := cred.CertificateNames
	if len(names) == 0 {
		names = []string{req.Key.ClientCompID}
	}
	if !certificateHasName(req.Certificate, names) {
		return ErrCertificateMismatch
	}
	return nil
}

// certificateHasName reports whether cert's subject CN or one of its DNS
// SANs is in names.
func certificateHasName(cert *x509.Certificate, names []string) bool {
	if slices.Contains(names, cert.Subject.CommonName) {
		return true
	}
	for _, n := range cert.DNSNames {
		if slices.Contains(names, n) {
			return true
		}
	}
	return false
}
