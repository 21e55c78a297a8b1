package spider

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"
)

// A ResponseHandler sees every fetched page before its outcome is reported: here it prints what it got.
// Anything that extracts, stores or archives (the WARC writer) plugs in the same way.
func ExampleResponseHandler() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r) // no robots.txt: everything allowed
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<title>hello</title><a href="/a">a</a> <a href="b">b</a>`)
	}))
	defer site.Close()

	handler := HandlerFunc(func(_ context.Context, f *Fetched) error {
		fmt.Printf("%d %s, %d bytes, %d links\n", f.Status, f.ContentType, len(f.Body), len(f.Links))
		for _, l := range f.Links {
			fmt.Println(" ", l.URL[len(site.URL):], l.Text)
		}
		return nil
	})

	// The feed and the spider log are in-memory fakes here; cmd/spider passes Kafka or membus ones.
	codec := &fakeCodec{}
	feed, log := newFeed(site.URL+"/index.html"), newLog(codec)
	cfg := DefaultConfig()
	cfg.StateDir = ""
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- Run(ctx, cfg, Deps{Feed: feed.consumer(), Log: log, Codec: codec, Handler: handler})
	}()
	for len(outcomes(log.records())) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	for _, r := range log.records() {
		fmt.Println("reported:", r.msg.Name())
	}
	// Output:
	// 200 text/html, 56 bytes, 2 links
	//   /a a
	//   /b b
	// reported: page_crawled
	// reported: links_extracted
}
