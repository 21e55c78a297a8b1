// Package frontier is the core model of Frontier, a streaming crawl frontier: the request, response and link
// types every role exchanges, the messages of the spider log and scoring log, the state of a URL, and the
// fingerprint type that names a URL. How a URL gets its fingerprint (canonical form, fingerprint functions,
// link resolution) is the identity layer, package identity.
//
// It sits at the bottom of the dependency graph: it imports only the standard library and must never import
// another Frontier package.
//
// # Values and meta
//
// Frontera's wire format is msgpack and keeps two distinctions Go's native types blur: bin versus str, and the
// insertion order of maps. Request.Meta is therefore an ordered Map of dynamic Values whose Go types carry those
// distinctions (string is str, []byte is bin; see Value). The codec package turns them into bytes that equal
// Frontera's, byte for byte.
//
// # Concurrency
//
// The types here are plain values. None is safe for concurrent mutation; share them read-only or copy them.
package frontier
