package frontier

import (
	"errors"
	"reflect"
	"testing"
)

func TestMessageTagsAndNames(t *testing.T) {
	for _, tc := range []struct {
		m         Message
		tag, name string
	}{
		{&PageCrawled{}, "pc", "page_crawled"},
		{&LinksExtracted{}, "le", "links_extracted"},
		{&RequestError{}, "re", "request_error"},
		{&Offset{}, "of", "offset"},
		{&UpdateScore{}, "us", "update_score"},
		{&NewJobID{}, "njid", "new_job_id"},
		{&Stats{}, "st", "stats"},
		{&AddSeeds{}, "as", "add_seeds"},
	} {
		if tc.m.Tag() != tc.tag || tc.m.Name() != tc.name {
			t.Errorf("%T: Tag %q Name %q, want %q %q", tc.m, tc.m.Tag(), tc.m.Name(), tc.tag, tc.name)
		}
	}
}

func TestMetaAccessorsRoundTrip(t *testing.T) {
	r := &Request{URL: "http://example.com/", Meta: Map{{Key: "scrapy_meta", Value: Map{}}}}
	for _, f := range []func() error{
		func() error { _, err := r.MetaFingerprint(); return err },
		func() error { _, err := r.MetaDomain(); return err },
		func() error { _, err := r.MetaJobID(); return err },
		func() error { _, err := r.MetaScore(); return err },
		func() error { _, err := r.MetaDepth(); return err },
		func() error { _, err := r.MetaState(); return err },
	} {
		if err := f(); !errors.Is(err, ErrNoMeta) {
			t.Errorf("absent key: err = %v, want ErrNoMeta", err)
		}
	}
	fp := Fingerprint{0x89, 0xe6, 0xa0, 0x64, 0x9e, 0x06, 0xd8, 0x33, 0x70, 0xcd, 0xf2, 0xcb, 0xfb, 0x05, 0xf3, 0x63, 0x93, 0x4a, 0x8d, 0x0c}
	r.SetMetaFingerprint(fp)
	r.SetMetaJobID(7)
	r.SetMetaDomain(MetaDomain{Netloc: "example.com", Name: "example.com", Scheme: "http", SLD: "example", TLD: "com", Subdomain: ""})
	r.SetMetaScore(0.5)
	r.SetMetaDepth(3)
	r.SetMetaState(Queued)

	if v, _ := r.Meta.Get("fingerprint"); string(v.([]byte)) != "89e6a0649e06d83370cdf2cbfb05f363934a8d0c" {
		t.Errorf("fingerprint on the wire = %v", v)
	}
	if got, err := r.MetaFingerprint(); err != nil || !got.Equal(fp) {
		t.Errorf("MetaFingerprint = %v, %v", got, err)
	}
	if got, err := r.MetaJobID(); err != nil || got != 7 {
		t.Errorf("MetaJobID = %v, %v", got, err)
	}
	if got, err := r.MetaScore(); err != nil || got != 0.5 {
		t.Errorf("MetaScore = %v, %v", got, err)
	}
	if got, err := r.MetaDepth(); err != nil || got != 3 {
		t.Errorf("MetaDepth = %v, %v", got, err)
	}
	if got, err := r.MetaState(); err != nil || got != Queued {
		t.Errorf("MetaState = %v, %v", got, err)
	}
	d, err := r.MetaDomain()
	if err != nil || d.Name != "example.com" || d.Fingerprint != "" {
		t.Errorf("MetaDomain = %+v, %v", d, err)
	}
	d.Fingerprint = "abcd"
	r.SetMetaDomain(d)
	dm, _ := r.Meta.Get("domain")
	var keys []string
	for _, e := range dm.(Map) {
		keys = append(keys, string(e.Key.([]byte)))
		if _, ok := e.Value.([]byte); !ok {
			t.Errorf("domain %s value is %T, want bin", e.Key, e.Value)
		}
	}
	if want := []string{"netloc", "name", "scheme", "sld", "tld", "subdomain", "fingerprint"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("domain keys = %v, want %v", keys, want)
	}
	// Keys keep their first position: scrapy_meta stays first.
	if k, ok := r.Meta[0].Key.(string); !ok || k != "scrapy_meta" {
		t.Errorf("first key = %v", r.Meta[0].Key)
	}
	// Setting again replaces in place.
	n := len(r.Meta)
	r.SetMetaJobID(8)
	if len(r.Meta) != n {
		t.Errorf("SetMetaJobID appended a second jid")
	}
}

func TestMetaAccessorsWrongTypes(t *testing.T) {
	for _, tc := range []struct {
		key string
		v   Value
		get func(*Request) error
	}{
		{"fingerprint", int64(3), func(r *Request) error { _, err := r.MetaFingerprint(); return err }},
		{"fingerprint", []byte("zz"), func(r *Request) error { _, err := r.MetaFingerprint(); return err }},
		{"domain", []byte("x"), func(r *Request) error { _, err := r.MetaDomain(); return err }},
		{"domain", Map{{Key: []byte("name"), Value: int64(1)}}, func(r *Request) error { _, err := r.MetaDomain(); return err }},
		{"jid", "7", func(r *Request) error { _, err := r.MetaJobID(); return err }},
		{"jid", uint64(1 << 63), func(r *Request) error { _, err := r.MetaJobID(); return err }},
		{"score", []byte("1"), func(r *Request) error { _, err := r.MetaScore(); return err }},
		{"state", int64(9), func(r *Request) error { _, err := r.MetaState(); return err }},
		{"state", int64(-1), func(r *Request) error { _, err := r.MetaState(); return err }},
	} {
		r := &Request{Meta: Map{{Key: []byte(tc.key), Value: tc.v}}}
		err := tc.get(r)
		if err == nil || errors.Is(err, ErrNoMeta) {
			t.Errorf("%s = %#v: err = %v, want a type error", tc.key, tc.v, err)
		}
	}
	r := &Request{Meta: Map{{Key: []byte("score"), Value: int64(1)}}}
	if s, err := r.MetaScore(); err != nil || s != 1 {
		t.Errorf("int score: %v, %v", s, err)
	}
}
