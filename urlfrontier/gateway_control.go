package urlfrontier

import "strings"

// Control is the run-time control state a Gateway obeys (control.State implements it; see package control,
// which the cluster's gateway follows as the spiders and the DB worker do: frontierctl pause, resume, block,
// unblock):
//   - Paused: GetURLs hands nothing out (as SetActive(false) does, but without storing it). The gateway keeps
//     reading the feed into its store and takes every put, so a paused crawl still drains to the point where
//     every lag is 0. A spider finishes the few requests it holds when paused; a gateway holds up to
//     GatewayConfig.MaxHeld URLs, so it holds them instead of handing them out.
//   - Blocked(host): the URLs of a blocked host or domain (a name blocks itself and every subdomain) are not
//     handed out; they stay in the gateway's store, due, and go out with the first GetURLs after the unblock.
//     A queue whose key names a blocked host is skipped whole; in a queue with a key of the client's own,
//     each URL's host decides. Nothing is dropped and nothing goes back to the crawl's queue: the store
//     survives restarts, so holding the URLs there is as safe as the DB worker's queue (which holds the
//     host's other URLs meanwhile: it dispatches none of a blocked host).
//
// URLs already leased when the command arrives stay leased; their reports are taken as usual.
type Control interface {
	Paused() bool
	Blocked(host string) bool
}

// holdFunc is the Store's hold test (Store.hold) for a gateway obeying c; nil when there is no control
// state. With key and u "" it reports whether the crawl is paused; with u "" whether the queue key names a
// blocked host or domain (the queue is skipped); with a URL of a queue that passed, whether that URL's host
// is blocked, which needs a look only when the host is not the key.
func holdFunc(c Control) func(key, u string) bool {
	if c == nil {
		return nil
	}
	return func(key, u string) bool {
		switch {
		case key == "" && u == "":
			return c.Paused()
		case u == "":
			return c.Blocked(strings.ToLower(key))
		case hostIs(u, key):
			return false // decided with the queue
		}
		h, err := HostKey(u)
		return err == nil && c.Blocked(h)
	}
}

// hostIs reports, without parsing the URL, whether u's host is key (scheme://key followed by a port, path,
// query, fragment or nothing), the common case of a queue keyed by its host.
func hostIs(u, key string) bool {
	i := strings.Index(u, "://")
	if i < 0 {
		return false
	}
	rest := u[i+3:]
	if len(rest) < len(key) || !strings.EqualFold(rest[:len(key)], key) {
		return false
	}
	if len(rest) == len(key) {
		return true
	}
	switch rest[len(key)] {
	case ':', '/', '?', '#':
		return true
	}
	return false
}
