package spider

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeCodec stands in for package codec: a feed request is its URL as bytes ("!" makes it undecodable; a
// suffix " retry_times=N" sets that meta, as the strategy worker does on a retry), and
// an encoded message is an id under which the message object is kept.
type fakeCodec struct {
	mu   sync.Mutex
	msgs []frontier.Message
}

func (c *fakeCodec) EncodeMessage(m frontier.Message) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, m)
	return binary.AppendUvarint(nil, uint64(len(c.msgs)-1)), nil
}

func (c *fakeCodec) DecodeRequest(b []byte) (*frontier.Request, error) {
	if strings.HasPrefix(string(b), "!") {
		return nil, errors.New("fake codec: undecodable")
	}
	u, attempt, ok := strings.Cut(string(b), " retry_times=")
	r := &frontier.Request{URL: u}
	if ok {
		n, err := strconv.ParseInt(attempt, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("fake codec: retry_times %q: %w", attempt, err)
		}
		r.Meta.Set(MetaKeyRetryTimes, n)
	}
	return r, nil
}

func (c *fakeCodec) message(b []byte) frontier.Message {
	id, _ := binary.Uvarint(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.msgs[id]
}

// fakeFeed is one feed partition with a committed position that survives consumers, like a Kafka group.
type fakeFeed struct {
	mu        sync.Mutex
	msgs      []bus.Message
	committed int64 // next offset to read after a restart
	wake      chan struct{}
}

func newFeed(urls ...string) *fakeFeed {
	f := &fakeFeed{wake: make(chan struct{})}
	f.add(urls...)
	return f
}

func (f *fakeFeed) add(urls ...string) {
	f.mu.Lock()
	for _, u := range urls {
		f.msgs = append(f.msgs, bus.Message{Key: []byte("k"), Value: []byte(u), Offset: int64(len(f.msgs))})
	}
	close(f.wake)
	f.wake = make(chan struct{})
	f.mu.Unlock()
}

func (f *fakeFeed) Committed() int64 { f.mu.Lock(); defer f.mu.Unlock(); return f.committed }

// consumer opens a consumer that starts at the committed position.
func (f *fakeFeed) consumer() *fakeConsumer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &fakeConsumer{f: f, pos: f.committed}
}

type fakeConsumer struct {
	f   *fakeFeed
	pos int64
}

func (c *fakeConsumer) Fetch(ctx context.Context, max int) ([]bus.Message, error) {
	for {
		c.f.mu.Lock()
		if c.pos < int64(len(c.f.msgs)) {
			end := min(int64(len(c.f.msgs)), c.pos+int64(max))
			out := append([]bus.Message(nil), c.f.msgs[c.pos:end]...)
			c.pos = end
			c.f.mu.Unlock()
			return out, nil
		}
		wake := c.f.wake
		c.f.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wake:
		}
	}
}

func (c *fakeConsumer) Commit(_ context.Context, msgs []bus.Message) error {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	for _, m := range msgs {
		if m.Offset+1 > c.f.committed {
			c.f.committed = m.Offset + 1
		}
	}
	return nil
}

func (c *fakeConsumer) Close() error { return nil }

// fakeLog records what the spider sends; fail makes the next n sends fail.
type fakeLog struct {
	codec *fakeCodec
	mu    sync.Mutex
	msgs  []bus.Message
	fail  int
	sent  chan struct{}
}

func newLog(c *fakeCodec) *fakeLog { return &fakeLog{codec: c, sent: make(chan struct{}, 1)} }

func (l *fakeLog) Send(ctx context.Context, msgs ...bus.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail > 0 {
		l.fail--
		return fmt.Errorf("fake log: injected failure")
	}
	l.msgs = append(l.msgs, msgs...)
	select {
	case l.sent <- struct{}{}:
	default:
	}
	return nil
}

func (l *fakeLog) Close() error { return nil }

// record is one decoded spider-log message with its key.
type record struct {
	key string
	msg frontier.Message
}

func (l *fakeLog) records() []record {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]record, len(l.msgs))
	for i, m := range l.msgs {
		out[i] = record{string(m.Key), l.codec.message(m.Value)}
	}
	return out
}

// outcomes maps each reported feed URL to its page_crawled or request_error (the first, for URLs reported
// under their own request; extra page_crawled for other hosts of a redirect chain are skipped).
func outcomes(recs []record) map[string]frontier.Message {
	out := map[string]frontier.Message{}
	for _, r := range recs {
		switch m := r.msg.(type) {
		case *frontier.PageCrawled:
			if v, ok := m.Response.Request.Meta.Get(MetaKeyRedirectURLs); ok {
				if chain := v.([]frontier.Value); len(chain) > 0 && chain[0].(string) != m.Response.URL {
					continue // the copy sent to another host of a redirect chain
				}
			}
			if _, ok := out[m.Response.URL]; !ok {
				out[m.Response.URL] = m
			}
		case *frontier.RequestError:
			out[m.Request.URL] = m
		}
	}
	return out
}
