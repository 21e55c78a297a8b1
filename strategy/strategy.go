// Package strategy is how a crawl decides what to fetch next (docs/strategies.md). A Strategy sees the spider log's
// events (seeds, page_crawled, links_extracted, request_error) with the crawl state of every URL involved, and
// answers through a Context: new states, and requests to schedule with a score in [0, 1].
//
// Strategies are chosen by name in the configuration, from a Registry: each strategy/<name> package registers
// its factories in init(), and strategy/all blank-imports the built-ins (only the mains and the standalone mode
// import it). A factory decodes its own options strictly (DecodeOptions): an unknown option is an error.
//
// Every strategy also takes the common options (Common: page budgets per host and per registrable domain,
// per-host priorities, the seed file's scores): Registry.New takes them out of the options and applies them
// around the strategy, so a strategy written outside this module gets them too.
//
// Built-ins: bfs and dfs (strategy/depth, Frontera's BreadthFirst and DepthFirst), basic (strategy/basic,
// Frontera's BasicCrawlingStrategy), discovery (strategy/discovery: many domains shallowly first, a page budget
// per registrable domain) and revisit (strategy/revisit: fetch again after an interval that adapts to change).
// The worker that drives a strategy is strategyworker. docs/strategies.md shows how to write one and build it
// into the programs.
//
// The package does no I/O; it imports the frontier package and x/net/publicsuffix (level 1 in internal/archtest).
package strategy

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-viper/mapstructure/v2"

	"github.com/frontiercrawl/frontier"
)

// Context is the frontier as a strategy sees it while it handles one batch of events. The worker fills the
// states before calling the strategy and writes back what the strategy set. Not safe for concurrent use: a
// worker calls its strategy from one goroutine.
type Context interface {
	// State returns the crawl state of r's URL.
	State(r *frontier.Request) frontier.State
	// SetState records a new state for r's URL.
	SetState(r *frontier.Request, s frontier.State)
	// Schedule asks for r to be fetched, best scores first. A score outside [0, 1] (or NaN) is rejected with
	// ErrScore for r alone; the worker counts and logs it. A request whose meta carries a due time
	// (frontier.Request.SetMetaNotBefore) is not fetched before it.
	Schedule(r *frontier.Request, score float64) error
	// RevisitAt returns when r's URL is due to be fetched again, in Unix seconds (0: never), as stored beside
	// its state; SetRevisitAt records it. Both survive restarts (the state store keeps them).
	RevisitAt(r *frontier.Request) int64
	SetRevisitAt(r *frontier.Request, unix int64)
	// Count returns counter name of key (a host name or a registrable domain, see Domain); Add adds delta to
	// it and returns the new value. Counters live in the domain metadata store, so they survive restarts. They
	// are exact for the hosts of this worker's partition; a registrable domain whose hosts several workers own
	// is summed by the store, and each worker sees the others' additions at its next write.
	Count(name, key string) int64
	Add(name, key string, delta int64) int64
	// Now is the worker's clock (injected in tests).
	Now() time.Time
}

// Strategy handles the events of the spider log. A strategy instance serves one worker (one spider-log
// partition, so one set of hosts); it may keep per-host state in memory, bounded.
type Strategy interface {
	// Seeds handles injected seed requests.
	Seeds(c Context, seeds []*frontier.Request)
	// PageCrawled handles a fetched page; resp.Request carries the request's meta.
	PageCrawled(c Context, resp *frontier.Response)
	// LinksExtracted handles the links found on req's page (links of this worker's hosts only).
	LinksExtracted(c Context, req *frontier.Request, links []*frontier.Request)
	// RequestError handles a request that could not be fetched; errName is the spider's stable error name.
	RequestError(c Context, req *frontier.Request, errName string)
}

// Finisher is implemented by strategies that can declare the crawl finished (an optional capability,
// discovered by a type assertion). The worker stops cleanly once Finished returns true.
type Finisher interface {
	Finished() bool
}

// ErrScore is the error for a score outside [0, 1].
var ErrScore = errors.New("strategy: score outside [0, 1]")

// CheckScore returns an error wrapping ErrScore unless 0 <= score <= 1.
func CheckScore(score float64) error {
	if !(score >= 0 && score <= 1) { // also rejects NaN
		return fmt.Errorf("%w: %v", ErrScore, score)
	}
	return nil
}

// Factory builds a strategy from its options (the configuration's strategy.options map).
type Factory func(opts map[string]any) (Strategy, error)

// Registry maps names to factories. Safe for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	factories map[string]Factory
}

// NewRegistry returns an empty registry (tests use it to avoid the global one).
func NewRegistry() *Registry { return &Registry{factories: map[string]Factory{}} }

// Register adds a factory; registering a name twice is a programming error and panics.
func (r *Registry) Register(name string, f Factory) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.factories[name]; dup {
		panic(fmt.Sprintf("strategy: %q registered twice", name))
	}
	r.factories[name] = f
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.factories))
	for n := range r.factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New builds the strategy registered as name. An unknown name is an error that lists the known ones. The
// options every strategy takes (Common: budgets, priorities, seed scores) are taken out of opts and applied
// around the strategy; the factory decodes the rest.
func (r *Registry) New(name string, opts map[string]any) (Strategy, error) {
	r.mu.RLock()
	f, ok := r.factories[name]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("strategy: unknown strategy %q; known: %s", name, strings.Join(r.Names(), ", "))
	}
	common, own, err := splitCommon(opts)
	if err != nil {
		return nil, fmt.Errorf("strategy %s: %w", name, err)
	}
	s, err := f(own)
	if err != nil {
		return nil, fmt.Errorf("strategy %s: %w", name, err)
	}
	return Wrap(s, common), nil
}

// Default is the registry the built-in strategies register with.
var Default = NewRegistry()

// Register adds a factory to Default.
func Register(name string, f Factory) { Default.Register(name, f) }

// New builds a strategy from Default.
func New(name string, opts map[string]any) (Strategy, error) { return Default.New(name, opts) }

// OptionsFactory is the Factory of a strategy whose options are a struct O: it decodes them (DecodeOptions)
// over defaults() and builds the strategy from them with build.
func OptionsFactory[O any, S Strategy](defaults func() O, build func(O) (S, error)) Factory {
	return func(opts map[string]any) (Strategy, error) {
		o := defaults()
		if err := DecodeOptions(opts, &o); err != nil {
			return nil, err
		}
		s, err := build(o)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// DecodeOptions decodes opts into out (a pointer to a struct with mapstructure tags), strictly: an unknown
// option or a value of the wrong type is an error naming it. Durations may be given as strings ("10m").
func DecodeOptions(opts map[string]any, out any) error {
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:           out,
		ErrorUnused:      true,
		WeaklyTypedInput: true,
		DecodeHook:       mapstructure.StringToTimeDurationHookFunc(),
	})
	if err != nil {
		return err
	}
	if err := dec.Decode(opts); err != nil {
		return fmt.Errorf("options: %w", err)
	}
	return nil
}
