package spider

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/frontiercrawl/frontier/spider/robots"
)

// robotsMaxBytes is how much of a robots.txt is read (RFC 9309 asks for at least 500 KiB).
const robotsMaxBytes = robots.MaxSize

// MetaKeyRobots is the meta key, on every fetched page (page_crawled), of the robots.txt verdict the fetch was
// allowed by (Frontier's key): "<status> <what> <when>", where status is robots.txt's HTTP status (0: it could
// not be fetched), what is "sha1:" and the first 12 hex digits of the SHA-1 of the bytes parsed (a 2xx),
// "allow-all" (4xx, too many redirects, or a robots.txt failing for longer than robots_give_up) or
// "disallow-all", and when the RFC 3339 time robots.txt was fetched. Absent when obey_robots is off.
const MetaKeyRobots = "frontier_robots"

// robotsEntry is the verdict for one origin. Its fields are written once, before ready is closed.
type robotsEntry struct {
	ready   chan struct{}
	rules   *robots.Rules
	status  int
	err     error // a named network error: every URL of the origin is reported with it until expires
	expires time.Time
	label   string // MetaKeyRobots
	// crawlDelay is the rules' Crawl-delay for the spider's agent, capped at Config.MaxCrawlDelay (0: none),
	// worked out once before the entry is published: delayFor reads it twice per fetch, and matching the
	// agent against the groups each time cost 0.10 of the ~0.5 CPU-s the politeness bookkeeping took on the
	// fast timing web.
	crawlDelay time.Duration

	// failures counts the fetches of robots.txt in a row that answered 5xx or failed, since failSince; an
	// entry that replaces an expired one carries them on.
	failures  int
	failSince time.Time
}

// robotsGiveUpDefault is Config.RobotsGiveUp's default: RFC 9309 §2.3.1.4's example of "a reasonably long
// period of time".
const robotsGiveUpDefault = 30 * 24 * time.Hour

// fail records one more failure in a row (a 5xx, or robots.txt unreachable) at now and sets the verdict:
// disallow all, fetched again after errTTL doubled for each failure in a row before this one, at most maxTTL;
// once the failures have lasted giveUp (0: never), robots.txt is treated as absent (allow all) as RFC 9309
// §2.3.1.4 permits, and fetched again on the same back-off. It reports whether it gave up.
func (e *robotsEntry) fail(now time.Time, errTTL, maxTTL, giveUp time.Duration) bool {
	if e.failures == 0 {
		e.failSince = now
	}
	e.failures++
	wait := errTTL
	for i := 1; i < e.failures && wait < maxTTL; i++ {
		wait *= 2
	}
	e.expires = now.Add(min(wait, max(maxTTL, errTTL)))
	if giveUp > 0 && now.Sub(e.failSince) >= giveUp {
		e.rules, e.err = robots.AllowAll, nil
		return true
	}
	e.rules = robots.DisallowAll
	return false
}

// succeed records an answer (2xx or 4xx): the failures in a row are over.
func (e *robotsEntry) succeed() { e.failures, e.failSince = 0, time.Time{} }

// setLabel writes e.label from the verdict; body is what was parsed (a 2xx).
func (e *robotsEntry) setLabel(fetched time.Time, body []byte) {
	what := "allow-all"
	switch {
	case e.rules == robots.DisallowAll:
		what = "disallow-all"
	case e.status >= 200 && e.status < 300:
		if len(body) > robots.MaxSize {
			body = body[:robots.MaxSize]
		}
		sum := sha1.Sum(body)
		what = "sha1:" + hex.EncodeToString(sum[:6])
	}
	e.label = strconv.Itoa(e.status) + " " + what + " " + fetched.UTC().Format(time.RFC3339)
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
	e, ok := c.lru.Get(key)
	if ok {
		select {
		case <-e.ready:
			if time.Now().Before(e.expires) {
				return e, false
			}
		default:
			return e, false // being fetched
		}
	}
	n := &robotsEntry{ready: make(chan struct{})}
	if e != nil {
		n.failures, n.failSince = e.failures, e.failSince // an expired entry's failures in a row go on
	}
	c.lru.Add(key, n)
	return n, true
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

// recordRobots sets MetaKeyRobots on it's request: the verdict of its origin's robots.txt it was allowed by.
func (s *Spider) recordRobots(it *item) {
	if !s.cfg.ObeyRobots {
		return
	}
	if e := s.robots.peek(origin(it.u)); e != nil && e.label != "" {
		it.req.Meta.Set(MetaKeyRobots, e.label)
	}
}
