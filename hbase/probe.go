package hbase

import (
	"context"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
)

// Probe tells whether HBase answers through the Thrift2 gateway at cfg.Addr (with cfg's transport and
// protocol): the gateway, the master (listNamespaces is answered once the master has finished initialising,
// and must list the system namespace "hbase") and the region server holding hbase:meta (exists on a row of
// hbase:meta). It returns the namespaces. One connection, one try each, no retries: a probe reports what it
// sees now (frontierctl probe hbase, readiness scripts). Without a deadline on ctx it gives up after 10 s.
func Probe(ctx context.Context, cfg Config) ([]string, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	return probe(ctx, cfg, func(ctx context.Context) (*conn, error) {
		d := net.Dialer{Timeout: cfg.DialTimeout}
		nc, err := d.DialContext(ctx, "tcp", cfg.Addr)
		if err != nil {
			return nil, err
		}
		return newConn(&answerFirst{Conn: nc}, cfg), nil
	})
}

// answerFirst is a connection whose failed writes are reported only once nothing is left to read: a server
// that is not a Thrift gateway may answer and hang up before the probe's call is written, and its answer (an
// HTTP status line, say) says more about what is listening than the broken pipe does.
type answerFirst struct {
	net.Conn
	werr error
}

func (c *answerFirst) Write(p []byte) (int, error) {
	if c.werr != nil {
		return len(p), nil
	}
	if _, err := c.Conn.Write(p); err != nil {
		c.werr = err
	}
	return len(p), nil
}

func (c *answerFirst) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil && n == 0 && c.werr != nil {
		return 0, c.werr
	}
	return n, err
}

func probe(ctx context.Context, cfg Config, dial func(context.Context) (*conn, error)) ([]string, error) {
	c, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	if c.nc != nil {
		if dl, ok := ctx.Deadline(); ok {
			_ = c.nc.SetDeadline(dl)
		}
		stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	fail := func(op string, err error) error {
		if notThrift(err) {
			return fmt.Errorf("%s: %s (is the server %s %s Thrift?)", op, describe(err), cfg.Transport, cfg.Protocol)
		}
		return fmt.Errorf("%s: %s", op, describe(err))
	}
	namespaces, err := c.svc.ListNamespaces(ctx)
	if err != nil {
		return nil, fail("listNamespaces", err)
	}
	if !slices.Contains(namespaces, "hbase") {
		return namespaces, fmt.Errorf("listNamespaces: got %v, want the system namespace \"hbase\" among them", namespaces)
	}
	if _, err := c.svc.Exists(ctx, []byte("hbase:meta"), &thrift2.TGet{Row: []byte("frontier-probe")}); err != nil {
		return namespaces, fail("exists on hbase:meta", err)
	}
	return namespaces, nil
}
