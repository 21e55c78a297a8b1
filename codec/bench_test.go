package codec

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/internal/cputime"
)

// The benchmark messages. bench/codec_bench.py builds the same ones for Frontera's codec; keep them in step.
//
//	request i (0 ≤ i < 1024):
//	  url  = "https://www.host{i%64}.example.com/section/{i}/page.html?id={i}&ref=feed"
//	  meta = {b"fingerprint": hex(sha1(url)), b"domain": {b"netloc", b"name": host, b"scheme": b"https",
//	          b"sld": b"example", b"tld": b"com", b"subdomain": b"www.host{i%64}", b"fingerprint": hex(sha1(host))},
//	          b"jid": 1, b"score": 0.5 + i/4096, b"depth": i%5, b"scrapy_meta": {}}
//	le i: request i with links i+1 … i+10 (mod 1024)
//	pc i: response to request i: status 200, headers {b"Content-Type": [b"text/html; charset=utf-8"]}, no body
func benchRequest(i int) *frontier.Request {
	host := fmt.Sprintf("www.host%d.example.com", i%64)
	url := fmt.Sprintf("https://%s/section/%d/page.html?id=%d&ref=feed", host, i, i)
	fp := sha1.Sum([]byte(url))
	hfp := sha1.Sum([]byte(host))
	return &frontier.Request{URL: url, Method: "GET", Meta: frontier.Map{
		{Key: []byte("fingerprint"), Value: []byte(hex.EncodeToString(fp[:]))},
		{Key: []byte("domain"), Value: frontier.Map{
			{Key: []byte("netloc"), Value: []byte(host)},
			{Key: []byte("name"), Value: []byte(host)},
			{Key: []byte("scheme"), Value: []byte("https")},
			{Key: []byte("sld"), Value: []byte("example")},
			{Key: []byte("tld"), Value: []byte("com")},
			{Key: []byte("subdomain"), Value: []byte(fmt.Sprintf("www.host%d", i%64))},
			{Key: []byte("fingerprint"), Value: []byte(hex.EncodeToString(hfp[:]))},
		}},
		{Key: []byte("jid"), Value: int64(1)},
		{Key: []byte("score"), Value: 0.5 + float64(i)/4096},
		{Key: []byte("depth"), Value: int64(i % 5)},
		{Key: []byte("scrapy_meta"), Value: frontier.Map{}},
	}}
}

const nBench = 1024

func benchRequests() []*frontier.Request {
	rs := make([]*frontier.Request, nBench)
	for i := range rs {
		rs[i] = benchRequest(i)
	}
	return rs
}

func benchMessages(kind string) []frontier.Message {
	rs := benchRequests()
	ms := make([]frontier.Message, nBench)
	for i := range ms {
		switch kind {
		case "le":
			links := make([]*frontier.Request, 10)
			for j := range links {
				links[j] = rs[(i+1+j)%nBench]
			}
			ms[i] = &frontier.LinksExtracted{Request: rs[i], Links: links}
		case "pc":
			ms[i] = &frontier.PageCrawled{Response: &frontier.Response{URL: rs[i].URL, Status: 200, Request: rs[i],
				Headers: frontier.Headers{{Name: []byte("Content-Type"), Values: [][]byte{[]byte("text/html; charset=utf-8")}}}}}
		}
	}
	return ms
}

// report records msgs/s (wall time), msgs/cpu-s (process CPU time since cpu0, so a busy shared machine does not
// understate the cost per core) and B/msg.
func report(b *testing.B, bytes int, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	if cpu := cputime.Process() - cpu0; cpu > 0 && cpu0 > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "msgs/cpu-s")
	}
	b.ReportMetric(float64(bytes)/float64(b.N), "B/msg")
}

func BenchmarkEncodeRequest(b *testing.B) {
	for _, c := range []Codec{Msgpack{}, JSON{}} {
		b.Run(c.Name(), func(b *testing.B) {
			rs := benchRequests()
			var i, n int
			cpu0 := cputime.Process()
			for b.Loop() {
				p, err := c.EncodeRequest(rs[i%nBench])
				if err != nil {
					b.Fatal(err)
				}
				n += len(p)
				i++
			}
			report(b, n, cpu0)
		})
	}
}

// BenchmarkAppendRequest is the allocation-free path: one buffer reused for every request.
func BenchmarkAppendRequest(b *testing.B) {
	rs := benchRequests()
	var buf []byte
	var i, n int
	cpu0 := cputime.Process()
	for b.Loop() {
		var err error
		if buf, err = AppendRequest(buf[:0], rs[i%nBench]); err != nil {
			b.Fatal(err)
		}
		n += len(buf)
		i++
	}
	report(b, n, cpu0)
}

func BenchmarkDecodeRequest(b *testing.B) {
	for _, c := range []Codec{Msgpack{}, JSON{}} {
		b.Run(c.Name(), func(b *testing.B) {
			enc := make([][]byte, nBench)
			for i, r := range benchRequests() {
				enc[i], _ = c.EncodeRequest(r)
			}
			var i, n int
			cpu0 := cputime.Process()
			for b.Loop() {
				p := enc[i%nBench]
				if _, err := c.DecodeRequest(p); err != nil {
					b.Fatal(err)
				}
				n += len(p)
				i++
			}
			report(b, n, cpu0)
		})
	}
}

func BenchmarkEncodeMessage(b *testing.B) {
	for _, kind := range []string{"pc", "le"} {
		for _, c := range []Codec{Msgpack{}, JSON{}} {
			b.Run(kind+"/"+c.Name(), func(b *testing.B) {
				ms := benchMessages(kind)
				var i, n int
				cpu0 := cputime.Process()
				for b.Loop() {
					p, err := c.EncodeMessage(ms[i%nBench])
					if err != nil {
						b.Fatal(err)
					}
					n += len(p)
					i++
				}
				report(b, n, cpu0)
			})
		}
	}
}

func BenchmarkDecodeMessage(b *testing.B) {
	for _, kind := range []string{"pc", "le"} {
		for _, c := range []Codec{Msgpack{}, JSON{}} {
			b.Run(kind+"/"+c.Name(), func(b *testing.B) {
				enc := make([][]byte, nBench)
				for i, m := range benchMessages(kind) {
					enc[i], _ = c.EncodeMessage(m)
				}
				var i, n int
				cpu0 := cputime.Process()
				for b.Loop() {
					p := enc[i%nBench]
					if _, err := c.DecodeMessage(p); err != nil {
						b.Fatal(err)
					}
					n += len(p)
					i++
				}
				report(b, n, cpu0)
			})
		}
	}
}

// BenchmarkDecodeLinksMeta decodes links_extracted messages of 10 links whole, with the links' meta cut to
// the keys the DB worker's links role reads (DecodeMessageLinksMeta), and whole through one MsgpackDecoder
// ("decoder": the domain maps of the 64 hosts are shared across messages, as a strategy worker decodes).
//
//	go test -run XXX -bench BenchmarkDecodeLinksMeta ./codec/
func BenchmarkDecodeLinksMeta(b *testing.B) {
	enc := make([][]byte, nBench)
	for i, m := range benchMessages("le") {
		enc[i], _ = Msgpack{}.EncodeMessage(m)
	}
	keep := func(k []byte) bool {
		return string(k) == frontier.MetaKeyFingerprint || string(k) == frontier.MetaKeyDepth
	}
	dbSkim := Skim{LinksMeta: keep, Meta: keep, Headers: func([]byte) bool { return false }, Borrow: true}
	for _, mode := range []string{"whole", "links-meta", "decoder", "strategy-skim", "db-skim"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			dec := NewMsgpackDecoder()
			var i, n int
			cpu0 := cputime.Process()
			for b.Loop() {
				p := enc[i%nBench]
				var err error
				switch mode {
				case "whole":
					_, err = Msgpack{}.DecodeMessage(p)
				case "decoder":
					_, err = dec.DecodeMessage(p)
				case "strategy-skim": // the strategy worker's decode
					_, err = dec.DecodeMessageSkim(p, Skim{Borrow: true})
				case "db-skim": // the DB worker's links role's, near enough
					_, err = dec.DecodeMessageSkim(p, dbSkim)
				default:
					_, err = Msgpack{}.DecodeMessageLinksMeta(p, keep)
				}
				if err != nil {
					b.Fatal(err)
				}
				n += len(p)
				i++
			}
			report(b, n, cpu0)
		})
	}
}
