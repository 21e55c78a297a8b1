package hbase

import (
	"testing"

	"github.com/frontiercrawl/frontier/metadata"
	"github.com/frontiercrawl/frontier/metadata/metadatatest"
	"github.com/frontiercrawl/frontier/queue"
	"github.com/frontiercrawl/frontier/queue/queuetest"
	"github.com/frontiercrawl/frontier/state"
	"github.com/frontiercrawl/frontier/state/statetest"
)

// fakeConfig makes chunking and scan paging visible on small data.
func fakeConfig() Config {
	cfg := DefaultConfig()
	cfg.GetBatch, cfg.PutBatch, cfg.ScanBatch = 7, 5, 4
	return cfg
}

// fakeStores gives each test its own fake server; reopen builds a new Client on the same server, as a restarted
// process would.
type fakeStores struct {
	f   *fakeHBase
	cfg Config
}

func newFakeStores(t *testing.T) *fakeStores {
	s := &fakeStores{f: newFakeHBase(), cfg: fakeConfig()}
	return s
}

func (s *fakeStores) client(t *testing.T) *Client {
	c := newFakeClient(s.f, s.cfg)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestFakeConformance(t *testing.T) {
	// The suites run their subtests one after another; cur is the fake server of the running one.
	var cur *fakeStores
	fresh := func(t *testing.T) *Client { cur = newFakeStores(t); return cur.client(t) }
	t.Run("queue", func(t *testing.T) {
		queuetest.Run(t, func(t *testing.T) queue.Queue { return fresh(t).Queue() },
			queuetest.WithReopen(func(t *testing.T, q queue.Queue) queue.Queue {
				q.(*Queue).c.Close()
				return cur.client(t).Queue()
			}))
	})
	t.Run("state", func(t *testing.T) {
		statetest.Run(t, func(t *testing.T) state.Store { return fresh(t).States() },
			statetest.WithReopen(func(t *testing.T, st state.Store) state.Store {
				st.(*States).c.Close()
				return cur.client(t).States()
			}))
	})
	t.Run("metadata", func(t *testing.T) {
		metadatatest.Run(t, func(t *testing.T) metadata.Store { return fresh(t).Pages() },
			func(t *testing.T, p metadata.Store) metadata.Store { return cur.client(t).Pages() })
	})
	t.Run("domains", func(t *testing.T) {
		metadatatest.RunDomains(t, func(t *testing.T) metadata.Domains { return fresh(t).Domains() },
			func(t *testing.T, d metadata.Domains) metadata.Domains { return cur.client(t).Domains() })
	})
}
