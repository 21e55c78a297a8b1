package spider

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
)

// The error names a spider reports in request_error (frontier.RequestError.Error). They follow the names Scrapy
// (Twisted) reports, so a Frontera strategy that looks at them keeps working; names Scrapy lacks are marked.
const (
	ErrNameDNS              = "DNSLookupError"         // the host name does not resolve
	ErrNameConnRefused      = "ConnectionRefusedError" // nothing listens on the port
	ErrNameTimeout          = "TimeoutError"           // connect or whole-request timeout
	ErrNameTLS              = "TLSError"               // handshake or certificate failure (Scrapy: SSLError)
	ErrNameConnLost         = "ConnectionLost"         // reset or closed before the response was complete
	ErrNameTooManyRedirects = "TooManyRedirects"       // longer than Config.MaxRedirects (Frontier's name)
	ErrNameRedirectLoop     = "RedirectLoop"           // a redirect back to a URL of its own chain (Frontier's name)
	ErrNameRobots           = "RobotsDisallowed"       // robots.txt disallows the URL (Frontier's name)
	ErrNameRobotsUnavail    = "RobotsUnavailable"      // robots.txt answered 5xx: host closed for now (Frontier's name)
	ErrNameInvalidURL       = "InvalidURL"             // the request's URL cannot be parsed (Frontier's name)
	ErrNameNotSupported     = "NotSupported"           // a scheme other than http(s) (Scrapy's name)
	ErrNameDecoding         = "DecodingError"          // a Content-Encoding body that does not decode (Frontier's name)
	ErrNameConnection       = "ConnectionError"        // any other network error
)

// ErrorNames lists every name a spider reports, for documentation and metrics.
var ErrorNames = []string{
	ErrNameDNS, ErrNameConnRefused, ErrNameTimeout, ErrNameTLS, ErrNameConnLost, ErrNameTooManyRedirects, ErrNameRedirectLoop,
	ErrNameRobots, ErrNameRobotsUnavail, ErrNameInvalidURL, ErrNameNotSupported, ErrNameDecoding, ErrNameConnection,
}

// fetchError is an error with its reported name.
type fetchError struct {
	name string
	err  error
}

func (e *fetchError) Error() string { return "spider: " + e.name + ": " + e.err.Error() }
func (e *fetchError) Unwrap() error { return e.err }

func named(name string, err error) error { return &fetchError{name: name, err: err} }

// ClassifyError returns the request_error name of an error from fetching a URL.
func ClassifyError(err error) string {
	var fe *fetchError
	if errors.As(err, &fe) {
		return fe.name
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && !dnsErr.IsTimeout {
		return ErrNameDNS
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return ErrNameTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ErrNameTimeout
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return ErrNameConnRefused
	}
	var (
		certErr  *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		invalid  x509.CertificateInvalidError
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
	)
	if errors.As(err, &certErr) || errors.As(err, &unknown) || errors.As(err, &hostErr) ||
		errors.As(err, &invalid) || errors.As(err, &recErr) || errors.As(err, &alertErr) ||
		strings.Contains(err.Error(), "tls: ") {
		return ErrNameTLS
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.EPIPE) {
		return ErrNameConnLost
	}
	return ErrNameConnection
}
