package spider

import (
	"errors"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/frontiercrawl/frontier/spider/robots"
)

// robotsMaxBytes is how much of a robots.txt is read (RFC 9309 asks for at least 500 KiB).
const robotsMaxBytes = robots.MaxSize

// robotsEntry is the verdict for one origin. Its fields are written once, before ready is closed.
type robotsEntry struct {
	ready   chan struct{}
	rules   *robots.Rules
	status  int
	err     error // a named network error: every URL of the origin is reported with it until expires
	expires time.Time
}

// robotsCache holds robots.txt verdicts by origin, at most size of them (least recently used go first).
type robotsCache struct {
	mu  sync.Mutex
	lru *lru.Cache[string, *robotsEntry]
}

func newRobotsCache(size int) *robotsCache {
	c, err := lru.New[string, *robotsEntry](size)
	if err != nil {
		panic(err) // size > 0 is checked by Config.Validate
	}
	return &robotsCache{lru: c}
}

// get returns the entry of key. fetch is true when the caller must fetch robots.txt into the (new) entry and
// then call publish or abandon; otherwise the caller waits on e.ready.
func (c *robotsCache) get(key string) (e *robotsEntry, fetch bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.lru.Get(key); ok {
		select {
		case <-e.ready:
			if time.Now().Before(e.expires) {
				return e, false
			}
		default:
			return e, false // being fetched
		}
	}
	e = &robotsEntry{ready: make(chan struct{})}
	c.lru.Add(key, e)
	return e, true
}

// peek returns the ready, unexpired entry of key, or nil.
func (c *robotsCache) peek(key string) *robotsEntry {
	e, ok := c.lru.Peek(key)
	if !ok {
		return nil
	}
	select {
	case <-e.ready:
		if time.Now().Before(e.expires) {
			return e
		}
	default:
	}
	return nil
}

// publish makes e's verdict visible to the goroutines waiting on it.
func (c *robotsCache) publish(_ string, e *robotsEntry) { close(e.ready) }

// errAbandoned is the verdict of a robots.txt fetch cut short by shutdown; nothing is reported with it.
var errAbandoned = errors.New("spider: robots.txt fetch abandoned")

// abandon drops e (its fetch was cut short) and wakes its waiters with errAbandoned.
func (c *robotsCache) abandon(key string, e *robotsEntry) {
	c.mu.Lock()
	if cur, ok := c.lru.Peek(key); ok && cur == e {
		c.lru.Remove(key)
	}
	c.mu.Unlock()
	e.rules, e.err = robots.DisallowAll, errAbandoned
	close(e.ready)
}
