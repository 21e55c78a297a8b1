package warc

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The record types of WARC/1.1 (§6).
const (
	TypeWarcinfo     = "warcinfo"
	TypeResponse     = "response"
	TypeResource     = "resource"
	TypeRequest      = "request"
	TypeMetadata     = "metadata"
	TypeRevisit      = "revisit"
	TypeConversion   = "conversion"
	TypeContinuation = "continuation"
)

// Content types of the blocks the Writer writes.
const (
	ContentTypeHTTPRequest  = "application/http;msgtype=request"
	ContentTypeHTTPResponse = "application/http;msgtype=response"
	ContentTypeFields       = "application/warc-fields"
)

// Field is one named field of a record header, or one line of an application/warc-fields block.
type Field struct {
	Name, Value string
}

// Fields is an ordered list of fields. Get is case-insensitive, as WARC field names are.
type Fields []Field

// Get returns the value of the first field named name, or "".
func (f Fields) Get(name string) string {
	for _, x := range f {
		if strings.EqualFold(x.Name, name) {
			return x.Value
		}
	}
	return ""
}

// Record is one WARC record to write. The Writer fills WARC-Record-ID, WARC-Date, Content-Length,
// WARC-Block-Digest and (for responses with an HTTP block) WARC-Payload-Digest; the caller gives the rest.
type Record struct {
	// Type is the WARC-Type, e.g. TypeResponse. Required.
	Type string
	// ID is the WARC-Record-ID, "<urn:uuid:…>"; the Writer makes one when it is empty.
	ID string
	// Date is the WARC-Date: for request, response and metadata records, when the capture began. The Writer's
	// clock when zero.
	Date time.Time
	// TargetURI is the WARC-Target-URI (written without angle brackets, as WARC/1.1 says).
	TargetURI string
	// ContentType is the Content-Type of the block.
	ContentType string
	// Fields are further named fields (WARC-Concurrent-To, WARC-IP-Address, WARC-Truncated, …), written after
	// the standard ones in this order. The Writer refuses fields it sets itself.
	Fields Fields
	// Block is the content block.
	Block []byte
}

var b32 = base32.StdEncoding

// Digest returns the "sha1:BASE32" digest of b, the form Heritrix and warcio write.
func Digest(b []byte) string {
	sum := sha1.Sum(b)
	return "sha1:" + b32.EncodeToString(sum[:])
}

// NewID returns a new random (version 4) record id, "<urn:uuid:…>".
func NewID() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("<urn:uuid:%x-%x-%x-%x-%x>", u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
}

// dateFormat is WARC-Date: UTC with microseconds, as WARC/1.1 (§5.4) allows and warcio writes.
const dateFormat = "2006-01-02T15:04:05.000000Z"

// FormatDate formats t as a WARC-Date.
func FormatDate(t time.Time) string { return t.UTC().Format(dateFormat) }

// writerFields are set by the Writer and refused in Record.Fields.
var writerFields = []string{"WARC-Type", "WARC-Record-ID", "WARC-Date", "WARC-Target-URI", "Content-Type",
	"Content-Length", "WARC-Block-Digest", "WARC-Payload-Digest"}

// checkName reports a field name that is not an RFC 9110 token.
func checkName(name string) error {
	if name == "" {
		return errors.New("empty field name")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return fmt.Errorf("field name %q: byte %#x is not allowed", name, c)
		}
	}
	return nil
}

// checkValue reports a value that would break the header: control characters other than tab.
func checkValue(v string) error {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return fmt.Errorf("value %q: control byte %#x is not allowed", v, c)
		}
	}
	return nil
}

// httpPayload returns the payload of an HTTP message block: what follows the first empty line, or nil when
// the block has no complete header.
func httpPayload(block []byte) ([]byte, bool) {
	if i := bytes.Index(block, []byte("\r\n\r\n")); i >= 0 {
		return block[i+4:], true
	}
	if i := bytes.Index(block, []byte("\n\n")); i >= 0 {
		return block[i+2:], true
	}
	return nil, false
}

// recordHeader appends the header of r (ID and Date resolved) to dst, ending with the empty line. The block is
// n bytes long with the given digests; payloadDigest "" leaves WARC-Payload-Digest out.
func recordHeader(dst []byte, r *Record, blockDigest, payloadDigest string, n int) ([]byte, error) {
	if r.Type == "" {
		return dst, errors.New("warc: record without a type")
	}
	std := []Field{{"WARC-Type", r.Type}, {"WARC-Record-ID", r.ID}, {"WARC-Date", FormatDate(r.Date)}}
	if r.TargetURI != "" {
		std = append(std, Field{"WARC-Target-URI", r.TargetURI})
	}
	for _, f := range std {
		if err := checkValue(f.Value); err != nil {
			return dst, fmt.Errorf("warc: %s: %w", f.Name, err)
		}
	}
	for _, f := range r.Fields {
		if err := checkName(f.Name); err != nil {
			return dst, fmt.Errorf("warc: %w", err)
		}
		if err := checkValue(f.Value); err != nil {
			return dst, fmt.Errorf("warc: field %s: %w", f.Name, err)
		}
		for _, w := range writerFields {
			if strings.EqualFold(f.Name, w) {
				return dst, fmt.Errorf("warc: field %s is set by the writer", f.Name)
			}
		}
	}
	if err := checkValue(r.ContentType); err != nil {
		return dst, fmt.Errorf("warc: Content-Type: %w", err)
	}
	dst = append(dst, "WARC/1.1\r\n"...)
	for _, f := range std {
		dst = appendField(dst, f)
	}
	dst = appendFields(dst, r.Fields)
	dst = appendField(dst, Field{"WARC-Block-Digest", blockDigest})
	if payloadDigest != "" {
		dst = appendField(dst, Field{"WARC-Payload-Digest", payloadDigest})
	}
	if r.ContentType != "" {
		dst = appendField(dst, Field{"Content-Type", r.ContentType})
	}
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, "\r\n\r\n"...), nil
}

func appendField(dst []byte, f Field) []byte {
	dst = append(dst, f.Name...)
	dst = append(dst, ": "...)
	dst = append(dst, f.Value...)
	return append(dst, "\r\n"...)
}

func appendFields(dst []byte, fs Fields) []byte {
	for _, f := range fs {
		dst = appendField(dst, f)
	}
	return dst
}

// FieldsBlock encodes fields as an application/warc-fields block (the content of warcinfo and metadata
// records). It refuses names that are not tokens and values with control characters.
func FieldsBlock(fs Fields) ([]byte, error) {
	var b []byte
	for _, f := range fs {
		if err := checkName(f.Name); err != nil {
			return nil, fmt.Errorf("warc: %w", err)
		}
		if err := checkValue(f.Value); err != nil {
			return nil, fmt.Errorf("warc: field %s: %w", f.Name, err)
		}
		b = appendField(b, f)
	}
	return b, nil
}
