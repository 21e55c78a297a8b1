package frontier

import (
	"reflect"
	"testing"
)

func TestMapKeepsOrderAndKeyKinds(t *testing.T) {
	var m Map
	m.Set("fingerprint", []byte("aa"))
	m = append(m, Entry{Key: "scrapy_meta", Value: Map{}}) // a str key, as Scrapy's meta has
	m.Set("jid", int64(0))
	m.Set("fingerprint", []byte("bb")) // replaced in place, not moved

	if v, ok := m.Get("scrapy_meta"); !ok || !reflect.DeepEqual(v, Map{}) {
		t.Errorf("Get(str key) = %v, %v", v, ok)
	}
	if v, _ := m.Get("fingerprint"); string(v.([]byte)) != "bb" {
		t.Errorf("fingerprint = %q, want bb", v)
	}
	var keys []string
	for _, e := range m {
		switch k := e.Key.(type) {
		case []byte:
			keys = append(keys, "b:"+string(k))
		case string:
			keys = append(keys, "s:"+k)
		}
	}
	if want := []string{"b:fingerprint", "s:scrapy_meta", "b:jid"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
	m.Delete("scrapy_meta")
	if _, ok := m.Get("scrapy_meta"); ok || len(m) != 2 {
		t.Errorf("after Delete: %v", m)
	}
	if _, ok := Map(nil).Get("x"); ok {
		t.Error("nil map found a key")
	}
}

func TestCloneIsDeep(t *testing.T) {
	orig := Map{{Key: []byte("k"), Value: []Value{[]byte("v"), Map{{Key: "n", Value: Tuple{int64(1)}}}}}}
	c := orig.Clone()
	if !reflect.DeepEqual(orig, c) {
		t.Fatalf("clone differs: %v vs %v", orig, c)
	}
	c[0].Value.([]Value)[0].([]byte)[0] = 'X'
	c[0].Value.([]Value)[1].(Map)[0].Value.(Tuple)[0] = int64(2)
	if string(orig[0].Value.([]Value)[0].([]byte)) != "v" || orig[0].Value.([]Value)[1].(Map)[0].Value.(Tuple)[0] != int64(1) {
		t.Error("mutating the clone changed the original")
	}
}

func TestFingerprintHex(t *testing.T) {
	fp, err := ParseFingerprintHex([]byte("89e6a0649e06d83370cdf2cbfb05f363934a8d0c"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fp) != 20 || fp.Hex() != "89e6a0649e06d83370cdf2cbfb05f363934a8d0c" || !fp.Equal(fp) {
		t.Errorf("round trip gave %x", []byte(fp))
	}
	for _, bad := range []string{"zz", "abc"} {
		if _, err := ParseFingerprintHex([]byte(bad)); err == nil {
			t.Errorf("ParseFingerprintHex(%q) accepted", bad)
		}
	}
}

func TestStateNames(t *testing.T) {
	for s, want := range map[State]string{NotCrawled: "NOT_CRAWLED", Queued: "QUEUED", Crawled: "CRAWLED", Error: "ERROR", 7: "State(7)"} {
		if s.String() != want || s.Valid() != (s <= Error) {
			t.Errorf("%d: %q valid=%v", s, s.String(), s.Valid())
		}
	}
}

func TestHeadersGet(t *testing.T) {
	h := Headers{{Name: []byte("Content-Type"), Values: [][]byte{[]byte("text/html")}}}
	if got := h.Get("content-type"); string(got) != "text/html" {
		t.Errorf("Get = %q", got)
	}
	if h.Get("Location") != nil {
		t.Error("absent header found")
	}
}

func TestRequestHostname(t *testing.T) {
	r := &Request{URL: "http://WWW.Example.com:8080/x"}
	if got := r.Hostname(); got != "www.example.com" {
		t.Errorf("from URL: %q", got)
	}
	r.SetMetaDomain(MetaDomain{Name: "meta.example"})
	if got := r.Hostname(); got != "meta.example" {
		t.Errorf("from meta: %q", got)
	}
	if got := (&Request{URL: "::"}).Hostname(); got != "" {
		t.Errorf("unparsable URL: %q", got)
	}
}

func TestDontFilter(t *testing.T) {
	var r Request
	if r.DontFilter() {
		t.Fatal("zero request filters")
	}
	r.SetDontFilter(true)
	if !r.DontFilter() {
		t.Fatal("SetDontFilter(true) not seen")
	}
	r.SetDontFilter(false)
	if r.DontFilter() {
		t.Fatal("SetDontFilter(false) not seen")
	}
	r.Meta.Set(MetaKeyDontFilter, int64(1))
	if !r.DontFilter() {
		t.Fatal("int 1 is true in Python")
	}
}

// Hostname and MetaDomain read the domain map by one rule (Request.metaDomain); the table pins it for both.
func TestHostnameMetaDomainShapes(t *testing.T) {
	if metaDomainKeys[metaDomainNameIndex] != "name" {
		t.Fatalf("metaDomainNameIndex %d is %q", metaDomainNameIndex, metaDomainKeys[metaDomainNameIndex])
	}
	const u = "http://from.url/x"
	for _, tc := range []struct {
		name string
		dom  Value
		want string
	}{
		{"bin name", Map{{Key: []byte("netloc"), Value: []byte("n")}, {Key: []byte("name"), Value: []byte("meta.example")}}, "meta.example"},
		{"str key and value", Map{{Key: "name", Value: "meta.example"}}, "meta.example"},
		{"empty name", Map{{Key: []byte("name"), Value: []byte("")}}, "from.url"},
		{"nil name", Map{{Key: []byte("name"), Value: nil}}, "from.url"},
		{"no name", Map{{Key: []byte("netloc"), Value: []byte("n")}}, "from.url"},
		{"another field of the wrong type", Map{{Key: []byte("name"), Value: []byte("meta.example")}, {Key: []byte("tld"), Value: int64(1)}}, "from.url"},
		{"name of the wrong type", Map{{Key: []byte("name"), Value: int64(1)}}, "from.url"},
		{"unknown key of any type", Map{{Key: []byte("name"), Value: []byte("meta.example")}, {Key: []byte("x"), Value: int64(1)}}, "meta.example"},
		{"first entry of a key counts", Map{{Key: []byte("name"), Value: []byte("first")}, {Key: "name", Value: int64(2)}}, "first"},
		{"first entry nil, the second ignored", Map{{Key: []byte("name"), Value: nil}, {Key: "name", Value: []byte("second")}}, "from.url"},
		{"not a map", []byte("meta.example"), "from.url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Request{URL: u, Meta: Map{{Key: []byte(MetaKeyDomain), Value: tc.dom}}}
			if got := r.Hostname(); got != tc.want {
				t.Errorf("Hostname() = %q, want %q", got, tc.want)
			}
			// MetaDomain's name where it succeeds, else the URL's host.
			ref := "from.url"
			if d, err := r.MetaDomain(); err == nil && d.Name != "" {
				ref = d.Name
			}
			if ref != tc.want {
				t.Errorf("MetaDomain gives %q, the table %q", ref, tc.want)
			}
		})
	}
}

// BenchmarkHostname reads the host of a request whose meta carries a Frontera domain map (seven bin fields, as
// the spider writes it), the strategy worker's most frequent meta read; MetaDomain, which converts all seven
// fields, for comparison.
//
//	go test -run XXX -bench BenchmarkHostname -benchmem .
func BenchmarkHostname(b *testing.B) {
	r := &Request{URL: "http://www.example.com/a/b.html"}
	r.SetMetaDomain(MetaDomain{Netloc: "www.example.com", Name: "www.example.com", Scheme: "http", SLD: "example",
		TLD: "com", Subdomain: "www", Fingerprint: "0123456789abcdef0123456789abcdef01234567"})
	for _, bc := range []struct {
		name string
		f    func() string
	}{
		{"Hostname", r.Hostname},
		{"MetaDomain", func() string { d, _ := r.MetaDomain(); return d.Name }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if bc.f() != "www.example.com" {
					b.Fatal("wrong host")
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reads/s")
		})
	}
}
