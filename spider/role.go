package spider

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier/bus"
)

// RoleDeps are what a Role is built from: a bus, and the Deps of the Spiders it runs without Feed and Log,
// which the role opens from the bus.
type RoleDeps struct {
	// Bus carries the spider feed and the spider log. Required.
	Bus bus.Bus
	Deps
}

// Role is one spider as a role of the crawl, built from a bus like the strategy worker and the DB worker
// (NewRole(cfg, RoleDeps{Bus, …})). It opens the spider log by stream name (bus.OpenProducer: keyed and
// partitioned as bus/topology.go declares), owns spider-feed partition Deps.Partition through bus.Own (a second
// spider started for the same partition waits as a standby and takes over when the first dies, at the
// group's committed offset), reads that partition in the spiders' consumer group, and runs a Spider for each
// term of ownership. The Spider is built afresh each time the partition is (re)gained; its metrics replace
// the previous one's.
type Role struct {
	cfg  Config
	deps RoleDeps
	reg  *reRegisterer
	log  bus.Producer // the spider log, opened by the first of InjectSeeds and Run
	// first is the Spider InjectSeeds built, which Run's first term runs (so what it counted stays counted).
	first     *Spider
	firstFeed *termFeed
}

// NewRole checks cfg and deps and returns a role; nothing is opened until InjectSeeds or Run.
func NewRole(cfg Config, deps RoleDeps) (*Role, error) {
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if deps.Bus == nil {
		errs = append(errs, errors.New("spider: RoleDeps.Bus is nil"))
	}
	if deps.Feed != nil || deps.Log != nil {
		errs = append(errs, errors.New("spider: RoleDeps.Feed and Log are opened from the bus; leave them nil"))
	}
	if deps.Codec == nil {
		errs = append(errs, errors.New("spider: Deps.Codec is nil"))
	}
	if b := deps.Bus; b != nil && (deps.Partition < 0 || deps.Partition >= b.Partitions(bus.SpiderFeed)) {
		n := b.Partitions(bus.SpiderFeed)
		errs = append(errs, fmt.Errorf("spider: partition %d is outside [0, %d) (the spider feed has %d partitions)", deps.Partition, n, n))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if deps.BodyBudget == nil { // one budget for every term's Spider: a term's bodies may outlive it briefly
		deps.BodyBudget = NewBodyBudget(cfg.BodyBudgetBytes)
	}
	return &Role{cfg: cfg, deps: deps, reg: &reRegisterer{Registerer: deps.Registerer}}, nil
}

// Owners is the ownership group of the spiders of feed partition p (bus.Owner).
func Owners(p int) string { return fmt.Sprintf("%s-owners-%d", bus.GroupSpiderFeed, p) }

// open opens the spider log once.
func (r *Role) open(ctx context.Context) error {
	if r.log != nil {
		return nil
	}
	log, err := bus.OpenProducer(ctx, r.deps.Bus, bus.SpiderLog)
	if err != nil {
		return err
	}
	r.log = log
	return nil
}

// spider builds the Spider of one term of ownership, reading feed.
func (r *Role) spider(feed *termFeed) (*Spider, error) {
	d := r.deps.Deps
	d.Feed, d.Log = feed, r.log
	if d.Registerer != nil {
		r.reg.reset()
		d.Registerer = r.reg
	}
	return New(r.cfg, d)
}

// Run runs the spider until ctx ends: it returns nil then, or the error that stopped it. Call it once; it
// closes the spider log when it returns.
func (r *Role) Run(ctx context.Context) error {
	if err := r.open(ctx); err != nil {
		return err
	}
	defer r.log.Close()
	p := r.deps.Partition
	return bus.Own(ctx, r.deps.Bus, bus.SpiderFeed, Owners(p), []int{p}, func(ctx context.Context, parts []int) error {
		feed, err := r.deps.Bus.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, parts)
		if err != nil {
			return err
		}
		defer feed.Close()
		s, tf := r.first, r.firstFeed
		r.first, r.firstFeed = nil, nil
		if s == nil {
			tf = &termFeed{}
			if s, err = r.spider(tf); err != nil {
				return err
			}
		}
		tf.Consumer = feed
		return s.Run(ctx)
	})
}

// InjectSeeds publishes the seeds of the file at path on the spider log, once per crawl, as
// Spider.InjectSeeds does, before Run (the standalone injects before anything runs). Run's first term runs
// the Spider that injected them.
func (r *Role) InjectSeeds(ctx context.Context, path string) error {
	if err := r.open(ctx); err != nil {
		return err
	}
	if r.first == nil {
		tf := &termFeed{}
		s, err := r.spider(tf)
		if err != nil {
			return err
		}
		r.first, r.firstFeed = s, tf
	}
	return r.first.InjectSeeds(ctx, path)
}

// termFeed is the feed of a Spider built before its term's consumer is opened: Run sets Consumer before the
// Spider runs. It forwards malformed-message reports to the consumer.
type termFeed struct{ bus.Consumer }

func (f *termFeed) Malformed(m bus.Message, err error) {
	if rep, ok := f.Consumer.(bus.MalformedReporter); ok {
		rep.Malformed(m, err)
	}
}

// InjectSeeds publishes the seeds of the file at path on deps.Bus's spider log as a spider with cfg and deps
// would (see Spider.InjectSeeds), without reading a feed: frontierctl seeds add uses it. No metrics are
// registered.
func InjectSeeds(ctx context.Context, cfg Config, deps RoleDeps, path string) error {
	return inject(ctx, cfg, deps, func(s *Spider) error { return s.InjectSeeds(ctx, path) })
}

// inject runs publish on a Spider with cfg and deps that reads no feed and sends to a producer of deps.Bus's
// spider log, with no metrics registered: InjectSeeds and InjectSitemaps (frontierctl seeds add).
func inject(ctx context.Context, cfg Config, deps RoleDeps, publish func(*Spider) error) error {
	if deps.Bus == nil {
		return errors.New("spider: RoleDeps.Bus is nil")
	}
	log, err := bus.OpenProducer(ctx, deps.Bus, bus.SpiderLog)
	if err != nil {
		return err
	}
	defer log.Close()
	d := deps.Deps
	d.Feed, d.Log, d.Registerer = noFeed{}, log, nil
	s, err := New(cfg, d)
	if err != nil {
		return err
	}
	return publish(s)
}

// noFeed is the feed of a spider that only injects seeds and never reads one.
type noFeed struct{}

func (noFeed) Fetch(ctx context.Context, _ int) ([]bus.Message, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (noFeed) Commit(context.Context, []bus.Message) error { return nil }
func (noFeed) Close() error                                { return nil }

// reRegisterer is a Registerer for a component that may be built more than once in a process: reset
// unregisters what the previous one registered, so the next one's collectors take their place.
type reRegisterer struct {
	prometheus.Registerer
	mu sync.Mutex
	cs []prometheus.Collector
}

func (r *reRegisterer) Register(c prometheus.Collector) error {
	if err := r.Registerer.Register(c); err != nil {
		return err
	}
	r.mu.Lock()
	r.cs = append(r.cs, c)
	r.mu.Unlock()
	return nil
}

func (r *reRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func (r *reRegisterer) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.cs {
		r.Registerer.Unregister(c)
	}
	r.cs = nil
}
