package launch

import (
	"context"
	"errors"

	"github.com/frontiercrawl/frontier/bus/kafkabus"
	"github.com/frontiercrawl/frontier/codec"
	"github.com/frontiercrawl/frontier/hbase"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/internal/cli"
)

// conns are the dependencies the cluster roles share, opened by connect.
type conns struct {
	id    identity.Identifier
	codec codec.Codec
	bus   *kafkabus.Bus
	hbase *hbase.Client // nil unless connect was asked for it
}

// connect opens what a cluster role connects to, the same way for every role: the identity layer and the
// codec, the Kafka bus with client id clientID and, withHBase, the HBase client. /readyz reports the role as starting until the role
// clears "startup", and checks each connection from then on. close closes what was opened, HBase first.
func connect(ctx context.Context, env cli.Env, clientID string, withHBase bool) (c conns, close func(), err error) {
	cfg := env.Config
	env.Health.Set("startup", errors.New("connecting to the dependencies"))
	if c.id, err = cfg.Identity.New(); err != nil {
		return c, nil, err
	}
	if c.codec, err = codec.New(cfg.Codec); err != nil {
		return c, nil, err
	}
	if c.bus, err = kafkabus.New(cfg.KafkaBus(clientID), env.Logger, env.Registry); err != nil {
		return c, nil, err
	}
	env.Health.Add("kafka", c.bus.Unreachable)
	if !withHBase {
		return c, func() { c.bus.Close() }, nil
	}
	if c.hbase, err = hbase.New(ctx, cfg.HBase, env.Logger, env.Registry); err != nil {
		c.bus.Close()
		return c, nil, err
	}
	env.Health.Add("hbase", c.hbase.Unreachable)
	return c, func() { c.hbase.Close(); c.bus.Close() }, nil
}
