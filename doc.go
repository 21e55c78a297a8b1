// Package frontier is the core model of Frontier, a streaming crawl frontier: the request, response and link
// types every role exchanges, the state of a URL, and the identity of a URL (canonical form and fingerprints).
//
// It sits at the bottom of the dependency graph (level L0 in STYLE.md): it imports only the standard library
// and golang.org/x/{net,text} (IDNA and Unicode normalisation, which the canonical form needs and the standard
// library lacks). It must never import another Frontier package.
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
