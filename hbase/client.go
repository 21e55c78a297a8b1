package hbase

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
	"github.com/frontiercrawl/frontier/internal/outage"
)

// Client is a pool of connections to one Thrift2 gateway. It is safe for concurrent use; each call borrows a
// connection, so at most Config.PoolSize calls are in flight. The caller that made it closes it, after the
// stores built on it are no longer used.
type Client struct {
	cfg  Config
	log  *slog.Logger
	m    *metrics
	dial func(ctx context.Context) (*conn, error)

	slots  chan struct{} // one token per connection that may exist
	idle   chan *conn
	outage *outage.Tracker

	mu struct {
		sync.Mutex
		closed bool
	}
}

// conn is one gateway connection. nc is nil for in-process services (tests).
type conn struct {
	svc thrift2.THBaseService
	nc  net.Conn
}

func (c *conn) close() {
	if c.nc != nil {
		c.nc.Close()
	}
}

// ErrClosed is returned by calls on a closed Client.
var ErrClosed = errors.New("hbase: client closed")

// Error is a failed call to the gateway. It names the operation and the gateway's address.
type Error struct {
	Op        string // e.g. "getMultiple frontier_states"
	Addr      string
	Err       error
	Retryable bool // the call may succeed if tried again later (see IsRetryable)
	Tries     int  // attempts made, when the retries ran out
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("hbase: %s at %s: %s", e.Op, e.Addr, describe(e.Err))
	if e.Tries > 1 {
		msg = fmt.Sprintf("hbase: %s at %s: gave up after %d tries: %s", e.Op, e.Addr, e.Tries, describe(e.Err))
	}
	if h := hint(e.Op, e.Err); h != "" {
		msg += " (" + h + ")"
	}
	return msg
}

// hint names the fix for the errors that retrying cannot fix and whose message does not say what to do.
func hint(op string, err error) string {
	if missingTable(op, err) {
		return "the table does not exist: create the schema with deploy/hbase-schema.sh or frontierctl schema"
	}
	if notThrift(err) {
		return "this address does not speak Thrift: hbase.addr must be the Thrift2 gateway's port, with the gateway's transport and protocol"
	}
	return ""
}

// missingTable recognises HBase's TableNotFoundException, which the gateway passes on as a TIOError whose
// message is the exception's message (often just the table name, as in "TIOError: frontier_queue").
func missingTable(op string, err error) bool {
	var ioe *thrift2.TIOError
	if !errors.As(err, &ioe) {
		return false
	}
	msg := ioe.GetMessage()
	if strings.Contains(msg, "TableNotFoundException") {
		return true
	}
	_, table, ok := strings.Cut(op, " ")
	return ok && table != "" && (msg == table || strings.TrimPrefix(table, "default:") == msg)
}

// notThrift recognises an answer that is not Thrift at all: a framed transport reading an HTTP reply sees the
// frame size 1213486160 ("HTTP"), a binary protocol a bad version.
func notThrift(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	if strings.Contains(msg, "Incorrect frame size") {
		return true
	}
	var te thrift.TTransportException // satisfies TProtocolException too, with other type ids
	if errors.As(err, &te) {
		return false
	}
	var pe thrift.TProtocolException
	return errors.As(err, &pe) && pe.TypeId() == thrift.BAD_VERSION
}

// describe spells out the exceptions the gateway returns (the generated types print pointers).
func describe(err error) string {
	var ioe *thrift2.TIOError
	if errors.As(err, &ioe) {
		return "TIOError: " + ioe.GetMessage()
	}
	var ia *thrift2.TIllegalArgument
	if errors.As(err, &ia) {
		return "TIllegalArgument: " + ia.GetMessage()
	}
	return err.Error()
}
func (e *Error) Unwrap() error { return e.Err }

// IsRetryable reports whether err is a transient failure of HBase or of the path to it (gateway unreachable,
// connection reset, region moving or opening, server starting): the same call may succeed later.
func IsRetryable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Retryable
	}
	retry, _ := classify(err)
	return retry
}

// New returns a Client for the gateway at cfg.Addr and checks that it answers, so a wrong address fails at
// start with an error naming it. log and reg may be nil.
func New(ctx context.Context, cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := newClient(cfg, log, reg, func(ctx context.Context) (*conn, error) { return dialConn(ctx, cfg) })
	// A gateway that is not up yet is waited for (up to StartupWait), so the start order does not matter.
	sctx, cancel := context.WithTimeout(ctx, cfg.StartupWait)
	defer cancel()
	if err := c.do(sctx, "ping", true, func(ctx context.Context, s thrift2.THBaseService) error {
		_, err := s.GetThriftServerType(ctx)
		return err
	}); err != nil {
		c.Close()
		if ctx.Err() == nil && sctx.Err() != nil {
			return nil, fmt.Errorf("hbase: the Thrift2 gateway at %s did not answer within hbase.startup_wait (%v): %w", cfg.Addr, cfg.StartupWait, err)
		}
		return nil, err
	}
	return c, nil
}

// newClient builds a Client over any dial function (tests pass an in-process fake).
func newClient(cfg Config, log *slog.Logger, reg prometheus.Registerer, dial func(context.Context) (*conn, error)) *Client {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := newMetrics(reg)
	tracker := outage.NewTracker("HBase (Thrift2 gateway at "+cfg.Addr+")", log)
	tracker.OnRecover = func(d time.Duration) { m.waited.Add(d.Seconds()) }
	tracker.OnChange = func(down bool) {
		if down {
			m.down.Set(1)
		} else {
			m.down.Set(0)
		}
	}
	c := &Client{
		cfg:    cfg,
		log:    log,
		m:      m,
		dial:   dial,
		slots:  make(chan struct{}, cfg.PoolSize),
		idle:   make(chan *conn, cfg.PoolSize),
		outage: tracker,
	}
	return c
}

// Unreachable returns nil while HBase answers, and otherwise an error saying since when calls have been
// retried and why (for a readiness probe).
func (c *Client) Unreachable() error { return c.outage.Err() }

// Config returns the configuration the client was made with.
func (c *Client) Config() Config { return c.cfg }

// Close closes the idle connections; connections in use close when their call returns.
func (c *Client) Close() error {
	c.mu.Lock()
	c.mu.closed = true
	c.mu.Unlock()
	for {
		select {
		case cn := <-c.idle:
			cn.close()
			<-c.slots
		default:
			return nil
		}
	}
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.closed
}

// acquire returns an idle connection or dials a new one if the pool has room.
func (c *Client) acquire(ctx context.Context) (*conn, error) {
	select {
	case cn := <-c.idle:
		return cn, nil
	default:
	}
	select {
	case cn := <-c.idle:
		return cn, nil
	case c.slots <- struct{}{}:
		cn, err := c.dial(ctx)
		if err != nil {
			<-c.slots
			return nil, err
		}
		return cn, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Client) release(cn *conn, broken bool) {
	if broken || c.isClosed() {
		cn.close()
		<-c.slots
		return
	}
	c.idle <- cn
}

// do runs fn on a pooled connection, retrying retryable failures with backoff. A call that is not idempotent
// (an increment) is retried only when it cannot have reached the server (the connection was not made).
func (c *Client) do(ctx context.Context, op string, idempotent bool, fn func(context.Context, thrift2.THBaseService) error) error {
	return c.call(ctx, op, idempotent, false, fn)
}

// doFenced is do for a write made for partitions this process owns: the fence ctx carries (bus.CheckFence)
// is asked right before every attempt, so a process that lost the partitions while it was stopped past its
// session, or while it waited out an outage between two attempts, does not write over their new owner. The
// caller's own check before the batch (which saves the batch's reads) leaves the time between it and the
// request unguarded: a queue index read, a lock, a chunk waiting for a connection. This check narrows that
// to the instant between the answer and the request (docs/reliability.md, "Ownership is fenced"). A refused
// attempt returns an *Error matching bus.ErrFenced, not retried. A passing answer stands 200 ms in kafkabus, so a
// busy writer pays no request for it.
func (c *Client) doFenced(ctx context.Context, op string, fn func(context.Context, thrift2.THBaseService) error) error {
	return c.call(ctx, op, true, true, fn)
}

func (c *Client) call(ctx context.Context, op string, idempotent, fenced bool, fn func(context.Context, thrift2.THBaseService) error) error {
	bo := outage.NewBackoff(c.cfg.RetryBackoff, c.cfg.MaxRetryBackoff)
	start := time.Now()
	for attempt := 0; ; attempt++ {
		if c.isClosed() {
			return ErrClosed
		}
		if fenced {
			if err := bus.CheckFence(ctx); err != nil {
				c.m.observe(op, start, err)
				return &Error{Op: op, Addr: c.cfg.Addr, Err: err}
			}
		}
		err, sent := c.try(ctx, fn)
		if err == nil {
			c.m.observe(op, start, nil)
			c.outage.Succeeded()
			return nil
		}
		if ctx.Err() != nil {
			err = ctx.Err()
			c.m.observe(op, start, err)
			return &Error{Op: op, Addr: c.cfg.Addr, Err: err}
		}
		retry, _ := classify(err)
		out := c.cfg.Retries >= 0 && attempt >= c.cfg.Retries
		if !retry || out || (sent && !idempotent) {
			c.m.observe(op, start, err)
			e := &Error{Op: op, Addr: c.cfg.Addr, Err: err, Retryable: retry}
			if retry && out {
				e.Tries = attempt + 1
			}
			return e
		}
		c.m.retries.Inc()
		backoff := bo.Next()
		c.outage.Failed(fmt.Errorf("%s: %s", op, describe(err)), backoff)
		c.log.Debug("hbase call failed, retrying", "op", op, "addr", c.cfg.Addr, "attempt", attempt+1, "backoff", backoff, "err", err)
		if !outage.Sleep(ctx, backoff) {
			c.m.observe(op, start, ctx.Err())
			return &Error{Op: op, Addr: c.cfg.Addr, Err: fmt.Errorf("%w (while retrying after: %s)", ctx.Err(), describe(err)), Retryable: true}
		}
	}
}

// try makes one attempt; sent reports whether the request may have reached the server.
func (c *Client) try(ctx context.Context, fn func(context.Context, thrift2.THBaseService) error) (err error, sent bool) {
	cn, err := c.acquire(ctx)
	if err != nil {
		return err, false
	}
	if cn.nc != nil {
		cn.nc.SetDeadline(time.Now().Add(c.cfg.RequestTimeout))
		// A cancelled ctx interrupts a blocked read or write; the connection is then discarded.
		stop := context.AfterFunc(ctx, func() { cn.nc.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	err = fn(ctx, cn.svc)
	_, broken := classify(err)
	c.release(cn, broken || (err != nil && ctx.Err() != nil))
	return err, true
}

// classify says whether err is worth retrying and whether it leaves the connection unusable.
func classify(err error) (retry, broken bool) {
	if err == nil {
		return false, false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false, true
	}
	if notThrift(err) {
		return false, true
	}
	var ioe *thrift2.TIOError
	if errors.As(err, &ioe) {
		return ioe.GetCanRetry() || retryableServerError(ioe.GetMessage()), false
	}
	var ia *thrift2.TIllegalArgument
	if errors.As(err, &ia) {
		return false, false
	}
	var appErr thrift.TApplicationException
	if errors.As(err, &appErr) {
		// The gateway answered (the connection is in sync) with an exception it does not map to TIOError, such as
		// an IllegalArgumentException: trying again will not help.
		return false, false
	}
	var te thrift.TTransportException
	var ne net.Error
	var pe thrift.TProtocolException
	switch {
	case errors.As(err, &te), errors.As(err, &ne), errors.As(err, &pe),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true, true
	}
	return false, true
}

// retryableServerError recognises the HBase exceptions (passed through TIOError's message) that clear up by
// themselves: regions moving, splitting or opening, servers starting or busy, the gateway's HBase client timing out.
func retryableServerError(msg string) bool {
	for _, s := range []string{
		"NotServingRegionException", "RegionMovedException", "RegionOpeningException", "RegionTooBusyException",
		"ServerNotRunningYetException", "PleaseHoldException", "CallQueueTooBigException", "RetriesExhaustedException",
		"RetriesExhaustedWithDetailsException", "SocketTimeoutException", "CallTimeoutException", "ConnectException",
		"ConnectionClosingException", "ConnectionClosedException", "NoServerForRegionException", "MasterNotRunningException",
		"RegionServerStoppedException", "OperationTimeoutExceededException", "ClosedChannelException", "TimeoutIOException",
		"Connection refused",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// dialConn opens one gateway connection with the configured transport and protocol.
func dialConn(ctx context.Context, cfg Config) (*conn, error) {
	d := net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return newConn(nc, cfg), nil
}

// newConn speaks the configured transport and protocol over nc.
func newConn(nc net.Conn, cfg Config) *conn {
	tconf := &thrift.TConfiguration{MaxMessageSize: 1 << 30, MaxFrameSize: 1 << 30}
	var tr thrift.TTransport = netTransport{nc}
	switch cfg.Transport {
	case "framed":
		tr = thrift.NewTFramedTransportConf(tr, tconf)
	default:
		tr = thrift.NewTBufferedTransport(tr, 64<<10)
	}
	var iprot, oprot thrift.TProtocol
	switch cfg.Protocol {
	case "compact":
		iprot, oprot = thrift.NewTCompactProtocolConf(tr, tconf), thrift.NewTCompactProtocolConf(tr, tconf)
	default:
		iprot, oprot = newBinaryIn(tr, tconf), thrift.NewTBinaryProtocolConf(tr, tconf)
	}
	return &conn{svc: thrift2.NewTHBaseServiceClient(thrift.NewTStandardClient(iprot, oprot)), nc: nc}
}

// netTransport adapts a net.Conn to thrift.TTransport without thrift's TSocket, which resets the connection's
// deadline on every read and so would defeat ctx cancellation.
type netTransport struct{ net.Conn }

func (netTransport) Open() error                 { return nil }
func (netTransport) IsOpen() bool                { return true }
func (netTransport) Flush(context.Context) error { return nil }
func (netTransport) RemainingBytes() (n uint64)  { return ^uint64(0) }
