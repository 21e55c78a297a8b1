package urlfrontier

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/frontiercrawl/frontier/urlfrontier/urlfrontierpb"
)

// DefaultPutBatch is how many URLs one Backend.Put call takes at most unless ServerDeps.PutBatch says
// otherwise: a stream's items that arrived while the previous batch was written go in one write (one fsync),
// which is where PutURLs' throughput comes from.
const DefaultPutBatch = 1024

// Server is the gRPC URLFrontier service over a Backend.
type Server struct {
	pb.UnimplementedURLFrontierServer
	b     Backend
	log   *slog.Logger
	level *slog.LevelVar
	nodes []string
	m     *metrics
	batch int
}

// ServerDeps are what a Server is built from.
type ServerDeps struct {
	Backend Backend
	Logger  *slog.Logger
	// Level is the level SetLogLevel changes (nil: SetLogLevel is accepted and changes nothing).
	Level *slog.LevelVar
	// Nodes is what ListNodes answers: the addresses clients reach this service at.
	Nodes []string
	// Registerer receives the frontier_urlfrontier_* metrics; nil registers none.
	Registerer prometheus.Registerer
	// PutBatch is how many URLs of a stream one Backend.Put takes at most (0: DefaultPutBatch). A Gateway,
	// whose Put waits for the spider log's acknowledgement (a network round trip), wants more than a Store,
	// whose Put waits for an fsync.
	PutBatch int
}

// NewServer returns the service; register it with Register.
func NewServer(d ServerDeps) *Server {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{b: d.Backend, log: log, level: d.Level, nodes: d.Nodes, m: newMetrics(d.Registerer), batch: d.PutBatch}
	if s.batch <= 0 {
		s.batch = DefaultPutBatch
	}
	return s
}

// Register adds the service to g, counting the calls that fail.
func (s *Server) Register(g *grpc.Server) { pb.RegisterURLFrontierServer(g, s) }

// Interceptors count failed calls by RPC; pass them to grpc.NewServer.
func (s *Server) Interceptors() []grpc.ServerOption {
	count := func(method string, err error) {
		if err != nil && status.Code(err) != codes.Canceled {
			s.m.errors.WithLabelValues(path.Base(method)).Inc()
		}
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			resp, err := h(ctx, req)
			count(info.FullMethod, err)
			return resp, err
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			err := h(srv, ss)
			count(info.FullMethod, err)
			return err
		}),
	}
}

// rpcErr maps a backend error to a gRPC status.
func rpcErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Internal, err.Error())
}

func toMeta(m map[string]*pb.StringList) map[string][]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = v.GetValues()
	}
	return out
}

func fromMeta(m map[string][]string) map[string]*pb.StringList {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]*pb.StringList, len(m))
	for k, v := range m {
		out[k] = &pb.StringList{Values: v}
	}
	return out
}

func toInfo(i *pb.URLInfo) URLInfo {
	return URLInfo{URL: i.GetUrl(), Key: i.GetKey(), CrawlID: i.GetCrawlID(), Metadata: toMeta(i.GetMetadata())}
}

func fromInfo(i URLInfo) *pb.URLInfo {
	return &pb.URLInfo{Url: i.URL, Key: i.Key, CrawlID: i.CrawlID, Metadata: fromMeta(i.Metadata)}
}

func toPut(it *pb.URLItem) (Put, bool) {
	switch x := it.GetItem().(type) {
	case *pb.URLItem_Discovered:
		return Put{Info: toInfo(x.Discovered.GetInfo())}, true
	case *pb.URLItem_Known:
		return Put{Info: toInfo(x.Known.GetInfo()), Known: true, Refetch: int64(x.Known.GetRefetchableFromDate())}, true
	}
	return Put{}, false
}

// ListNodes implements the RPC.
func (s *Server) ListNodes(context.Context, *pb.Empty) (*pb.StringList, error) {
	return &pb.StringList{Values: s.nodes}, nil
}

// ListCrawls implements the RPC.
func (s *Server) ListCrawls(ctx context.Context, _ *pb.Local) (*pb.StringList, error) {
	cs, err := s.b.ListCrawls(ctx)
	return &pb.StringList{Values: cs}, rpcErr(err)
}

// DeleteCrawl implements the RPC.
func (s *Server) DeleteCrawl(ctx context.Context, m *pb.DeleteCrawlMessage) (*pb.Long, error) {
	n, err := s.b.DeleteCrawl(ctx, m.GetValue())
	s.log.Info("crawl deleted", "crawl", NormCrawl(m.GetValue()), "urls", n)
	return &pb.Long{Value: n}, rpcErr(err)
}

// ListQueues implements the RPC.
func (s *Server) ListQueues(ctx context.Context, p *pb.Pagination) (*pb.QueueList, error) {
	keys, total, err := s.b.ListQueues(ctx, p.GetCrawlID(), int(p.GetStart()), int(p.GetSize()), p.GetIncludeInactive())
	if err != nil {
		return nil, rpcErr(err)
	}
	return &pb.QueueList{Values: keys, Total: total, Start: p.GetStart(), Size: uint32(len(keys)), CrawlID: NormCrawl(p.GetCrawlID())}, nil
}

// GetURLs implements the RPC: the URLs are leased before the first is sent, so a client that goes away gets
// them again only once the lease ends.
func (s *Server) GetURLs(p *pb.GetParams, stream grpc.ServerStreamingServer[pb.URLInfo]) error {
	gp := GetParams{MaxURLsPerQueue: int(p.GetMaxUrlsPerQueue()), MaxQueues: int(p.GetMaxQueues()), Key: p.GetKey(),
		CrawlID: p.GetCrawlID(), AnyCrawl: p.GetAnyCrawlID() != nil, Lease: time.Duration(p.GetDelayRequestable()) * time.Second}
	urls, err := s.b.Get(stream.Context(), gp)
	if err != nil {
		return rpcErr(err)
	}
	s.m.leased.Add(float64(len(urls)))
	for _, u := range urls {
		if err := stream.Send(fromInfo(u)); err != nil {
			return err
		}
	}
	return nil
}

// recvLoop receives a client stream on its own goroutine, so that the items that arrive while a batch is
// written are there to form the next batch.
func recvLoop[T any](ctx context.Context, recv func() (*T, error), buffer int) (<-chan *T, *error) {
	ch := make(chan *T, buffer)
	var rerr error
	go func() {
		defer close(ch)
		for {
			m, err := recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					rerr = err
				}
				return
			}
			select {
			case ch <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, &rerr
}

// gather returns the next message and whatever else has already arrived, up to max messages of weight
// (weigh) in all; ok is false once the stream has ended.
func gather[T any](ch <-chan *T, max int, weigh func(*T) int) (batch []*T, ok bool) {
	m, ok := <-ch
	if !ok {
		return nil, false
	}
	batch = append(batch, m)
	w := weigh(m)
	for w < max {
		select {
		case m, ok := <-ch:
			if !ok {
				return batch, true
			}
			batch = append(batch, m)
			w += weigh(m)
		default:
			return batch, true
		}
	}
	return batch, true
}

// asyncPutter is a Backend whose Put can be kept in flight (Gateway.PutAsync): the call hands its work over
// in call order and returns; the function it returns waits for the outcome.
type asyncPutter interface {
	PutAsync(ctx context.Context, puts []Put) func() ([]Status, error)
}

// PutDepth is how many batches of one PutURLs stream are in flight at once over an asyncPutter (a Gateway):
// while one waits for the spider log's acknowledgement, the next ones are built and handed over.
const PutDepth = 4

// PutURLs implements the RPC: one ack per item, sent once the item is written (OK), rejected for good
// (SKIPPED: already known when discovered, or invalid) or not written (FAIL: send it again). Over a Gateway up
// to PutDepth batches are in flight; the acks keep the items' order.
func (s *Server) PutURLs(stream grpc.BidiStreamingServer[pb.URLItem, pb.AckMessage]) error {
	ctx := stream.Context()
	ch, rerr := recvLoop(ctx, stream.Recv, s.batch)
	one := func(*pb.URLItem) int { return 1 }
	start := func(puts []Put) func() ([]Status, error) {
		st, err := s.b.Put(ctx, puts)
		return func() ([]Status, error) { return st, err }
	}
	depth := 1
	if a, ok := s.b.(asyncPutter); ok {
		start = func(puts []Put) func() ([]Status, error) { return a.PutAsync(ctx, puts) }
		depth = PutDepth
	}
	type inFlight struct {
		batch []*pb.URLItem
		acks  []pb.AckMessage_Status
		puts  []Put
		idx   []int
		wait  func() ([]Status, error)
	}
	// The acks are sent by a goroutine of their own, in order, so the next batches are built meanwhile; the
	// channel's capacity bounds what is in flight.
	flights := make(chan *inFlight, depth-1)
	var sendErr error
	acked := make(chan struct{})
	go func() {
		defer close(acked)
		for f := range flights {
			st, err := f.wait()
			if sendErr != nil {
				continue // the stream is broken: drain what is in flight
			}
			if err != nil {
				s.log.Error("PutURLs: write failed; the batch is acknowledged FAIL", "urls", len(f.puts), "err", err)
			}
			for j, i := range f.idx {
				f.acks[i] = pb.AckMessage_FAIL
				if err == nil {
					f.acks[i] = pb.AckMessage_Status(st[j])
				}
				s.m.put(f.puts[j].Known, Status(f.acks[i]))
			}
			for i, it := range f.batch {
				id := it.GetID()
				if id == "" {
					p, _ := toPut(it)
					id = p.Info.URL
				}
				if err := stream.Send(&pb.AckMessage{ID: id, Status: f.acks[i]}); err != nil {
					sendErr = err
					break
				}
			}
		}
	}()
	for {
		batch, ok := gather(ch, s.batch, one)
		if !ok {
			break
		}
		f := &inFlight{batch: batch, acks: make([]pb.AckMessage_Status, len(batch)),
			puts: make([]Put, 0, len(batch)), idx: make([]int, 0, len(batch))}
		for i, it := range batch {
			p, valid := toPut(it)
			if !valid {
				s.log.Warn("PutURLs: item is neither discovered nor known", "id", it.GetID())
				f.acks[i] = pb.AckMessage_SKIPPED
				s.m.puts.WithLabelValues("none", "SKIPPED").Inc()
				continue
			}
			f.puts = append(f.puts, p)
			f.idx = append(f.idx, i)
		}
		f.wait = start(f.puts)
		flights <- f
	}
	close(flights)
	<-acked
	if sendErr != nil {
		return sendErr
	}
	return *rerr
}

// PutDiscovered implements the RPC: one BatchAck per batch, a status per URL in order. Over a Gateway, OK
// means "on the spider log" (reported to the crawl), not "new to the crawl" (Gateway.Put).
func (s *Server) PutDiscovered(stream grpc.BidiStreamingServer[pb.DiscoveredBatch, pb.BatchAck]) error {
	ctx := stream.Context()
	ch, rerr := recvLoop(ctx, stream.Recv, s.batch)
	weigh := func(b *pb.DiscoveredBatch) int { return len(b.GetItems()) }
	for {
		batches, ok := gather(ch, s.batch, weigh)
		if !ok {
			break
		}
		var puts []Put
		for _, b := range batches {
			for _, it := range b.GetItems() {
				puts = append(puts, Put{Info: toInfo(it)})
			}
		}
		st, err := s.b.Put(ctx, puts)
		if err != nil {
			s.log.Error("PutDiscovered: write failed; the batches are acknowledged FAIL", "urls", len(puts), "err", err)
		}
		k := 0
		for _, b := range batches {
			ack := &pb.BatchAck{ID: b.GetID(), Statuses: make([]pb.AckMessage_Status, len(b.GetItems()))}
			for i := range ack.Statuses {
				ack.Statuses[i] = pb.AckMessage_FAIL
				if err == nil {
					ack.Statuses[i] = pb.AckMessage_Status(st[k])
				}
				s.m.put(false, Status(ack.Statuses[i]))
				k++
			}
			if err := stream.Send(ack); err != nil {
				return err
			}
		}
	}
	return *rerr
}

// GetStats implements the RPC.
func (s *Server) GetStats(ctx context.Context, p *pb.QueueWithinCrawlParams) (*pb.Stats, error) {
	st, err := s.b.Stats(ctx, p.GetCrawlID(), p.GetKey())
	if err != nil {
		return nil, rpcErr(err)
	}
	return &pb.Stats{Size: st.Size, InProcess: uint32(st.InProcess), NumberOfQueues: st.NumberOfQueues, CrawlID: st.CrawlID,
		Counts: map[string]uint64{"completed": st.Completed, "active_queues": st.ActiveQueues}}, nil
}

// DeleteQueue implements the RPC.
func (s *Server) DeleteQueue(ctx context.Context, p *pb.QueueWithinCrawlParams) (*pb.Long, error) {
	n, err := s.b.DeleteQueue(ctx, p.GetCrawlID(), p.GetKey())
	return &pb.Long{Value: n}, rpcErr(err)
}

func invalid(err error) error {
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		return err
	}
	return status.Error(codes.InvalidArgument, err.Error())
}

// BlockQueueUntil implements the RPC.
func (s *Server) BlockQueueUntil(ctx context.Context, p *pb.BlockQueueParams) (*pb.Empty, error) {
	return &pb.Empty{}, invalid(s.b.BlockQueue(ctx, p.GetCrawlID(), p.GetKey(), int64(p.GetTime())))
}

// SetActive implements the RPC.
func (s *Server) SetActive(ctx context.Context, p *pb.Active) (*pb.Empty, error) {
	return &pb.Empty{}, rpcErr(s.b.SetActive(ctx, p.GetState()))
}

// GetActive implements the RPC.
func (s *Server) GetActive(ctx context.Context, _ *pb.Local) (*pb.Boolean, error) {
	a, err := s.b.Active(ctx)
	return &pb.Boolean{State: a}, rpcErr(err)
}

// SetDelay implements the RPC.
func (s *Server) SetDelay(ctx context.Context, p *pb.QueueDelayParams) (*pb.Empty, error) {
	return &pb.Empty{}, invalid(s.b.SetDelay(ctx, p.GetCrawlID(), p.GetKey(), int(p.GetDelayRequestable())))
}

// SetLogLevel implements the RPC. Frontier has one log level per process, so the package is only logged.
func (s *Server) SetLogLevel(_ context.Context, p *pb.LogLevelParams) (*pb.Empty, error) {
	var l slog.Level
	switch p.GetLevel() {
	case pb.LogLevelParams_TRACE, pb.LogLevelParams_DEBUG:
		l = slog.LevelDebug
	case pb.LogLevelParams_INFO:
		l = slog.LevelInfo
	case pb.LogLevelParams_WARN:
		l = slog.LevelWarn
	default:
		l = slog.LevelError
	}
	if s.level != nil {
		s.level.Set(l)
	}
	s.log.Warn("log level set", "level", l, "package", p.GetPackage())
	return &pb.Empty{}, nil
}

// SetCrawlLimit implements the RPC.
func (s *Server) SetCrawlLimit(ctx context.Context, p *pb.CrawlLimitParams) (*pb.Empty, error) {
	return &pb.Empty{}, invalid(s.b.SetCrawlLimit(ctx, p.GetCrawlID(), p.GetKey(), p.GetLimit()))
}

func toItem(st URLStatus) *pb.URLItem {
	return &pb.URLItem{Item: &pb.URLItem_Known{Known: &pb.KnownURLItem{Info: fromInfo(st.Info),
		RefetchableFromDate: uint64(max(st.Refetch, 0))}}, CreationDate: uint64(max(st.Created, 0))}
}

// GetURLStatus implements the RPC; an unknown URL is NOT_FOUND. Over a Gateway it answers for the crawl: a
// URL the gateway does not hold is looked up in the crawl's states and page metadata (Gateway.URLStatus).
func (s *Server) GetURLStatus(ctx context.Context, p *pb.URLStatusRequest) (*pb.URLItem, error) {
	st, err := s.b.URLStatus(ctx, p.GetCrawlID(), p.GetKey(), p.GetUrl())
	if err != nil {
		return nil, rpcErr(err)
	}
	return toItem(st), nil
}

// ListURLs implements the RPC. Over a Gateway it lists the URLs the gateway's store holds or held (its
// partition's, since it started on its directory), not every URL of the crawl (docs/urlfrontier.md).
func (s *Server) ListURLs(p *pb.ListUrlParams, stream grpc.ServerStreamingServer[pb.URLItem]) error {
	lp := ListParams{CrawlID: p.GetCrawlID(), Key: p.GetKey(), Filter: p.GetFilter(), IgnoreCase: p.GetIgnoreCase(),
		Start: int(p.GetStart()), Size: int(p.GetSize())}
	return rpcErr(s.b.ListURLs(stream.Context(), lp, func(st URLStatus) error { return stream.Send(toItem(st)) }))
}

// CountURLs implements the RPC: over a Gateway, of the gateway's store only, as ListURLs.
func (s *Server) CountURLs(ctx context.Context, p *pb.CountUrlParams) (*pb.Long, error) {
	n, err := s.b.CountURLs(ctx, ListParams{CrawlID: p.GetCrawlID(), Key: p.GetKey(), Filter: p.GetFilter(), IgnoreCase: p.GetIgnoreCase()})
	return &pb.Long{Value: n}, rpcErr(err)
}

// PurgeURLs implements the RPC.
func (s *Server) PurgeURLs(ctx context.Context, p *pb.PurgeUrlParams) (*pb.Long, error) {
	before := time.Now().Add(-time.Duration(p.GetDays()) * 24 * time.Hour).Unix()
	n, err := s.b.PurgeURLs(ctx, ListParams{CrawlID: p.GetCrawlID(), Key: p.GetKey()}, before)
	return &pb.Long{Value: n}, rpcErr(err)
}
