package frontier

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Frontera's meta keys (all bin on the wire), and Frontier's own extension key for the request body.
const (
	MetaKeyFingerprint = "fingerprint" // 40-hex (sha1) bin
	MetaKeyDomain      = "domain"      // map of bin → bin, see MetaDomain
	MetaKeyJobID       = "jid"         // int
	MetaKeyScore       = "score"       // float
	MetaKeyDepth       = "depth"       // int
	MetaKeyState       = "state"       // int
	MetaKeyScrapyMeta  = "scrapy_meta" // map with str keys
	// MetaKeyBody carries Request.Body. Frontera ignores the key (its codec drops request bodies), so a request
	// without a body encodes to exactly Frontera's bytes. The codecs add it only when Body is non-empty and move it
	// back into Body when decoding; it never appears in Request.Meta of a decoded request.
	MetaKeyBody = "frontier_body"
	// MetaKeyNotBefore is Frontier's due time of a scheduled request (int, Unix seconds): the queue does not hand
	// it to a spider earlier. Revisit policies set it; Frontera ignores it.
	MetaKeyNotBefore = "frontier_not_before"
	// MetaKeyDigest is the digest of a fetched page's body (str, hex) that the spider adds to the reported
	// request, so a strategy sees whether the content changed without the body travelling: for change
	// detection only, compared for equality with an earlier fetch's. The spider's is the 64-bit xxHash of the
	// body (16 hex digits); spiders before 28 Nov 2026 sent its SHA-1 (40), which no new digest equals.
	MetaKeyDigest = "frontier_digest"
)

// ErrNoMeta is returned by the meta accessors when the key is absent.
var ErrNoMeta = errors.New("frontier: meta key absent")

// MetaDomain is Frontera's meta[b'domain'] map (DomainMiddleware plus DomainFingerprintMiddleware). All fields are
// bin on the wire; Fingerprint is the hex fingerprint of Name and is empty when the middleware did not run.
type MetaDomain struct {
	Netloc, Name, Scheme, SLD, TLD, Subdomain string
	Fingerprint                               string
}

// metaDomainKeys lists the domain map's keys in the order Frontera writes them.
var metaDomainKeys = [...]string{"netloc", "name", "scheme", "sld", "tld", "subdomain", "fingerprint"}

func (d *MetaDomain) fields() [7]*string {
	return [7]*string{&d.Netloc, &d.Name, &d.Scheme, &d.SLD, &d.TLD, &d.Subdomain, &d.Fingerprint}
}

// MetaDomainName is MetaDomain().Name, "" where the meta has no domain or MetaDomain fails, converting no other
// field: Hostname without the fallback to the URL.
func (r *Request) MetaDomainName() string { return r.metaDomainName() }

// metaDomainName is MetaDomain().Name ("" where MetaDomain fails) for Hostname, which runs several times for
// every URL a strategy worker handles: it converts only the name, not the six other strings (issue 21, item 4).
func (r *Request) metaDomainName() string {
	var d MetaDomain
	if r.metaDomain(&d, 1<<metaDomainNameIndex) != nil {
		return ""
	}
	return d.Name
}

// metaDomainNameIndex is the index of "name" in metaDomainKeys.
const metaDomainNameIndex = 1

// MetaDomainFingerprint is MetaDomain().Fingerprint, "" where the meta has no domain or MetaDomain fails,
// converting no other field: the spider-log key of a request, taken once per reported page.
func (r *Request) MetaDomainFingerprint() string {
	var d MetaDomain
	if r.metaDomain(&d, 1<<metaDomainFingerprintIndex) != nil {
		return ""
	}
	return d.Fingerprint
}

// metaDomainFingerprintIndex is the index of "fingerprint" in metaDomainKeys.
const metaDomainFingerprintIndex = 6

// metaDomain is the one reading of meta[b'domain'] that MetaDomain and Hostname share. The first entry under
// each of metaDomainKeys counts (as in Map.Get) and other keys are ignored; a nil value is an empty field, and a
// bin or str one is the field; any other type is an error, whichever field it is in. It stores into d only the
// fields whose bit is set in want (1<<i for metaDomainKeys[i]).
func (r *Request) metaDomain(d *MetaDomain, want uint8) error {
	v, ok := r.Meta.Get(MetaKeyDomain)
	if !ok {
		return ErrNoMeta
	}
	m, ok := v.(Map)
	if !ok {
		return fmt.Errorf("frontier: meta domain is %T, want a map", v)
	}
	f := d.fields()
	var seen uint8 // the keys met
	for _, e := range m {
		i := metaDomainKeyIndex(e.Key)
		if i < 0 || seen&(1<<i) != 0 {
			continue
		}
		seen |= 1 << i
		switch x := e.Value.(type) {
		case nil:
		case []byte:
			if want&(1<<i) != 0 {
				*f[i] = string(x)
			}
		case string:
			if want&(1<<i) != 0 {
				*f[i] = x
			}
		default:
			return fmt.Errorf("frontier: meta domain %s is %T, want bin", metaDomainKeys[i], x)
		}
	}
	return nil
}

// metaDomainKeyIndex is the index of k in metaDomainKeys, -1 if it is none of them.
func metaDomainKeyIndex(k Value) int {
	for i, name := range metaDomainKeys {
		if keyEqual(k, name) {
			return i
		}
	}
	return -1
}

// MetaFingerprint returns the fingerprint in meta (hex on the wire), ErrNoMeta if absent, or an error naming the
// problem if it is not hex bytes.
func (r *Request) MetaFingerprint() (Fingerprint, error) {
	v, ok := r.Meta.Get(MetaKeyFingerprint)
	if !ok {
		return nil, ErrNoMeta
	}
	switch v := v.(type) {
	case []byte:
		return ParseFingerprintHex(v)
	case string:
		return ParseFingerprintHex([]byte(v))
	}
	return nil, fmt.Errorf("frontier: meta fingerprint is %T, want bin", v)
}

// SetMetaFingerprint stores fp in meta as lower-case hex bin, as Frontera does.
func (r *Request) SetMetaFingerprint(fp Fingerprint) {
	r.Meta.Set(MetaKeyFingerprint, []byte(fp.Hex()))
}

// MetaDomain returns meta[b'domain']. Missing fields are left empty; a field of the wrong type is an error.
func (r *Request) MetaDomain() (MetaDomain, error) {
	var d MetaDomain
	err := r.metaDomain(&d, 1<<len(metaDomainKeys)-1)
	return d, err
}

// SetMetaDomain stores d as Frontera's domain map (bin keys and values, Frontera's key order). The fingerprint
// key is written only when d.Fingerprint is set. Keys of an existing domain map that d does not name are kept.
func (r *Request) SetMetaDomain(d MetaDomain) {
	var m Map
	if v, ok := r.Meta.Get(MetaKeyDomain); ok {
		if old, ok := v.(Map); ok {
			m = slices.Clone(old) // never written into: a decoded domain map may be shared (package codec)
		}
	}
	f := d.fields()
	for i, k := range metaDomainKeys {
		if k == "fingerprint" && d.Fingerprint == "" {
			continue
		}
		m.Set(k, []byte(*f[i]))
	}
	r.Meta.Set(MetaKeyDomain, m)
}

// MetaJobID returns meta[b'jid'].
func (r *Request) MetaJobID() (int64, error) { return r.metaInt(MetaKeyJobID) }

// SetMetaJobID stores id in meta[b'jid'].
func (r *Request) SetMetaJobID(id int64) { r.Meta.Set(MetaKeyJobID, id) }

// MetaDepth returns meta[b'depth'].
func (r *Request) MetaDepth() (int64, error) { return r.metaInt(MetaKeyDepth) }

// SetMetaDepth stores depth in meta[b'depth'].
func (r *Request) SetMetaDepth(depth int64) { r.Meta.Set(MetaKeyDepth, depth) }

// MetaState returns meta[b'state']; a number outside the four states is an error.
func (r *Request) MetaState() (State, error) {
	n, err := r.metaInt(MetaKeyState)
	if err != nil {
		return 0, err
	}
	if n < 0 || !State(n).Valid() {
		return 0, fmt.Errorf("frontier: meta state %d is not a state", n)
	}
	return State(n), nil
}

// SetMetaState stores s in meta[b'state'] as an int, as Frontera does.
func (r *Request) SetMetaState(s State) { r.Meta.Set(MetaKeyState, int64(s)) }

// MetaScore returns meta[b'score'] (an int is accepted and converted).
func (r *Request) MetaScore() (float64, error) {
	v, ok := r.Meta.Get(MetaKeyScore)
	if !ok {
		return 0, ErrNoMeta
	}
	switch v := v.(type) {
	case float64:
		return v, nil
	case float32:
		return float64(v), nil
	}
	n, err := toInt64(v)
	if err != nil {
		return 0, fmt.Errorf("frontier: meta score is %T, want a float", v)
	}
	return float64(n), nil
}

// SetMetaScore stores score in meta[b'score'] as a float.
func (r *Request) SetMetaScore(score float64) { r.Meta.Set(MetaKeyScore, score) }

// MetaNotBefore returns meta frontier_not_before (Unix seconds).
func (r *Request) MetaNotBefore() (int64, error) { return r.metaInt(MetaKeyNotBefore) }

// SetMetaNotBefore stores the due time in meta frontier_not_before; 0 removes it.
func (r *Request) SetMetaNotBefore(unix int64) {
	if unix == 0 {
		r.Meta.Delete(MetaKeyNotBefore)
		return
	}
	r.Meta.Set(MetaKeyNotBefore, unix)
}

// MetaDigest returns meta frontier_digest, or "" when absent.
func (r *Request) MetaDigest() string {
	v, _ := r.Meta.Get(MetaKeyDigest)
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// SetMetaDigest stores the body digest in meta frontier_digest.
func (r *Request) SetMetaDigest(hexDigest string) { r.Meta.Set(MetaKeyDigest, hexDigest) }

func (r *Request) metaInt(key string) (int64, error) {
	v, ok := r.Meta.Get(key)
	if !ok {
		return 0, ErrNoMeta
	}
	n, err := toInt64(v)
	if err != nil {
		return 0, fmt.Errorf("frontier: meta %s: %w", key, err)
	}
	return n, nil
}

func toInt64(v Value) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case int:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	case uint64:
		if v > math.MaxInt64 {
			return 0, fmt.Errorf("%d overflows int64", v)
		}
		return int64(v), nil
	}
	return 0, fmt.Errorf("value is %T, want an int", v)
}

// MetaKeyDontFilter is the meta key (bin, bool value) that exempts a request from the URL-seen test, as
// Scrapy's Request(dont_filter=True) does (see DontFilter). Frontera's Scrapy converter does not carry
// Scrapy's flag; Frontier carries it in this meta key, which Frontera ignores.
const MetaKeyDontFilter = "dont_filter"

// DontFilter reports whether r opts out of the URL-seen test: meta[MetaKeyDontFilter] is true (or a
// non-zero integer, as Python would read it).
func (r *Request) DontFilter() bool {
	v, ok := r.Meta.Get(MetaKeyDontFilter)
	if !ok {
		return false
	}
	switch v := v.(type) {
	case bool:
		return v
	case int64:
		return v != 0
	case uint64:
		return v != 0
	}
	return false
}

// SetDontFilter sets or clears the dont_filter flag in r's meta.
func (r *Request) SetDontFilter(on bool) {
	if on {
		r.Meta.Set(MetaKeyDontFilter, true)
	} else {
		r.Meta.Delete(MetaKeyDontFilter)
	}
}
